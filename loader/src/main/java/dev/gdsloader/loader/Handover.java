package dev.gdsloader.loader;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The reader thread's hand-over of an epoch's ring entries to the consumer, in order: the entries whose reads are
 * started, then how the reader ended (the epoch's end, or the failure that stopped it). The consumer's
 * {@link #take()} blocks until one of them is there, or until the epoch is {@link #stop() stopped}; nothing polls.
 *
 * <p>Holds at most the ring's entries, in an array made once: handing an entry over allocates nothing. One reader
 * thread puts and ends, one consumer thread polls and takes, any thread stops; thread-safe.
 */
final class Handover {
    /** What the consumer takes: a ring entry whose reads are started, the reader's failure, or the end. */
    sealed interface Item permits RingEntry, Failed, End {
    }

    /**
     * The failure that stopped the reader, handed over once after the entries queued before it.
     *
     * @param cause what the reader met (planning a batch, a device group's copy out of a slot)
     */
    record Failed(RuntimeException cause) implements Item {
    }

    /** No entry will come any more: the epoch's batches are all handed over, the reader is gone or the epoch stopped. */
    enum End implements Item {
        /** The one end. */
        END
    }

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final RingEntry[] queue;
    private int head;
    private int size;
    /** How the reader ended ({@link Failed} once, then {@link End}); null while it runs. */
    private Item last;
    private boolean stopped;

    /** @param capacity the ring's entries: no more than these can be in flight */
    Handover(int capacity) {
        this.queue = new RingEntry[capacity];
    }

    /**
     * Hands over an entry whose reads are started (reader thread).
     *
     * @param e the entry
     * @throws IllegalStateException if more entries are handed over than the ring holds, or after the reader ended
     */
    void put(RingEntry e) {
        lock.lock();
        try {
            if (size == queue.length || last != null) {
                throw new IllegalStateException("hand-over of slot " + e.index + ": " + (last != null
                        ? "the reader already ended" : "all " + queue.length + " entries of the ring are already queued"));
            }
            queue[(head + size) % queue.length] = e;
            size++;
            changed.signal();
        } finally {
            lock.unlock();
        }
    }

    /** Says the reader ended (reader thread, after its last {@link #put}); does nothing after {@link #fail}. */
    void end() {
        finish(End.END);
    }

    /**
     * Says the reader stopped on a failure, handed to the consumer after the entries queued before it.
     *
     * @param cause what the reader met
     */
    void fail(RuntimeException cause) {
        finish(new Failed(cause));
    }

    /** The first call counts: how the reader ended. */
    private void finish(Item how) {
        lock.lock();
        try {
            if (last == null) {
                last = how;
                changed.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Stops the hand-over: a waiting {@link #take()} returns {@link End#END} now, and so does every later call. */
    void stop() {
        lock.lock();
        try {
            stopped = true;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes the next item without waiting.
     *
     * @return the next entry, else how the reader ended, else null while the reader has nothing more yet
     */
    Item poll() {
        lock.lock();
        try {
            return next();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes the next item, waiting until there is one.
     *
     * @return the next entry; else {@link Failed} once, if the reader failed; else {@link End#END}
     * @throws InterruptedException if the waiting thread was interrupted
     */
    Item take() throws InterruptedException {
        lock.lock();
        try {
            Item n;
            while ((n = next()) == null) {
                changed.await();
            }
            return n;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes the next item, waiting at most {@code timeoutNanos} for one.
     *
     * @param timeoutNanos how long to wait, nanoseconds
     * @return as {@link #take()}, or null if nothing came in time
     * @throws InterruptedException if the waiting thread was interrupted
     */
    Item take(long timeoutNanos) throws InterruptedException {
        lock.lock();
        try {
            Item n;
            long left = timeoutNanos;
            while ((n = next()) == null) {
                if (left <= 0) {
                    return null;
                }
                left = changed.awaitNanos(left);
            }
            return n;
        } finally {
            lock.unlock();
        }
    }

    /** With the lock held: the next item, or null while the reader runs and has nothing queued. */
    private Item next() {
        if (stopped) {
            return End.END;
        }
        if (size > 0) {
            RingEntry e = queue[head];
            queue[head] = null;
            head = (head + 1) % queue.length;
            size--;
            return e;
        }
        Item n = last;
        if (n instanceof Failed) {
            last = End.END; // the failure is handed over once
        }
        return n;
    }
}
