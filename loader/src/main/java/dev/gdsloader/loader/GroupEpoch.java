package dev.gdsloader.loader;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Supplier;

/**
 * One epoch of a device group ({@link GdsLoader.Builder#deviceGroup}): each batch is read once into the first GPU's
 * slot and handed to every member, in the same order, each member's copy on its own GPU with its own ready event
 * ({@link Batch#readyEvent()}). Consume it with one thread per member, each iterating {@link #member(int)}:
 *
 * <pre>{@code
 * GroupEpoch epoch = loader.groupEpoch();
 * // on member m's thread, its consumer stream on GPU loader.deviceGroup().get(m):
 * for (Iterator<Batch> it = epoch.member(m); it.hasNext(); ) {
 *     Batch b = it.next();
 *     b.awaitOn(stream);
 *     // ... kernels on stream ...
 *     b.release(stream);   // on the member's own stream
 * }
 * }</pre>
 *
 * <p>A slot goes back to the ring once every member released its batch (each member's batch has its own reference
 * count; {@link ReleaseGroup} is the rule); the fastest member drives the reads, and a member that falls
 * prefetch-depth batches behind holds the others back. A member releasing on a stream of another GPU fails
 * ({@code cudaEventRecord}). Thread-safe across members; each member's iterator is for its own thread.
 *
 * <p>Owned by the loader: the next {@link GdsLoader#groupEpoch()} or {@link GdsLoader#close()} ends it, releasing the
 * batches pulled for members that never took them.
 */
public final class GroupEpoch {
    private final FanOut<Batch> fanOut;
    private final List<Integer> devices;
    private final Supplier<LoaderStats> loaderStats;
    private final String reason;
    private final AtomicLongArray delivered;
    private final AtomicLong fanOutBytes;
    private final ConcurrentLinkedQueue<ReleaseGroup> groups = new ConcurrentLinkedQueue<>();
    private final boolean[] taken;

    GroupEpoch(EpochPipeline pipe, PrefetchRing ring, FanOutPlan plan, GroupSlots slots, Supplier<LoaderStats> loaderStats) {
        this.devices = plan.devices();
        this.loaderStats = loaderStats;
        this.reason = plan.reason();
        int k = devices.size();
        this.delivered = new AtomicLongArray(k);
        this.fanOutBytes = new AtomicLong();
        this.taken = new boolean[k];
        this.fanOut = new FanOut<>(k, () -> {
            if (!pipe.hasNext()) {
                return null;
            }
            Batch first = pipe.next();
            if (k == 1) {
                return List.of(first); // a group of one: the plain loader's batch itself
            }
            RingEntry e = ring.entries().get(first.slot);
            if (slots != null) {
                fanOutBytes.addAndGet(slots.issue(e));
            }
            ReleaseGroup rg = new ReleaseGroup(k, first::close, first.describe());
            groups.add(rg);
            List<Batch> out = new ArrayList<>(k);
            out.add(first.sibling(e.views, e.memory.ready(), (b, stream) -> {
                if (stream != null) {
                    e.memory.releaseOn(stream);
                }
                rg.release(0);
            }));
            for (int m = 1; m < k; m++) {
                int member = m;
                if (slots == null) { // the host path: every member reads the one host slot
                    out.add(first.sibling(e.views, null, (b, stream) -> rg.release(member)));
                } else {
                    GroupSlots.MemberSlot t = slots.member(e.index, m);
                    out.add(first.sibling(t.views, t.ready, (b, stream) -> {
                        if (stream != null) {
                            slots.releaseOn(e.index, member, stream);
                        }
                        rg.release(member);
                    }));
                }
            }
            groups.removeIf(g -> g.outstanding().isEmpty());
            return out;
        });
    }

    /** @return the group's CUDA ordinals, member 0 (the GPU read into) first */
    public List<Integer> devices() {
        return devices;
    }

    /**
     * Member {@code m}'s batches, in the epoch's order. Call once per member, on the member's consumer thread.
     *
     * @param m the member, {@code 0 <= m < devices().size()} (its GPU is {@code devices().get(m)})
     * @return an iterator whose {@code hasNext()} may wait for the next batch's reads; its batches belong to the member
     * @throws IndexOutOfBoundsException if {@code m} is not a member
     * @throws IllegalStateException if member {@code m}'s iterator was already taken
     */
    public Iterator<Batch> member(int m) {
        java.util.Objects.checkIndex(m, devices.size());
        synchronized (taken) {
            if (taken[m]) {
                throw new IllegalStateException("member " + m + " (GPU " + devices.get(m) + ") of this group epoch was already "
                        + "given its iterator: one consumer per member");
            }
            taken[m] = true;
        }
        return new Iterator<>() {
            private Batch next;
            private boolean ended;

            @Override
            public boolean hasNext() {
                if (next == null && !ended) {
                    next = fanOut.next(m);
                    ended = next == null;
                }
                return next != null;
            }

            @Override
            public Batch next() {
                if (!hasNext()) {
                    throw new NoSuchElementException("member " + m + ": the epoch is over after " + delivered.get(m) + " batches");
                }
                Batch b = next;
                next = null;
                delivered.incrementAndGet(m);
                return b;
            }
        };
    }

    /**
     * Counters of the group's epoch.
     *
     * @param loader the loader's counters: {@link LoaderStats#storageBytes()} is what the group read from storage (once,
     *     however many members), {@link LoaderStats#batches()} the batches read
     * @param memberBatches batches each member took, in member order
     * @param fanOutBytes bytes copied to the members after the first (summed over members; a host-staged batch's copy to
     *     pinned memory counted once more)
     * @param reason how each member gets its copy and why
     */
    public record Stats(LoaderStats loader, List<Long> memberBatches, long fanOutBytes, String reason) {
        /** Copies the list. */
        public Stats {
            memberBatches = List.copyOf(memberBatches);
        }
    }

    /** @return the counters so far */
    public Stats stats() {
        List<Long> per = new ArrayList<>();
        for (int m = 0; m < delivered.length(); m++) {
            per.add(delivered.get(m));
        }
        return new Stats(loaderStats.get(), per, fanOutBytes.get(), reason);
    }

    /**
     * Releases the batches pulled for members that never took them (they were never handed out).
     *
     * @return one line per batch some member still holds (empty if none)
     */
    List<String> drain() {
        fanOut.drain(Batch::close);
        List<String> held = new ArrayList<>();
        for (ReleaseGroup g : groups) {
            List<Integer> out = g.outstanding();
            if (!out.isEmpty()) {
                held.add(g.what() + ": member(s) " + out);
            }
        }
        return Collections.unmodifiableList(held);
    }

    /**
     * Ends the epoch for good (the loader closes): queued batches released, every batch's release rule closed, so a
     * member releasing later throws instead of reaching freed slots.
     *
     * @return one line per batch members still held (empty if none)
     */
    List<String> close() {
        fanOut.drain(Batch::close);
        List<String> held = new ArrayList<>();
        for (ReleaseGroup g : groups) {
            try {
                g.close();
            } catch (IllegalStateException e) {
                held.add(e.getMessage());
            }
        }
        return Collections.unmodifiableList(held);
    }
}
