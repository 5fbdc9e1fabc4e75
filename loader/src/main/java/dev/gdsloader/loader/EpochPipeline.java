package dev.gdsloader.loader;

import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.spi.SlotLoad;
import dev.gdsloader.loader.plan.ColumnPieces;
import dev.gdsloader.loader.plan.ReadPlanner;
import dev.gdsloader.loader.plan.SlotPlan;
import dev.gdsloader.loader.sampler.EpochOrder;
import dev.gdsloader.loader.spi.SlotMemory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One epoch of the pipeline. A reader thread walks the epoch's batches: it takes a free entry from the
 * {@link PrefetchRing} (waiting for the consumer's release), plans the batch into the entry's plan, starts its
 * reads on the I/O pool and queues the entry; the consumer's {@link #next()} takes entries in order and waits for
 * their reads. Reads of up to prefetch-depth batches are in flight while the consumer works. Plans, load state and
 * column state belong to the ring's entries and are refilled in place: a batch costs one small {@link Batch}
 * object with one light {@link ColumnView} per column.
 */
final class EpochPipeline implements Iterator<Batch>, AutoCloseable {
    /** Records a planning part looks up at least (smaller batches are planned in fewer parts). */
    private static final int RECORDS_PER_PART = 1024;

    /**
     * One entry's planning of its batch, in parts ({@link SlotLoad.Planning}); reused for every batch of the entry.
     * The wait for the entry's memory to be reusable (its previous batch's GPU work and the consumer's release on its
     * stream) comes last, on the pool thread, just before the engine plans and submits its operations: the order's
     * lookup and the pieces of a batch are planned while the GPU still moves the entry's previous batch, and the
     * reader thread never blocks on a GPU event (it did, once per batch, which left each entry idle for a planning).
     */
    private static final class BatchPlanning implements SlotLoad.Planning {
        private final Dataset dataset;
        private final SlotPlan plan;
        private final SlotMemory memory;
        private int parts;

        BatchPlanning(Dataset dataset, SlotPlan plan, SlotMemory memory) {
            this.dataset = dataset;
            this.plan = plan;
            this.memory = memory;
        }

        @Override
        public int parts() {
            // read by startPlanning on the reader thread, after ReadPlanner.begin set the batch's records there
            parts = Math.max(1, Math.min(SlotLoad.MAX_PLANNING_PARTS, (plan.records() + RECORDS_PER_PART - 1) / RECORDS_PER_PART));
            return parts;
        }

        @Override
        public void part(int k) {
            int n = plan.records();
            ReadPlanner.fillOrder(plan, (int) ((long) n * k / parts), (int) ((long) n * (k + 1) / parts));
        }

        @Override
        public void last() {
            ReadPlanner.planPieces(dataset, plan);
            memory.awaitReusable();
        }
    }

    private final EpochOrder order;
    private final int batchSize;
    private final long firstBatch;
    private final long endBatch;
    private final PrefetchRing ring;
    private final BatchPlanning[] planning;
    private final Executor pool;
    private final List<Column> columns;
    private final long ioTimeoutNanos;
    private final BlockingQueue<RingEntry> free;
    private final Handover ready;
    private final Thread reader;
    private final long startNanos = System.nanoTime();
    private final long startIoNanos;
    private final long startDeviceNanos;
    private final long startDeviceBatches;
    private Handover.Item next;
    private volatile boolean closed;
    private volatile boolean stopped;
    private long batches;
    private long bytes;
    private long storageBytes;
    private long stallNanos;
    private long lastNanos;
    private long delivered;
    private final java.util.concurrent.atomic.AtomicInteger outstanding = new java.util.concurrent.atomic.AtomicInteger();
    /** Every batch's releaser: one object for the epoch, not a method reference made per batch. */
    private final Batch.Releaser releaser = this::release;
    /** Run on the reader thread before an entry is refilled (a device group's copies out of it); may be null. */
    private final java.util.function.IntConsumer beforeRefill;

    EpochPipeline(Dataset dataset, EpochOrder order, int batchSize, long firstBatch, long endBatch, PrefetchRing ring,
                  Executor pool, long ioTimeoutNanos, java.util.function.IntConsumer beforeRefill) {
        this.beforeRefill = beforeRefill;
        this.order = order;
        this.batchSize = batchSize;
        this.firstBatch = firstBatch;
        this.endBatch = endBatch;
        this.delivered = firstBatch;
        this.ring = ring;
        this.pool = pool;
        this.columns = dataset.columns();
        this.ioTimeoutNanos = ioTimeoutNanos;
        this.startIoNanos = ring.engine().ioNanos();
        this.startDeviceNanos = ring.engine().deviceNanos();
        this.startDeviceBatches = ring.engine().deviceBatches();
        this.free = new ArrayBlockingQueue<>(ring.size(), false, ring.entries());
        this.planning = new BatchPlanning[ring.size()];
        for (RingEntry e : ring.entries()) {
            planning[e.index] = new BatchPlanning(dataset, e.plan, e.memory);
        }
        this.ready = new Handover(ring.size());
        this.reader = Thread.ofPlatform().name("gdsloader-reader").daemon().unstarted(this::readLoop);
        this.reader.start();
    }

    private void readLoop() {
        try {
            readBatches();
        } finally {
            ready.end(); // whatever ended the reader, hasNext() must not wait for it any more
        }
    }

    private void readBatches() {
        try {
            for (long b = firstBatch; b < endBatch; b++) {
                RingEntry e = free.take();
                if (closed) {
                    return;
                }
                if (beforeRefill != null) {
                    beforeRefill.accept(e.index); // a device group: every member's copy out of the slot is done
                }
                ReadPlanner.begin(order, b, batchSize, e.plan); // describable (e.g. in a timeout) before it is planned
                // the batch is planned on the pool (a shuffle's order costs ~100 ns a record), in parts and for several
                // entries at once; a planning failure is the batch's error, thrown to the consumer
                e.load.startPlanning(planning[e.index], e.plan, pool);
                ready.put(e);
            }
            ready.end();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            ready.fail(e);
        }
    }

    @Override
    public boolean hasNext() {
        if (stopped) {
            return false; // a newer epoch took over the slots, or the loader closed
        }
        if (next == null) {
            next = ready.poll(); // the loader is ahead: no wait
            if (next == null) {
                long t0 = System.nanoTime();
                try {
                    next = awaitItem(); // an entry, the reader's failure, or the end (the reader ended, or a stop)
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while waiting for a batch", e);
                } finally {
                    stallNanos += System.nanoTime() - t0;
                }
            }
        }
        return next != Handover.End.END; // the end stays: the hand-over returns it to every later take
    }

    /**
     * Waits for the reader's next item. While the consumer holds every slot of the ring no batch can be read, so the
     * wait is bounded by the I/O timeout: a release in that time (from another thread) lets the next batch come.
     */
    private Handover.Item awaitItem() throws InterruptedException {
        if (outstanding.get() < ring.size()) {
            return ready.take(); // a slot is being read or free: its batch comes, or the reads' own timeout fails it
        }
        Handover.Item n = ready.take(ioTimeoutNanos);
        if (n != null) {
            return n;
        }
        int held = outstanding.get();
        if (held >= ring.size()) {
            throw new AllSlotsHeldException(ring.size(), held, TimeUnit.NANOSECONDS.toMillis(ioTimeoutNanos));
        }
        return ready.take(); // released just as the wait ended
    }

    /**
     * The next batch, waiting for its reads.
     *
     * @return the batch, owned by the consumer until {@link Batch#close()}
     * @throws NoSuchElementException after the epoch's last batch
     * @throws AllSlotsHeldException if the consumer holds every slot of the ring (prefetch depth) and none was
     *     released within the I/O timeout
     * @throws java.io.UncheckedIOException if the batch's reads failed or did not finish within the I/O timeout,
     *     naming the batch, the file and the offset
     * @throws IllegalStateException if planning the batch failed, or the waiting thread was interrupted
     */
    @Override
    public Batch next() {
        if (!hasNext()) {
            throw new NoSuchElementException("epoch finished after " + batches + " batches");
        }
        Handover.Item n = next;
        next = null;
        return switch (n) {
            case Handover.Failed f -> throw new IllegalStateException("loader failed: " + f.cause().getMessage(), f.cause());
            case Handover.End end -> throw new IllegalStateException("hasNext() returned true at the end"); // cannot be
            case RingEntry slot -> deliver(slot);
        };
    }

    /** Waits for the entry's reads and hands its batch to the consumer. */
    private Batch deliver(RingEntry slot) {
        SlotPlan plan = slot.plan;
        long t0 = System.nanoTime();
        long read;
        try {
            read = slot.load.await(ioTimeoutNanos);
        } catch (TimeoutException e) {
            // the reads are still blocked in the kernel: the slot stays out of the ring, the epoch cannot go on
            closed = true;
            throw new UncheckedIOException(new IOException(plan.describe() + ": reads did not finish within "
                    + TimeUnit.NANOSECONDS.toMillis(ioTimeoutNanos) + " ms (" + stalledRanges(plan) + "): storage stalled"));
        } catch (InterruptedException e) {
            next = slot; // keep the slot: the next call waits for it again instead of losing it from the ring
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + plan.describe(), e);
        } catch (IOException e) {
            String what = plan.describe();
            recycleFailed(slot);
            throw new UncheckedIOException(what + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            String what = plan.describe();
            recycleFailed(slot);
            throw new IllegalStateException(what + ": " + e.getMessage(), e);
        } finally {
            stallNanos += System.nanoTime() - t0;
        }
        ring.fillViews(slot);
        batches++;
        delivered = plan.index() + 1;
        bytes += plan.bytes();
        storageBytes += read;
        lastNanos = System.nanoTime();
        outstanding.incrementAndGet();
        return new Batch(plan.index(), order, plan.from(), plan.records(), slot.views, ring.path(), slot.load.stagedBytes(),
                slot.memory.ready(), slot.index, releaser);
    }

    private String stalledRanges(SlotPlan plan) {
        StringBuilder sb = new StringBuilder();
        int listed = 0;
        for (int c = 0; c < plan.columnCount() && listed < 4; c++) {
            ColumnPieces p = plan.column(c);
            for (int i = 0; i < p.count() && listed < 4; i++, listed++) {
                sb.append(listed == 0 ? "" : ", ").append(columns.get(c).shards().get(p.shard(i)).file())
                        .append(" bytes ").append(p.start(i)).append("..").append(p.end(i));
            }
        }
        return sb.toString();
    }

    /** A batch whose reads failed never reaches the consumer: its slot goes back once its copies are done. */
    private void recycleFailed(RingEntry s) {
        try {
            s.memory.quiesce();
        } finally {
            free.offer(s);
        }
    }

    private void release(Batch b, CudaStream consumerStream) {
        outstanding.decrementAndGet();
        RingEntry s = ring.entries().get(b.slot);
        if (consumerStream != null) {
            s.memory.releaseOn(consumerStream);
        }
        free.offer(s);
    }

    /** @return batches handed to the consumer and not yet released */
    int outstanding() {
        return outstanding.get();
    }

    /** @return the epoch's order */
    EpochOrder order() {
        return order;
    }

    /** @return batches of this epoch handed to the consumer so far, counting those skipped by a resume */
    long delivered() {
        return delivered;
    }

    /** @return the counters so far */
    LoaderStats stats() {
        return new LoaderStats(ring.path(), batches, bytes, storageBytes,
                batches == 0 ? 0 : lastNanos - startNanos, stallNanos, ring.engine().ioNanos() - startIoNanos,
                ring.size() - free.size(), dev.gdsloader.memory.MemoryUsage.NONE, 0, ring.engine().deviceNanos() - startDeviceNanos,
                ring.engine().deviceBatches() - startDeviceBatches);
    }

    /**
     * Stops the reader and waits up to {@code timeoutMillis} for in-flight reads to end, so that no read
     * lands in memory that is about to be freed.
     *
     * @param timeoutMillis how long to wait
     * @return true if all I/O stopped in time
     */
    boolean stop(long timeoutMillis) {
        closed = true;
        stopped = true;
        ready.stop();
        reader.interrupt();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        try {
            reader.join(Math.max(1, timeoutMillis));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return ring.quiesce(deadline) && !reader.isAlive();
    }

    @Override
    public void close() {
        stop(10_000);
    }
}
