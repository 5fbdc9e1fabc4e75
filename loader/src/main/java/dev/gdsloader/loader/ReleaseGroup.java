package dev.gdsloader.loader;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The release rule of a device group: one batch read once into the first device's slot is handed to every member
 * (one consumer per device), each member releases its own copy once, and the slot goes back to the ring only when
 * every member has released. Members are numbered 0..members-1 (the group's order, not CUDA ordinals).
 *
 * <p>Thread-safe: members release from their own threads (one atomic bit mask); {@code onAllReleased} runs exactly
 * once, on the thread of the last release. Misuse throws: a member releasing twice, a member out of range, a release
 * after {@link #close()}; closing while members still hold the batch throws naming them.
 */
final class ReleaseGroup {
    /** Most members a group may have (one bit each). */
    static final int MAX_MEMBERS = 64;

    private final int members;
    private final long all;
    private final Runnable onAllReleased;
    private final String what;
    private final AtomicLong released = new AtomicLong();
    private volatile boolean closed;

    /**
     * @param members members holding the batch, 1..{@value #MAX_MEMBERS}
     * @param onAllReleased what gives the slot back, run once after the last member's release
     * @param what the batch, for messages (e.g. "batch 3 of epoch 0")
     * @throws IllegalArgumentException if {@code members} is out of range
     */
    ReleaseGroup(int members, Runnable onAllReleased, String what) {
        if (members < 1 || members > MAX_MEMBERS) {
            throw new IllegalArgumentException("a device group has 1.." + MAX_MEMBERS + " members, got " + members);
        }
        this.members = members;
        this.all = members == 64 ? -1L : (1L << members) - 1;
        this.onAllReleased = onAllReleased;
        this.what = what;
    }

    /**
     * Member {@code m} is done with the batch; the last member's release gives the slot back.
     *
     * @param m the member, 0..members-1
     * @return true if this was the last release (the slot went back)
     * @throws IndexOutOfBoundsException if {@code m} is not a member
     * @throws IllegalStateException if {@code m} released already, or the group was closed
     */
    boolean release(int m) {
        java.util.Objects.checkIndex(m, members);
        if (closed) {
            throw new IllegalStateException(what + ": member " + m + " released after the device group's epoch was closed");
        }
        long bit = 1L << m;
        while (true) {
            long r = released.get();
            if ((r & bit) != 0) {
                throw new IllegalStateException(what + ": member " + m + " of the device group released it twice");
            }
            if (released.compareAndSet(r, r | bit)) {
                if ((r | bit) == all) {
                    onAllReleased.run();
                    return true;
                }
                return false;
            }
        }
    }

    /** @return the batch, as named in messages */
    String what() {
        return what;
    }

    /** @return the members that have not released yet, in order */
    List<Integer> outstanding() {
        long r = released.get();
        List<Integer> out = new ArrayList<>();
        for (int m = 0; m < members; m++) {
            if ((r & (1L << m)) == 0) {
                out.add(m);
            }
        }
        return out;
    }

    /**
     * Ends the group: later releases throw.
     *
     * @throws IllegalStateException naming the batch and the members that still hold it, if any (the group is closed
     *     all the same, and the slot is not given back)
     */
    void close() {
        closed = true;
        List<Integer> held = outstanding();
        if (!held.isEmpty()) {
            throw new IllegalStateException(what + " is still held by device group member(s) " + held
                    + ": its slot cannot go back to the ring");
        }
    }
}
