package dev.gdsloader.bench;

import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.loader.dataset.Dataset;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * Expected checksums: CRC32C (RFC 3720, {@link java.util.zip.CRC32C}) of each column of each batch,
 * computed from the files with plain Java reads — independent of the loader's I/O paths, so a loader
 * bug cannot make both sides agree. Stateless.
 */
public final class Checksums {
    private Checksums() {
    }

    /**
     * @param dataset the dataset
     * @param plans the reads of each batch the loader will deliver ({@link BatchReads})
     * @return {@code crc[batch][column]}
     * @throws IOException if a shard cannot be read or is shorter than planned
     */
    public static long[][] expected(Dataset dataset, List<BatchReads> plans) throws IOException {
        List<Column> columns = dataset.columns();
        FileChannel[][] open = new FileChannel[columns.size()][];
        ByteBuffer buf = ByteBuffer.allocateDirect(4 << 20);
        try {
            long[][] out = new long[plans.size()][columns.size()];
            for (int b = 0; b < plans.size(); b++) {
                for (BatchReads.ColumnReads c : plans.get(b).columns()) {
                    CRC32C crc = new CRC32C();
                    for (BatchReads.Range p : c.ranges()) {
                        FileChannel ch = channel(open, columns, c.column(), p.shard());
                        for (long off = p.start(); off < p.end(); ) {
                            buf.clear().limit((int) Math.min(buf.capacity(), p.end() - off));
                            int n = ch.read(buf, off);
                            if (n <= 0) {
                                throw new IOException(columns.get(c.column()).shards().get(p.shard()).file()
                                        + ": ended at offset " + off + ", expected data up to " + p.end());
                            }
                            buf.flip();
                            crc.update(buf);
                            off += n;
                        }
                    }
                    out[b][c.column()] = crc.getValue();
                }
            }
            return out;
        } finally {
            for (FileChannel[] cs : open) {
                if (cs != null) {
                    for (FileChannel ch : cs) {
                        if (ch != null) {
                            ch.close();
                        }
                    }
                }
            }
        }
    }

    private static FileChannel channel(FileChannel[][] open, List<Column> columns, int c, int s) throws IOException {
        if (open[c] == null) {
            open[c] = new FileChannel[columns.get(c).shards().size()];
        }
        if (open[c][s] == null) {
            open[c][s] = FileChannel.open(columns.get(c).shards().get(s).file(), StandardOpenOption.READ);
        }
        return open[c][s];
    }
}
