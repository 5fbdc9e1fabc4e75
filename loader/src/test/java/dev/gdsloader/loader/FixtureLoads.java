package dev.gdsloader.loader;

import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.PinnedBuffer;
import dev.gdsloader.formats.HostDecodedRecords;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.path.ReadPath;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.List;

/**
 * Loads one column of one shard file (a real-writer fixture) through the loader, every batch in order, and gives back
 * its bytes as they arrived: from host memory on the HOST path, downloaded from device memory on GDS and BOUNCE.
 */
final class FixtureLoads {
    /** Records per batch: small, so that the 4+2 and 0+3 record batches of the Arrow fixtures are crossed. */
    static final int BATCH = 2;

    private FixtureLoads() {
    }

    /**
     * @param file a shard file
     * @param column the column (tensor, member, Arrow column; the file name's stem for {@code .npy}) to keep
     * @return the one-column dataset of that file
     * @throws IOException naming file and offset when the loader refuses the file or column
     */
    static Dataset open(Path file, String column) throws IOException {
        return Dataset.ofShards(file.getParent(), List.of(file), List.of(column));
    }

    /** @return true if a run of the dataset is decoded on the host (compressed Arrow body, deflated member) */
    static boolean hostDecoded(Dataset d) {
        return d.columns().stream().flatMap(c -> c.shards().stream()).anyMatch(HostDecodedRecords.class::isInstance);
    }

    /**
     * @param file a shard file
     * @param column the column to load
     * @param path HOST, BOUNCE, GDS or MAPPED
     * @return every record of the column in order, as the batches delivered them
     * @throws IOException if the file is refused or cannot be read
     */
    static byte[] load(Path file, String column, ReadPath path) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        try (GdsLoader loader = GdsLoader.builder(open(file, column)).batchSize(BATCH).path(path).build();
             CudaStream s = path == ReadPath.HOST ? null : CudaStream.create()) {
            for (Batch b : loader) {
                if (s == null) {
                    try (b) {
                        all.writeBytes(b.column(column).hostSegment().toArray(ValueLayout.JAVA_BYTE));
                    }
                } else {
                    b.awaitOn(s);
                    all.writeBytes(download(b.column(column), s));
                    b.release(s);
                }
            }
        }
        return all.toByteArray();
    }

    /**
     * @param v a column view in device memory
     * @param s the stream to copy on (synchronized before returning)
     * @return its bytes
     */
    static byte[] download(ColumnView v, CudaStream s) {
        try (PinnedBuffer host = PinnedBuffer.allocate(Math.max(1, v.bytes()))) {
            s.copyToHost(host, 0, v.deviceBuffer().orElseThrow(), v.deviceOffset(), v.bytes());
            s.synchronize();
            return host.segment().asSlice(0, v.bytes()).toArray(ValueLayout.JAVA_BYTE);
        }
    }
}
