package dev.gdsloader.service.server;

import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.LoaderState;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.memory.NativeAllocator;
import dev.gdsloader.posix.CheckedFiles;
import dev.gdsloader.service.protocol.Request;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.arrow.memory.BufferAllocator;

/**
 * One stream's session (a {@code DoGet} or {@code DoExchange} of one epoch): its {@link GdsLoader}, built from the
 * request under the server's root, with the native memory of a child of the server's {@link NativeAllocator} and the
 * Arrow buffers of a child of the server's {@link BufferAllocator}.
 *
 * <p>Lifetime: the session is held by its stream and by every buffer Flight still holds (a host batch wrapped
 * zero-copy is released when gRPC has written it, on a transport thread); {@link #hold()} / {@link #unhold()} count
 * them, and the last {@code unhold} frees the loader and both allocators on the server's cleanup executor (a loader's
 * close may wait for reads in flight, which must not happen on a transport thread). Thread-safe for hold/unhold;
 * {@link #loader()} is for the stream's one thread.
 *
 * <p>Reuse ({@link ParkedSessions}): between streams a session may be parked, holding the loader and its ring for the
 * same client's next stream of the same request; {@link #park()}, {@link #prestart()}, {@link #unpark()} and
 * {@link #epoch()} synchronise on the session, so a parked session's next epoch is started once at most.
 */
final class Session {
    private static final Logger LOG = Logger.getLogger(Session.class.getName());

    private final String id;
    private final NativeAllocator memory;
    private final BufferAllocator arrow;
    private final GdsLoader loader;
    /** The request being served: the opening one, or the one a reuse serves ({@link #serve}). */
    private volatile Request request;
    private final AtomicInteger holds = new AtomicInteger(1);
    private final Executor cleanup;
    private final Consumer<Session> onFreed;
    private final CountDownLatch freed = new CountDownLatch(1);
    /** Parked for reuse ({@link ParkedSessions}); guarded by this. */
    private boolean parked;
    /** An epoch started while parked ({@link #prestart()}), handed to the next stream by {@link #epoch()}; guarded by this. */
    private Iterator<Batch> started;
    /** Added to the loader's record indices in {@code _record} (a cluster part's first global record), 0 by default. */
    private volatile long recordOffset;

    private Session(String id, NativeAllocator memory, BufferAllocator arrow, GdsLoader loader, Request request, Executor cleanup,
                    Consumer<Session> onFreed) {
        this.id = id;
        this.memory = memory;
        this.arrow = arrow;
        this.loader = loader;
        this.request = request;
        this.cleanup = cleanup;
        this.onFreed = onFreed;
    }

    /**
     * Builds a session's loader for {@code r}: resolves the dataset under the root (refusing escapes), checks the
     * delivery against the path (HOST delivery reads through host memory: path AUTO becomes HOST, a device path is
     * refused; CUDA_IPC needs a device path), and starts at the request's epoch or right after its state.
     *
     * @param id session id, for names and logs
     * @param r the request
     * @param root the server's root
     * @param serverMemory the server's native allocator (the session takes a child)
     * @param serverArrow the server's Arrow allocator (the session takes a child)
     * @param ceilings what the request may ask for, and the server's I/O pool the loader reads on
     * @param cleanup where {@link #unhold()}'s last call frees the session
     * @param onFreed told once the session is freed
     * @return the session, held once by the caller
     * @throws IllegalArgumentException naming a bad dataset name, option, delivery or state, or the ceiling an option is
     *     above ({@link SessionCeilings})
     * @throws IOException if the dataset cannot be read
     * @throws dev.gdsloader.memory.MemoryBudgetException if the ring does not fit the server's budget (naming both sizes)
     */
    static Session open(String id, Request r, DatasetRoot root, NativeAllocator serverMemory, BufferAllocator serverArrow,
                        SessionCeilings ceilings, Executor cleanup, Consumer<Session> onFreed) throws IOException {
        Path dir = root.resolve(r.dataset());
        ServerDelivery delivery = ServerDelivery.of(r.delivery());
        LoaderOptions o = delivery.options(r.options().requireBatchSize());
        if (o.sampler().blockRecords() == 0) {
            o = o.withSampler(o.sampler().withBlockRecords(o.batchSize()));
        }
        Dataset ds;
        try {
            ds = Dataset.open(dir, o.columns());
        } catch (IOException e) {
            LOG.log(Level.FINE, "gdsloader: session " + id + ": dataset '" + r.dataset() + "' cannot be opened", e);
            throw new IllegalArgumentException("dataset '" + r.dataset() + "' is not a readable dataset: " + e.getMessage(), e);
        }
        CheckedFiles files = root.requireInside(ds, r.dataset()); // what it opened, checked once more, identities kept
        o = ceilings.apply(o, ds, r.dataset()); // above a ceiling: refused, naming it
        LoaderState start = r.state();
        if (start == null) {
            start = new LoaderState(r.epoch(), 0, ds.recordCount(), o.batchSize(), o.sampler());
        } else if (start.epoch() != r.epoch()) {
            throw new IllegalArgumentException("request field 'state' is of epoch " + start.epoch() + " but 'epoch' is "
                    + r.epoch() + ": resume from the state of a batch of the epoch asked for");
        }
        NativeAllocator memory = serverMemory.newChild("session " + id + " of '" + r.dataset() + "'", NativeAllocator.UNLIMITED,
                NativeAllocator.UNLIMITED);
        BufferAllocator arrow = null;
        try {
            arrow = serverArrow.newChildAllocator("session " + id, 0, Long.MAX_VALUE);
            GdsLoader l = GdsLoader.builder(ds).options(o).allocator(memory).resumeFrom(start).files(files)
                    .ioExecutor(ceilings.io()).build();
            String refusal = delivery.refusal(l);
            if (refusal != null) {
                l.close();
                throw new IllegalArgumentException(refusal);
            }
            return new Session(id, memory, arrow, l, r, cleanup, onFreed);
        } catch (IOException | RuntimeException | Error e) {
            if (arrow != null) {
                arrow.close();
            }
            memory.close();
            throw e;
        }
    }

    /** @return the session id */
    String id() {
        return id;
    }

    /** @return the loader, positioned at the request's epoch (or right after its state) */
    GdsLoader loader() {
        return loader;
    }

    /** @return the request the session serves (the one that opened it, or that of its latest reuse) */
    Request request() {
        return request;
    }

    /**
     * A reused session takes up a new request (equal to the one it was parked for but for its state and epoch).
     *
     * @param r the request its next stream serves
     */
    void serve(Request r) {
        this.request = r;
    }

    /** Marks the session parked: {@link #prestart()} may start its next epoch until {@link #unpark()}. */
    synchronized void park() {
        parked = true;
    }

    /**
     * Leaves the parked state (a stream takes the session, or it expires); waits for a {@link #prestart()} in progress.
     */
    synchronized void unpark() {
        parked = false;
    }

    /**
     * Starts the loader's next epoch while the session is parked, so that its ring fills before the client asks: once
     * every batch of the previous epoch is back (only the parking's hold is left, waited for up to
     * {@link #DRAIN_MILLIS}); nothing if the session is no longer parked or the batches did not come back. Runs on the
     * cleanup executor.
     */
    synchronized void prestart() {
        if (!parked || started != null || !awaitSoleHolder()) {
            return;
        }
        try {
            started = loader.iterator();
        } catch (RuntimeException e) { // the stream that takes the session starts the epoch itself and reports it
            LOG.log(Level.FINE, "gdsloader: session " + id + ": the next epoch could not be started ahead", e);
        }
    }

    /**
     * Starts the epoch a stream sends: the one {@link #prestart()} started, or the loader's next (a reused session first
     * waits up to {@link #DRAIN_MILLIS} for the previous epoch's batches that gRPC still holds).
     *
     * @return the epoch's batches
     * @throws IllegalStateException if batches of the previous epoch are still held after the wait (naming how many)
     */
    synchronized Iterator<Batch> epoch() {
        Iterator<Batch> it = started;
        started = null;
        if (it != null) {
            return it;
        }
        awaitSoleHolder();
        return loader.iterator();
    }

    /** Waits up to {@link #DRAIN_MILLIS} until the caller's is the only hold left; @return whether it is */
    private boolean awaitSoleHolder() {
        return await(() -> holds.get() <= 1) && holds.get() == 1;
    }

    /**
     * Polls {@code done} every millisecond for up to {@link #DRAIN_MILLIS}.
     *
     * @return whether it held in time (false if interrupted, with the interrupt flag set again)
     */
    private static boolean await(java.util.function.BooleanSupplier done) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DRAIN_MILLIS);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    /**
     * @param first the global index of the loader's record 0 (its cluster part's first record), added to every
     *     {@code _record} this session sends; set before the stream starts
     */
    void offsetRecords(long first) {
        this.recordOffset = first;
    }

    /**
     * @param i a batch row's record index in the loader's dataset
     * @return its global index, as {@code _record} sends it
     */
    long globalRecord(long i) {
        return recordOffset + i;
    }

    /** @return the session's Arrow allocator (bookkeeping columns, metadata, wrapped batch memory) */
    BufferAllocator arrow() {
        return arrow;
    }

    /** @return the session's native allocator (its loader's ring) */
    NativeAllocator memory() {
        return memory;
    }

    /**
     * Adds a holder (a buffer Flight holds).
     *
     * @throws IllegalStateException if the session was already released by every holder
     */
    void hold() {
        while (true) {
            int n = holds.get();
            if (n <= 0) {
                throw new IllegalStateException("session " + id + " is already freed");
            }
            if (holds.compareAndSet(n, n + 1)) {
                return;
            }
        }
    }

    /**
     * Drops a holder; the last frees the session on the cleanup executor, or on this thread if the executor cannot
     * take it (a cleanup thread that cannot start, as without threads left: the session's memory must come back all
     * the same, and the caller must not see a failure that would make it release again).
     */
    void unhold() {
        int n = holds.decrementAndGet();
        if (n == 0) {
            try {
                cleanup.execute(this::free);
            } catch (RuntimeException | Error e) { // RejectedExecutionException, OutOfMemoryError: no thread for it
                LOG.log(Level.WARNING, "gdsloader: session " + id + " freed on the releasing thread: the cleanup executor "
                        + "could not take it (" + e + ")");
                free();
            }
        } else if (n < 0) {
            throw new IllegalStateException("session " + id + " released more often than held");
        }
    }

    /**
     * @param millis how long to wait
     * @return true if the session was freed within the timeout
     * @throws InterruptedException if interrupted
     */
    boolean awaitFreed(long millis) throws InterruptedException {
        return freed.await(millis, TimeUnit.MILLISECONDS);
    }

    /** How long {@link #free} waits for gRPC to release a message's last small buffers, ms. */
    static final long DRAIN_MILLIS = 2_000;

    private void free() {
        try {
            // each step runs even if one before it failed: nothing else is left open
            Exception first = dev.gdsloader.memory.Closeables.closeAll(loader, this::awaitArrowReleased,
                    arrow, // throws, naming them, if buffers are still outstanding
                    memory);
            if (first != null) {
                LOG.log(Level.WARNING, "gdsloader: session " + id + " did not close cleanly", first);
            }
        } finally {
            onFreed.accept(this);
            freed.countDown();
        }
    }

    /**
     * Waits up to {@link #DRAIN_MILLIS} for the session's Arrow buffers to be released. Only the wrapped slot buffers
     * hold the session ({@link #hold()}); the last message's small bookkeeping buffers ({@code _record},
     * {@code _padding}, its metadata) are released by gRPC a moment after its slot buffers, in an order of Netty's
     * choosing, so the last release of a holder can come while they are still held. A buffer truly kept past the wait
     * is then named by {@link BufferAllocator#close()}.
     */
    private void awaitArrowReleased() {
        await(() -> arrow.getAllocatedMemory() == 0);
    }
}
