package dev.gdsloader.loader.io;

import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.posix.OpenFileLimit;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The open files of one engine, one per (column, shard), opened on first use and kept in a bounded cache: at most
 * {@link #capacity()} are open when none is in use beyond that (a dataset of 100,000 shards needs as many descriptors
 * and mappings otherwise, past {@code RLIMIT_NOFILE} and {@code vm.max_map_count}). A reader takes a file with
 * {@link #acquire} and gives it back with {@link #release} (in a {@code finally}); a file acquired is never closed
 * under its reader. When one more must open and the cache is full, the least recently used file not in use is closed
 * (a clock: each acquire marks its file used; the hand clears marks and closes the first unmarked file not in use).
 * If every open file is in use at that moment (more readers than the capacity), the cache goes over it until they are
 * released: a reader never waits for another.
 *
 * <p>Thread-safe; a file already open is acquired without a lock (reads of every piece do it). The engine owns it and
 * closes it, with every file still open, after all I/O has stopped.
 *
 * @param <F> the open-file type (a {@link ShardReader} or a {@code CuFileHandle})
 */
final class OpenFiles<F extends AutoCloseable> implements AutoCloseable {
    /** The most files kept open by one engine, whatever the descriptor limit. */
    static final int MAX_CAPACITY = 1024;
    /** The fewest, however low the descriptor limit. */
    static final int MIN_CAPACITY = 16;

    /** Opens one file. */
    @FunctionalInterface
    interface Opener<F> {
        F open(RecordLayout shard) throws IOException;
    }

    /** One open file: its readers ({@code users} &ge; 0), or -1 once closed by the cache. */
    private static final class Entry<F> {
        final F file;
        final int column;
        final int shard;
        final AtomicInteger users = new AtomicInteger();
        volatile boolean used;

        Entry(F file, int column, int shard) {
            this.file = file;
            this.column = column;
            this.shard = shard;
        }
    }

    private final Dataset dataset;
    private final Opener<F> opener;
    private final int capacity;
    private final AtomicReferenceArray<AtomicReferenceArray<Entry<F>>> files;
    /** Open entries in clock order; guarded by this. */
    private final ArrayDeque<Entry<F>> clock = new ArrayDeque<>();
    private long opened; // guarded by this
    private long evicted; // guarded by this

    /**
     * @param dataset the dataset whose shards are opened
     * @param opener opens one shard
     * @param capacity the most files kept open, &gt; 0; 0 for {@link #defaultCapacity()}
     */
    OpenFiles(Dataset dataset, Opener<F> opener, int capacity) {
        if (capacity < 0) {
            throw new IllegalArgumentException("open-file capacity must be >= 0 (0: derived from RLIMIT_NOFILE), got " + capacity);
        }
        this.dataset = dataset;
        this.opener = opener;
        this.capacity = capacity == 0 ? defaultCapacity() : capacity;
        this.files = new AtomicReferenceArray<>(dataset.columns().size());
        for (int c = 0; c < dataset.columns().size(); c++) {
            files.set(c, new AtomicReferenceArray<>(dataset.columns().get(c).shards().size()));
        }
    }

    /**
     * @return the default capacity: a sixteenth of the process's soft {@code RLIMIT_NOFILE} (several loaders and a
     *     server's sessions share the limit), between {@value #MIN_CAPACITY} and {@value #MAX_CAPACITY}
     */
    static int defaultCapacity() {
        long limit = OpenFileLimit.soft();
        return Math.clamp(limit / 16, MIN_CAPACITY, MAX_CAPACITY);
    }

    /** @return the most files kept open while none beyond it is in use */
    int capacity() {
        return capacity;
    }

    /**
     * Takes the open file of (column, shard), opening it if needed; give it back with {@link #release} once done.
     *
     * @return the open file, which stays open until released
     * @throws IOException naming the file if it cannot be opened
     */
    F acquire(int column, int shard) throws IOException {
        Entry<F> e = files.get(column).get(shard);
        if (e != null && take(e)) {
            return e.file;
        }
        return open(column, shard);
    }

    /**
     * Gives back a file {@link #acquire} returned.
     *
     * @throws IllegalStateException if (column, shard) is not acquired
     */
    void release(int column, int shard) {
        Entry<F> e = files.get(column).get(shard);
        if (e == null || e.users.getAndDecrement() <= 0) {
            throw new IllegalStateException("open file of column " + column + " shard " + shard + " released more often than acquired");
        }
    }

    private static boolean take(Entry<?> e) {
        for (int u = e.users.get(); u >= 0; u = e.users.get()) {
            if (e.users.compareAndSet(u, u + 1)) {
                e.used = true;
                return true;
            }
        }
        return false; // closed by the cache meanwhile: open anew
    }

    private synchronized F open(int column, int shard) throws IOException {
        Entry<F> e = files.get(column).get(shard);
        if (e != null && take(e)) {
            return e.file;
        }
        while (clock.size() >= capacity && evictOne()) {
            // down to one below the capacity, as far as files not in use allow
        }
        e = new Entry<>(opener.open(dataset.columns().get(column).shards().get(shard)), column, shard);
        e.users.set(1);
        e.used = true;
        files.get(column).set(shard, e);
        clock.addLast(e);
        opened++;
        return e.file;
    }

    /**
     * Closes the least recently used file not in use, if there is one; guarded by this.
     *
     * @return false if every open file is in use
     */
    private boolean evictOne() {
        for (int turns = 2 * clock.size(); turns > 0; turns--) {
            Entry<F> e = clock.pollFirst();
            if (e == null) {
                return false;
            }
            if (e.users.get() == 0 && !e.used && e.users.compareAndSet(0, -1)) {
                files.get(e.column).compareAndSet(e.shard, e, null);
                evicted++;
                closeQuietly(e.file);
                return true;
            }
            e.used = false;
            clock.addLast(e);
        }
        return false;
    }

    /** @return files open now */
    synchronized int openCount() {
        return clock.size();
    }

    /** @return files opened so far, and closed by the cache so far: {opened, evicted} */
    synchronized long[] counts() {
        return new long[] {opened, evicted};
    }

    private static void closeQuietly(AutoCloseable f) {
        try {
            f.close();
        } catch (Exception ignored) {
            // closing a read-only descriptor has nothing to report
        }
    }

    @Override
    public synchronized void close() {
        for (Entry<F> e; (e = clock.pollFirst()) != null; ) {
            e.users.set(-1);
            files.get(e.column).compareAndSet(e.shard, e, null);
            closeQuietly(e.file);
        }
    }
}
