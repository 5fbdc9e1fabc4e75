package dev.gdsloader.bench;

import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.ColumnView;
import dev.gdsloader.loader.HostReadback;
import java.util.zip.CRC32C;

/**
 * The benchmark's consumer: brings every column of every batch back to the host ({@link HostReadback})
 * and compares its CRC32C with the value computed from the file. Counts mismatches; not thread-safe.
 */
final class VerifyingConsumer implements AutoCloseable {
    private final long[][] expected;
    private final HostReadback readback;
    private long mismatches;
    private String firstMismatch;

    VerifyingConsumer(long[][] expected, long maxColumnBytes, boolean device) {
        this.expected = expected;
        this.readback = expected == null ? null : new HostReadback(maxColumnBytes, device);
    }

    void accept(Batch b) {
        if (expected == null) {
            b.close();
            return;
        }
        readback.await(b);
        for (int c = 0; c < b.columns().size(); c++) {
            ColumnView v = b.columns().get(c);
            CRC32C crc = new CRC32C();
            crc.update(readback.bytes(v).asByteBuffer());
            long want = expected[(int) b.index()][c];
            if (crc.getValue() != want) {
                mismatches++;
                if (firstMismatch == null) {
                    firstMismatch = "batch " + b.index() + " column '" + v.name() + "' (records " + b.firstRecord()
                            + ".." + (b.firstRecord() + b.records() - 1) + "): CRC32C " + Long.toHexString(crc.getValue())
                            + ", file has " + Long.toHexString(want);
                }
            }
        }
        readback.release(b);
    }

    String verdict() {
        if (expected == null) {
            return "not checked";
        }
        return mismatches == 0 ? "OK" : "FAILED (" + mismatches + ")";
    }

    String firstMismatch() {
        return firstMismatch;
    }

    @Override
    public void close() {
        if (readback != null) {
            readback.close();
        }
    }
}
