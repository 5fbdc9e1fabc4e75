package dev.gdsloader.bench;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.loader.dataset.Dataset;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.List;
import jcuda.Pointer;
import jcuda.runtime.JCuda;
import jcuda.runtime.cudaMemcpyKind;

/**
 * What people write first, as the baseline of the benchmark: each batch read with buffered
 * {@code FileChannel} reads into a pageable Java {@code byte[]}, then a synchronous {@code cudaMemcpy} to the
 * GPU; one thread, nothing overlapped. Not thread-safe.
 */
public final class NaiveBaseline {
    private NaiveBaseline() {
    }

    /**
     * @param dataset the dataset
     * @param batchRecords records per batch
     * @return useful bytes per nanosecond (= GB/s) for one epoch
     * @throws IOException if a shard cannot be read
     */
    public static double gigabytesPerSecond(Dataset dataset, int batchRecords) throws IOException {
        Cuda.ensure();
        List<BatchReads> plans = BatchReads.sequential(dataset, batchRecords, false);
        long largest = plans.stream().mapToLong(BatchReads::bytes).max().orElse(1);
        List<Column> columns = dataset.columns();
        FileChannel[][] open = new FileChannel[columns.size()][];
        for (int c = 0; c < columns.size(); c++) {
            open[c] = new FileChannel[columns.get(c).shards().size()];
            for (int s = 0; s < open[c].length; s++) {
                open[c][s] = FileChannel.open(columns.get(c).shards().get(s).file(), StandardOpenOption.READ);
            }
        }
        byte[] heap = new byte[Math.toIntExact(largest)];
        try (DeviceBuffer dev = DeviceBuffer.allocate(Math.max(1, largest))) {
            long bytes = 0;
            long t0 = System.nanoTime();
            for (BatchReads p : plans) {
                int at = 0;
                for (BatchReads.ColumnReads c : p.columns()) {
                    for (BatchReads.Range piece : c.ranges()) {
                        ByteBuffer dst = ByteBuffer.wrap(heap, at, (int) piece.length());
                        for (long off = piece.start(); dst.hasRemaining(); ) {
                            int n = open[c.column()][piece.shard()].read(dst, off);
                            if (n < 0) {
                                throw new IOException(columns.get(c.column()).shards().get(piece.shard()).file()
                                        + ": ended at offset " + off);
                            }
                            off += n;
                        }
                        at += (int) piece.length();
                    }
                }
                Cuda.check(JCuda.cudaMemcpy(dev.pointer(0), Pointer.to(heap), at, cudaMemcpyKind.cudaMemcpyHostToDevice),
                        "cudaMemcpy");
                bytes += at;
            }
            return bytes / (double) (System.nanoTime() - t0);
        } finally {
            for (FileChannel[] cs : open) {
                for (FileChannel ch : cs) {
                    ch.close();
                }
            }
        }
    }
}
