package dev.gdsloader.bench;

import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.ColumnView;
import dev.gdsloader.loader.HostReadback;
import java.util.zip.CRC32C;

/**
 * The benchmark's consumer: brings every column of every batch back to the host ({@link HostReadback})
 * and compares its CRC32C with the value computed from the file. Counts mismatches; not thread-safe.
 *
 * <p>Unchecked, on a device path, it is a training loop with no compute: each batch is waited for and released on
 * the consumer's own stream ({@link Batch#awaitOn}, {@link Batch#release(CudaStream)}), the host never blocking on
 * a batch; {@link #drain()} waits for the stream at the end, so that every batch counted has landed.
 */
final class VerifyingConsumer implements AutoCloseable {
    private final long[][] expected;
    private final HostReadback readback;
    private final CudaStream stream;
    private long mismatches;
    private String firstMismatch;

    VerifyingConsumer(long[][] expected, long maxColumnBytes, boolean device) {
        this.expected = expected;
        this.readback = expected == null ? null : new HostReadback(maxColumnBytes, device);
        this.stream = expected == null && device ? CudaStream.create() : null;
    }

    /** @return nanoseconds spent waiting for the consumer's stream to pass every batch it was given (0 on the host) */
    long drain() {
        if (stream == null) {
            return 0;
        }
        long t0 = System.nanoTime();
        stream.synchronize();
        return System.nanoTime() - t0;
    }

    /**
     * Checks the batch, then releases it.
     *
     * @param b a batch, released here
     */
    void accept(Batch b) {
        check(b);
        release(b);
    }

    /**
     * Checks every column of the batch against the file's CRC32C (nothing without expected sums); the batch stays the
     * caller's to {@link #release}.
     *
     * @param b a batch
     */
    void check(Batch b) {
        if (expected == null) {
            if (stream != null) {
                b.awaitOn(stream); // the batch counts once its bytes are in place: drain() waits for that
            }
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
    }

    /**
     * Releases a batch passed to {@link #check} (after the readback's copies, on a device path).
     *
     * @param b the batch
     */
    void release(Batch b) {
        if (stream != null) {
            b.release(stream);
        } else if (readback == null) {
            b.close();
        } else {
            readback.release(b);
        }
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
        if (stream != null) {
            stream.close();
        }
    }
}
