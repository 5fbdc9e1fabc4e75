package dev.gdsloader.loader;

import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.plan.ReadPlanner;
import dev.gdsloader.loader.sampler.EpochOrder;
import dev.gdsloader.loader.io.IoEngine;
import dev.gdsloader.loader.plan.BatchPlan;
import dev.gdsloader.loader.plan.ColumnPlan;
import dev.gdsloader.loader.slot.Slot;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * One epoch of the pipeline. A reader thread walks the batch plans: it takes a free slot from the ring
 * (waiting for the consumer's release), starts its reads on the I/O pool and queues the pending batch;
 * the consumer's {@link #next()} takes pending batches in order and waits for their reads. Reads of
 * up to prefetch-depth batches are in flight while the consumer works.
 */
final class EpochPipeline implements Iterator<Batch>, AutoCloseable {
    private record Pending(BatchPlan plan, Slot slot, CompletableFuture<Long> io, Throwable error) {
    }

    private static final Pending END = new Pending(null, null, null, null);

    private final Dataset dataset;
    private final long ioTimeoutNanos;
    private final EpochOrder order;
    private final int batchSize;
    private final long firstBatch;
    private final long endBatch;
    private final List<Slot> slots;
    private final IoEngine engine;
    private final ExecutorService pool;
    private final List<Column> columns;
    private final BlockingQueue<Slot> free;
    private final BlockingQueue<Pending> ready;
    private final Thread reader;
    private final AtomicReferenceArray<CompletableFuture<Long>> inFlight;
    private final long startNanos = System.nanoTime();
    private final long startIoNanos;
    private Pending next;
    private volatile boolean closed;
    private long batches;
    private long bytes;
    private long storageBytes;
    private long stallNanos;
    private long lastNanos;
    private long delivered;

    EpochPipeline(Dataset dataset, EpochOrder order, int batchSize, long firstBatch, long endBatch, List<Slot> slots,
                  IoEngine engine, ExecutorService pool, long ioTimeoutNanos) {
        this.ioTimeoutNanos = ioTimeoutNanos;
        this.dataset = dataset;
        this.order = order;
        this.batchSize = batchSize;
        this.firstBatch = firstBatch;
        this.endBatch = endBatch;
        this.delivered = firstBatch;
        this.slots = slots;
        this.engine = engine;
        this.pool = pool;
        this.columns = dataset.columns();
        this.inFlight = new AtomicReferenceArray<>(slots.size());
        this.startIoNanos = engine.ioNanos();
        this.free = new ArrayBlockingQueue<>(slots.size(), false, slots);
        this.ready = new ArrayBlockingQueue<>(slots.size() + 1);
        this.reader = Thread.ofPlatform().name("gdsloader-reader").daemon().unstarted(this::readLoop);
        this.reader.start();
    }

    private void readLoop() {
        try {
            for (long b = firstBatch; b < endBatch; b++) {
                BatchPlan p = ReadPlanner.plan(dataset, order, b, batchSize);
                Slot s = free.take();
                if (closed) {
                    return;
                }
                s.awaitReusable();
                CompletableFuture<Long> io = engine.load(p, s, pool);
                inFlight.set(s.index(), io);
                ready.put(new Pending(p, s, io, null));
            }
            ready.put(END);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            ready.offer(new Pending(null, null, null, e));
        }
    }

    @Override
    public boolean hasNext() {
        if (next == null) {
            long t0 = System.nanoTime();
            try {
                next = ready.take();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for a batch", e);
            } finally {
                stallNanos += System.nanoTime() - t0;
            }
            if (next == END) {
                ready.offer(END);
            }
        }
        return next != END;
    }

    @Override
    public Batch next() {
        if (!hasNext()) {
            throw new NoSuchElementException("epoch finished after " + batches + " batches");
        }
        Pending p = next;
        next = null;
        if (p.error != null) {
            throw new IllegalStateException("loader failed: " + p.error.getMessage(), p.error);
        }
        long t0 = System.nanoTime();
        long read;
        try {
            read = p.io.get(ioTimeoutNanos, TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            // the reads are still blocked in the kernel: the slot stays out of the ring, the epoch cannot go on
            closed = true;
            throw new UncheckedIOException(new IOException(p.plan.describe() + ": reads did not finish within "
                    + TimeUnit.NANOSECONDS.toMillis(ioTimeoutNanos) + " ms (" + p.plan.columns().stream()
                    .flatMap(c -> c.pieces().stream().map(x -> columns.get(c.column()).shards().get(x.shard()).file()
                            + " bytes " + x.fileStart() + ".." + x.fileEnd()))
                    .distinct().limit(4).toList() + "): storage stalled"));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + p.plan.describe(), e);
        } catch (java.util.concurrent.ExecutionException | RuntimeException e) {
            recycleFailed(p.slot);
            Throwable cause = IoEngine.cause(e);
            if (cause instanceof IOException io) {
                throw new UncheckedIOException(p.plan.describe() + ": " + io.getMessage(), io);
            }
            throw new IllegalStateException(p.plan.describe() + ": " + cause.getMessage(), cause);
        } finally {
            stallNanos += System.nanoTime() - t0;
        }
        List<ColumnView> views = new ArrayList<>(p.plan.columns().size());
        for (ColumnPlan c : p.plan.columns()) {
            views.add(view(p, c));
        }
        batches++;
        delivered = p.plan.index() + 1;
        bytes += p.plan.bytes();
        storageBytes += read;
        lastNanos = System.nanoTime();
        return new Batch(p.plan, List.copyOf(views), engine.pathTaken(), p.slot.ready(), p.slot.index(), this::release);
    }

    private ColumnView view(Pending p, ColumnPlan c) {
        Column column = columns.get(c.column());
        long[] rs = column.recordShape();
        long[] shape = new long[rs.length + 1];
        shape[0] = p.plan.records();
        System.arraycopy(rs, 0, shape, 1, rs.length);
        long off = engine.viewOffset(p.slot, c);
        return new ColumnView(column.name(), column.dtype(), shape, c.bytes(), p.slot.device(), off,
                p.slot.hostTarget() == null ? null : p.slot.hostTarget().asSlice(off, c.bytes()));
    }

    /** A batch whose reads failed never reaches the consumer: its slot goes back once its copies are done. */
    private void recycleFailed(Slot s) {
        try {
            s.quiesce();
        } finally {
            free.offer(s);
        }
    }

    private void release(Batch b, CudaStream consumerStream) {
        Slot s = slots.get(b.slot);
        if (consumerStream != null) {
            s.releaseOn(consumerStream);
        }
        free.offer(s);
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
        return new LoaderStats(engine.pathTaken(), batches, bytes, storageBytes,
                batches == 0 ? 0 : lastNanos - startNanos, stallNanos, engine.ioNanos() - startIoNanos,
                slots.size() - free.size());
    }

    /**
     * Stops the reader and waits up to {@code timeoutMillis} for in-flight reads to end, so that no read
     * lands in memory that is about to be freed.
     *
     * @return true if all I/O stopped in time
     */
    boolean stop(long timeoutMillis) {
        closed = true;
        reader.interrupt();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        try {
            reader.join(Math.max(1, timeoutMillis));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        for (int i = 0; i < inFlight.length(); i++) {
            CompletableFuture<Long> f = inFlight.get(i);
            if (f == null) {
                continue;
            }
            long left = deadline - System.nanoTime();
            try {
                f.get(Math.max(0, left), TimeUnit.NANOSECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                return false;
            } catch (Exception ignored) {
                // a failed read is stopped too
            }
        }
        return !reader.isAlive();
    }

    @Override
    public void close() {
        stop(10_000);
    }
}
