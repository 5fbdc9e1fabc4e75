package dev.gdsloader.loader;

import java.io.Serial;

/**
 * Thrown by an epoch iterator's {@code hasNext()} / {@code next()} when the consumer holds every slot of the prefetch
 * ring (one unreleased {@link Batch} per slot) and released none within the loader's I/O timeout
 * ({@link GdsLoader.Builder#ioTimeoutMillis}): no batch can be read into a slot the consumer still holds, so the wait
 * would never end. Release a batch ({@link Batch#close()}) before asking for the next one, or build the loader with a
 * larger {@link GdsLoader.Builder#prefetchDepth}. The epoch is not damaged: after a release, {@code next()} can be
 * called again.
 *
 * <p>Immutable and thread-safe.
 */
public final class AllSlotsHeldException extends IllegalStateException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final int prefetchDepth;
    private final int heldBatches;
    private final long waitedMillis;

    /**
     * @param prefetchDepth slots in the ring (the prefetch depth in force)
     * @param heldBatches batches the consumer holds, unreleased
     * @param waitedMillis how long the consumer waited for a release, milliseconds (the I/O timeout)
     */
    AllSlotsHeldException(int prefetchDepth, int heldBatches, long waitedMillis) {
        super("the consumer holds " + heldBatches + " unreleased batch(es) and the prefetch depth is " + prefetchDepth
                + ": every slot is held, so no batch can be read; none was released within " + waitedMillis
                + " ms (ioTimeoutMillis). Close a batch before taking the next, or use a larger prefetch depth");
        this.prefetchDepth = prefetchDepth;
        this.heldBatches = heldBatches;
        this.waitedMillis = waitedMillis;
    }

    /** @return slots in the ring: the prefetch depth in force */
    public int prefetchDepth() {
        return prefetchDepth;
    }

    /** @return batches the consumer held, unreleased, when the wait ended */
    public int heldBatches() {
        return heldBatches;
    }

    /** @return how long the consumer waited for a release, milliseconds */
    public long waitedMillis() {
        return waitedMillis;
    }
}
