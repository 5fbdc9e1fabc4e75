package dev.gdsloader.loader.spi;

import dev.gdsloader.loader.plan.SlotPlan;
import java.io.IOException;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The scheduling every engine shares, for one ring entry: an engine describes a batch as a list of operations
 * (its own {@link Work}: reads, copies), this class groups consecutive operations into pool tasks of about
 * {@link #TASK_BYTES} (so a shuffled batch of 784-byte records is not one task per record), runs them on the
 * I/O pool, counts them down, keeps the first error, calls {@link Work#finish()} once all succeeded, and
 * lets the consumer wait ({@link #await}) and the loader drain ({@link #quiesce}).
 *
 * <p>Everything is allocated once, when the entry is made: starting a batch allocates nothing. One batch at a
 * time: {@link #start} is called by the loader's reader thread, {@link #await} by the consumer, tasks by the
 * pool; the completion semaphore orders them.
 */
public final class SlotLoad {
    /** Operations are grouped into one pool task until the group moves this many bytes. */
    public static final long TASK_BYTES = 256 << 10;
    /** ... or holds this many operations. */
    public static final int TASK_OPS = 512;

    /**
     * One engine's description of the batch held by one ring entry: filled by {@link #plan}, run in ranges of
     * operations by pool threads, finished once.
     */
    public interface Work {
        /**
         * Describes the batch in {@code plan} as operations, calling {@link SlotLoad#add} once per operation in
         * order (on the reader thread; no allocation).
         *
         * @param plan the batch's pieces
         * @param load where operations are added
         */
        void plan(SlotPlan plan, SlotLoad load);

        /**
         * Runs operations {@code [from, to)}, on a pool thread; ranges of one batch run concurrently.
         *
         * @param from first operation
         * @param to one past the last
         * @return bytes read from storage
         * @throws IOException naming the shard, the offset and the length
         */
        long run(int from, int to) throws IOException;

        /** Called once every operation of a batch succeeded, on the pool thread that ran the last one. */
        void finish();

        /**
         * @return bytes of the batch planned last that went through pinned staging on a path that otherwise moves
         *     none that way (MAPPED's host-decoded shards); 0 by default
         */
        default long stagedBytes() {
            return 0;
        }
    }

    private final String name;
    private final Work work;
    private final AtomicLong ioNanos;
    private final int[] taskStart;
    private final Runnable[] tasks;
    private final AtomicInteger pending = new AtomicInteger();
    private final AtomicLong bytes = new AtomicLong();
    private final Semaphore done = new Semaphore(0);
    private volatile Throwable error;
    private volatile boolean inFlight;
    /** Guards the wait for {@link #inFlight} to fall ({@link #quiesce}); notified each time it does. */
    private final Object idleLock = new Object();
    private final Runnable[] partTasks = new Runnable[MAX_PLANNING_PARTS];
    private final AtomicInteger partsLeft = new AtomicInteger();
    private volatile Planning planning;
    private volatile SlotPlan planned;
    private volatile Executor planningPool;
    private int ops;
    private int taskCount;
    private long groupBytes;
    private int groupOps;

    /**
     * @param name the entry, for messages (e.g. "slot 2")
     * @param maxOps the most operations one batch can need
     * @param work the engine's description of this entry's batches
     * @param ioNanos the engine's counter of nanoseconds spent running operations
     */
    public SlotLoad(String name, int maxOps, Work work, AtomicLong ioNanos) {
        this.name = name;
        this.work = work;
        this.ioNanos = ioNanos;
        this.taskStart = new int[maxOps + 1];
        this.tasks = new Runnable[maxOps];
        for (int i = 0; i < maxOps; i++) {
            int t = i;
            tasks[i] = () -> execute(t);
        }
        for (int k = 0; k < partTasks.length; k++) {
            int part = k;
            partTasks[k] = () -> planPart(part);
        }
    }

    /**
     * Adds the next operation of the batch being planned (from {@link Work#plan}).
     *
     * @param opBytes bytes it moves, for grouping
     * @return its index
     * @throws IllegalStateException if the batch needs more operations than the entry was sized for
     */
    public int add(long opBytes) {
        if (ops == tasks.length) {
            throw new IllegalStateException(name + ": a batch needs more than " + tasks.length
                    + " operations, the bound the slot was sized for");
        }
        if (groupOps == 0 || groupBytes >= TASK_BYTES || groupOps >= TASK_OPS) {
            taskStart[taskCount++] = ops;
            groupBytes = 0;
            groupOps = 0;
        }
        groupBytes += opBytes;
        groupOps++;
        return ops++;
    }

    /**
     * Plans the batch in {@code plan} and starts its tasks on {@code pool}.
     *
     * @param plan the entry's plan, filled for this batch
     * @param pool the I/O pool (its queue must hold every task of every entry)
     * @throws IllegalStateException if the previous batch of this entry is still running, or if planning fails (the
     *     batch needs more operations than the entry was sized for); the entry is then idle
     */
    public void start(SlotPlan plan, Executor pool) {
        begin();
        try {
            work.plan(plan, this);
        } catch (RuntimeException | Error e) {
            idle(); // nothing was submitted: the entry is idle again, and close() need not wait for it
            throw e;
        }
        submit(pool);
    }

    /** Most pool tasks one batch's planning is split into ({@link Planning#parts()} is capped at this). */
    public static final int MAX_PLANNING_PARTS = 8;

    /**
     * The planning of one batch, split so that several pool threads share it: {@link #part} runs once for each of
     * {@link #parts()} parts, concurrently, then {@link #last} once, on the pool thread that finished the last part
     * (it sees every part's writes). One object per ring entry, reused for each batch.
     */
    public interface Planning {
        /** @return parts of this batch's planning, 1..{@link #MAX_PLANNING_PARTS} */
        int parts();

        /**
         * Plans part {@code k}; runs on a pool thread, concurrently with the other parts.
         *
         * @param k the part, {@code 0 <= k < parts()}
         */
        void part(int k);

        /** Completes the plan after every part (e.g. pieces from the records the parts looked up). */
        void last();
    }

    /**
     * As {@link #start}, but the batch is planned on {@code pool} too, in {@code planning}'s parts (a global shuffle's
     * order costs about 100 ns a record: spread over pool threads, and over the entries of the ring, it stops capping
     * the loader near 9 M records/s), then this engine plans its operations and submits them, from the pool thread that
     * finished the planning. A failure anywhere in it is the batch's error, thrown by {@link #await}.
     *
     * @param planning the batch's planning steps (this entry's, reused)
     * @param plan the entry's plan, which {@code planning} fills
     * @param pool the I/O pool (its queue must hold {@link #MAX_PLANNING_PARTS} more tasks per entry than {@link #start}
     *     needs)
     * @throws IllegalStateException if the previous batch of this entry is still running
     */
    public void startPlanning(Planning planning, SlotPlan plan, Executor pool) {
        begin();
        int n = Math.max(1, Math.min(MAX_PLANNING_PARTS, planning.parts()));
        this.planning = planning;
        this.planned = plan;
        this.planningPool = pool;
        partsLeft.set(n);
        for (int k = 0; k < n; k++) {
            try {
                pool.execute(partTasks[k]);
            } catch (RuntimeException | Error e) { // rejected, or a pool thread that could not start
                fail(e);
                if (partsLeft.addAndGet(k - n) == 0) { // the parts never queued count as done
                    planned(pool);
                }
                return;
            }
        }
    }

    /** Records {@code e} as the batch's error unless it has one. */
    private synchronized void fail(Throwable e) {
        if (error == null) {
            error = e;
        }
    }

    private void planPart(int k) {
        try {
            if (error == null) {
                planning.part(k);
            }
        } catch (Throwable e) {
            fail(e);
        } finally {
            if (partsLeft.decrementAndGet() == 0) {
                planned(planningPool);
            }
        }
    }

    private void planned(Executor pool) {
        if (error == null) {
            try {
                planning.last();
                work.plan(planned, this);
            } catch (Throwable e) {
                error = e;
            }
        }
        if (error != null) {
            idle(); // nothing was submitted: idle before the consumer hears of it
            done.release();
            return;
        }
        submit(pool);
    }

    private void begin() {
        if (inFlight) {
            throw new IllegalStateException(name + ": started while its previous batch is still loading");
        }
        ops = 0;
        taskCount = 0;
        groupOps = 0;
        error = null;
        bytes.set(0);
        done.drainPermits();
        inFlight = true;
    }

    private void submit(Executor pool) {
        taskStart[taskCount] = ops;
        pending.set(taskCount);
        if (taskCount == 0) {
            complete();
            return;
        }
        int n = taskCount;
        for (int i = 0; i < n; i++) {
            try {
                pool.execute(tasks[i]);
            } catch (RuntimeException | Error e) { // rejected, or a pool thread that could not start
                fail(e);
                if (pending.addAndGet(i - n) == 0) { // the tasks never queued count as done: the entry ends idle
                    complete();
                }
                return;
            }
        }
    }

    /** @return pool tasks the batch started last was grouped into (its operations, about 256 KiB or 512 to a task) */
    public int taskCount() {
        return taskCount;
    }

    /**
     * @return {@link Work#stagedBytes()} of the batch last started: bytes of it that went through pinned staging on
     *     the MAPPED path (host-decoded shards); read after {@link #await} returned
     */
    public long stagedBytes() {
        return work.stagedBytes();
    }

    /** @return operations of the batch last started */
    public int opCount() {
        return ops;
    }

    /**
     * Waits for the batch started last.
     *
     * @param timeoutNanos how long to wait
     * @return bytes read from storage
     * @throws IOException the first I/O error of the batch (naming shard, offset and length)
     * @throws TimeoutException if the reads did not finish in time (they are still running)
     * @throws InterruptedException if the waiting thread was interrupted
     */
    public long await(long timeoutNanos) throws IOException, TimeoutException, InterruptedException {
        if (!done.tryAcquire(timeoutNanos, TimeUnit.NANOSECONDS)) {
            throw new TimeoutException();
        }
        Throwable e = error;
        if (e instanceof IOException io) {
            throw io;
        }
        if (e instanceof RuntimeException re) {
            throw re;
        }
        if (e instanceof Error err) {
            throw err;
        }
        return bytes.get();
    }

    /** @return true from {@link #start} until the batch's last task and {@link Work#finish()} are done */
    public boolean busy() {
        return inFlight;
    }

    /**
     * Waits until no task of this entry is running or queued, so that no read lands in memory about to be freed.
     *
     * @param deadlineNanos {@link System#nanoTime()} to give up at
     * @return true if the entry's I/O stopped in time
     */
    public boolean quiesce(long deadlineNanos) {
        synchronized (idleLock) {
            while (inFlight) {
                long left = deadlineNanos - System.nanoTime();
                if (left < 0) {
                    return false;
                }
                try {
                    TimeUnit.NANOSECONDS.timedWait(idleLock, Math.max(left, 1));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return false;
                }
            }
        }
        return true;
    }

    /** Marks the entry idle and wakes {@link #quiesce}. */
    private void idle() {
        synchronized (idleLock) {
            inFlight = false;
            idleLock.notifyAll();
        }
    }

    private void execute(int task) {
        try {
            if (error == null) {
                long t0 = System.nanoTime();
                bytes.addAndGet(work.run(taskStart[task], taskStart[task + 1]));
                ioNanos.addAndGet(System.nanoTime() - t0);
            }
        } catch (Throwable e) {
            fail(e);
        } finally {
            if (pending.decrementAndGet() == 0) {
                complete();
            }
        }
    }

    /**
     * Finishes the batch and only then signals it: the entry is marked idle before the consumer can see the
     * batch, so a refill that follows at once is never overwritten by this batch's bookkeeping.
     */
    private void complete() {
        try {
            if (error == null) {
                work.finish();
            }
        } catch (RuntimeException | Error e) { // the batch's error, for the consumer: a pool thread never dies of it
            error = e;
        } finally {
            idle();
            done.release();
        }
    }
}
