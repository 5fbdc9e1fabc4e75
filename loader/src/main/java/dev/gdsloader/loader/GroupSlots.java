package dev.gdsloader.loader;

import dev.gdsloader.cuda.Closeables;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaEvent;
import dev.gdsloader.cuda.CudaPeers;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.PinnedBuffer;
import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.memory.NativeAllocator;
import java.util.ArrayList;
import java.util.List;

/**
 * The other members' copies of each ring slot in a device group on a device path: per ring entry and member after the
 * first, device memory of the slot's target size on the member's GPU, a stream there, a ready event (recorded after
 * the member's copy) and a release event (recorded on the member's consumer stream); per entry, where a member gets
 * its copy through host memory, a pinned staging buffer with a stream and an event on the first GPU. Copies are
 * ordered by events only (no host wait): a member's stream waits for the first slot's ready event (peer copy) or for
 * the staging event (host-staged), copies each column's view to the same offset, and records its ready event.
 *
 * <p>Owned by the loader; {@link #close()} waits for every stream and frees everything once, after all I/O stopped.
 * {@link #issue} runs on the thread that pulls a batch for the group, {@link #awaitReusable} on the reader thread,
 * {@link #releaseOn} on a member's consumer thread; the ring's queues order them as they order the slot itself.
 */
final class GroupSlots implements AutoCloseable {
    /** One member's copy of one slot. */
    static final class MemberSlot {
        final int device;
        final DeviceBuffer buffer;
        final CudaStream stream;
        final CudaEvent ready;
        final CudaEvent released;
        final SlotColumn[] views;
        volatile boolean releasePending;

        MemberSlot(int device, DeviceBuffer buffer, CudaStream stream, CudaEvent ready, CudaEvent released, SlotColumn[] views) {
            this.device = device;
            this.buffer = buffer;
            this.stream = stream;
            this.ready = ready;
            this.released = released;
            this.views = views;
        }
    }

    /** One slot's pinned staging, on the first GPU. */
    private record Staging(PinnedBuffer pinned, CudaStream stream, CudaEvent staged) {
    }

    private final FanOutPlan plan;
    private final int first;
    private final MemberSlot[][] members; // [entry][member], member 0 null
    private final Staging[] staging; // [entry], null entries where no member is host-staged
    private boolean closed;

    private GroupSlots(FanOutPlan plan, MemberSlot[][] members, Staging[] staging) {
        this.plan = plan;
        this.first = plan.devices().get(0);
        this.members = members;
        this.staging = staging;
    }

    /**
     * Turns peer access on for the plan's peer members (both ways) and allocates every member's slots; on a failure
     * frees what it made.
     *
     * @param plan the group's plan (a device path, two or more members)
     * @param entries the ring's entries
     * @param columns the dataset's columns
     * @param targetBytes a slot's target size ({@link dev.gdsloader.loader.spi.SlotLayout#targetBytes()})
     * @param allocator the loader's allocator: every buffer is charged to it
     * @return the slots, owned by the caller
     * @throws dev.gdsloader.cuda.CudaException if peer access or an allocation fails
     * @throws dev.gdsloader.memory.MemoryBudgetException if the allocator's budget refuses a buffer
     */
    static GroupSlots allocate(FanOutPlan plan, int entries, List<Column> columns, long targetBytes, NativeAllocator allocator) {
        int k = plan.devices().size();
        int first = plan.devices().get(0);
        MemberSlot[][] members = new MemberSlot[entries][k];
        Staging[] staging = new Staging[entries];
        GroupSlots made = new GroupSlots(plan, members, staging);
        int previous = CudaDevice.current();
        try {
            for (int m = 1; m < k; m++) {
                int d = plan.devices().get(m);
                CudaDevice.makeCurrent(d); // creates the member's primary context once, on this thread
                if (plan.ways().get(m) == FanOutPlan.Way.PEER) {
                    CudaPeers.enable(d, first);
                    CudaPeers.enable(first, d);
                }
            }
            for (int e = 0; e < entries; e++) {
                for (int m = 1; m < k; m++) {
                    int d = plan.devices().get(m);
                    CudaDevice.use(d);
                    SlotColumn[] views = new SlotColumn[columns.size()];
                    DeviceBuffer b = DeviceBuffer.allocate(targetBytes, allocator);
                    CudaStream s = null;
                    CudaEvent r = null;
                    try {
                        s = CudaStream.create();
                        r = CudaEvent.create();
                        CudaEvent rel = CudaEvent.create();
                        for (int c = 0; c < views.length; c++) {
                            Column col = columns.get(c);
                            views[c] = new SlotColumn(col.name(), col.dtype(), col.recordShape(), b, null);
                        }
                        members[e][m] = new MemberSlot(d, b, s, r, rel, views);
                    } catch (RuntimeException | Error x) {
                        Closeables.closeAll(r, s, b);
                        throw x;
                    }
                }
                if (plan.staged()) {
                    CudaDevice.use(first);
                    PinnedBuffer p = PinnedBuffer.allocate(targetBytes, allocator);
                    CudaStream s = null;
                    try {
                        s = CudaStream.create();
                        staging[e] = new Staging(p, s, CudaEvent.create());
                    } catch (RuntimeException | Error x) {
                        Closeables.closeAll(s, p);
                        throw x;
                    }
                }
            }
        } catch (RuntimeException | Error x) {
            try {
                made.close();
            } catch (RuntimeException c) {
                x.addSuppressed(c);
            }
            throw x;
        } finally {
            CudaDevice.use(previous);
        }
        return made;
    }

    /**
     * Enqueues every member's copy of the batch entry {@code e} holds (its views filled, its reads done and its ready
     * event recorded on the first GPU), and fills each member's column state with the same records, sizes and offsets.
     *
     * @param e the entry
     * @return bytes copied to the members (summed over members and columns; a host-staged batch's device-to-host copy
     *     counted once more)
     * @throws dev.gdsloader.cuda.CudaException if a copy cannot be enqueued
     */
    long issue(RingEntry e) {
        DeviceBuffer src = e.memory.device();
        CudaEvent srcReady = e.memory.ready();
        long copied = 0;
        int previous = CudaDevice.current();
        try {
            Staging st = staging[e.index];
            if (st != null) {
                CudaDevice.use(first);
                st.stream().waitFor(srcReady);
                for (SlotColumn v : e.views) {
                    st.stream().copyToHost(st.pinned(), v.offset, src, v.offset, v.bytes);
                    copied += v.bytes;
                }
                st.staged().record(st.stream());
            }
            for (int m = 1; m < members[e.index].length; m++) {
                MemberSlot t = members[e.index][m];
                CudaDevice.use(t.device);
                boolean peer = plan.ways().get(m) == FanOutPlan.Way.PEER;
                t.stream.waitFor(peer ? srcReady : st.staged());
                for (int c = 0; c < e.views.length; c++) {
                    SlotColumn v = e.views[c];
                    if (peer) {
                        t.stream.copyPeer(t.buffer, v.offset, src, v.offset, v.bytes);
                    } else {
                        t.stream.copyToDevice(t.buffer, v.offset, st.pinned(), v.offset, v.bytes);
                    }
                    t.views[c].fill(v.records, v.bytes, v.offset);
                    copied += v.bytes;
                }
                t.ready.record(t.stream);
            }
        } finally {
            CudaDevice.use(previous);
        }
        return copied;
    }

    /**
     * @param entry a ring entry's index
     * @param m a member, &ge; 1
     * @return that member's copy of the entry
     */
    MemberSlot member(int entry, int m) {
        return members[entry][m];
    }

    /**
     * Marks member {@code m}'s copy of the entry released on its consumer's stream (an event recorded there), so the
     * entry is refilled only after the consumer's queued work on it ran.
     *
     * @param entry the entry's index
     * @param m the member, &ge; 1
     * @param consumerStream the member's consumer stream, on the member's GPU
     * @throws dev.gdsloader.cuda.CudaException if the stream is on another GPU ({@code cudaEventRecord} refuses)
     */
    void releaseOn(int entry, int m, CudaStream consumerStream) {
        MemberSlot t = members[entry][m];
        t.released.record(consumerStream);
        t.releasePending = true;
    }

    /**
     * Blocks until every member's consumer work on the entry (its release events) and every copy out of the entry (the
     * members' ready events, after the staging copy) completed: then the engine may refill the first GPU's slot and the
     * next batch's copies may overwrite the members'.
     *
     * @param entry the entry's index
     */
    void awaitReusable(int entry) {
        for (int m = 1; m < members[entry].length; m++) {
            MemberSlot t = members[entry][m];
            if (t.releasePending) {
                t.released.synchronize();
                t.releasePending = false;
            }
            t.ready.synchronize();
        }
    }

    /**
     * Waits for every stream and frees every buffer, stream and event once.
     *
     * @throws IllegalStateException naming the first failure (the rest is still freed)
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        int previous = CudaDevice.current();
        List<AutoCloseable> all = new ArrayList<>();
        for (int e = 0; e < members.length; e++) {
            for (MemberSlot t : members[e]) {
                if (t != null) {
                    int d = t.device;
                    all.add(() -> CudaDevice.use(d)); // free each member's resources with its GPU current
                    all.add(t.stream::synchronize);
                    all.add(t.released);
                    all.add(t.ready);
                    all.add(t.stream);
                    all.add(t.buffer);
                }
            }
            if (staging[e] != null) {
                all.add(() -> CudaDevice.use(first));
                all.add(staging[e].stream()::synchronize);
                all.add(staging[e].staged());
                all.add(staging[e].stream());
                all.add(staging[e].pinned());
            }
        }
        all.add(() -> CudaDevice.use(previous));
        Exception firstFailure = Closeables.closeAll(all.toArray(AutoCloseable[]::new));
        if (firstFailure != null) {
            throw new IllegalStateException("device group slots: freeing failed: " + firstFailure.getMessage(), firstFailure);
        }
    }
}
