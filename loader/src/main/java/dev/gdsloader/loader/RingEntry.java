package dev.gdsloader.loader;

import dev.gdsloader.loader.spi.SlotLoad;
import dev.gdsloader.loader.plan.SlotPlan;
import dev.gdsloader.loader.spi.SlotMemory;

/**
 * One entry of the prefetch ring: the slot memory one batch lands in (made by the engine), the plan of the batch it
 * holds, the column state behind the views the consumer sees and the load state of its reads. Everything is made once and refilled
 * for each batch the entry holds.
 *
 * <p>Owned by its {@link PrefetchRing}, which closes the memory; handed to one batch at a time, the pipeline's
 * queues ordering the reader thread, the I/O threads and the consumer.
 */
final class RingEntry implements Handover.Item {
    /** Position in the ring. */
    final int index;
    /** The memory the batch lands in. */
    final SlotMemory memory;
    /** The reads behind the batch the entry holds. */
    final SlotPlan plan;
    /** One column state per column, refilled for each batch; each {@link Batch} wraps it in its own views. */
    final SlotColumn[] views;
    /** The reads of the batch, scheduled on the I/O pool. */
    final SlotLoad load;

    RingEntry(int index, SlotMemory memory, SlotPlan plan, SlotColumn[] views, SlotLoad load) {
        this.index = index;
        this.memory = memory;
        this.plan = plan;
        this.views = views;
        this.load = load;
    }
}
