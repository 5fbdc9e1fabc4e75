package dev.gdsloader.loader.slot;

import dev.gdsloader.cuda.Closeables;
import dev.gdsloader.cuda.CudaEvent;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.PinnedBuffer;
import dev.gdsloader.cufile.CuFileBufferRegistration;
import dev.gdsloader.memory.NativeAllocator;
import dev.gdsloader.posix.AlignedMemory;
import java.lang.foreign.MemorySegment;

/**
 * One entry of the prefetch ring: the memory one batch lands in, plus the stream its copies run on and
 * the events that say when its data is ready and when the consumer has let go of it.
 *
 * <p>What a slot holds depends on the path: GDS has device memory (registered with cuFile); BOUNCE has
 * device memory and pinned staging; HOST has host target and host staging. Owned by the loader, handed
 * to one batch at a time; {@link #close()} frees everything it holds, once, in reverse order of creation.
 */
public final class Slot implements AutoCloseable {
    private final int index;
    private final SlotLayout layout;
    private final DeviceBuffer device;
    private final PinnedBuffer pinned;
    private final PinnedBuffer packed;
    private final AlignedMemory hostTarget;
    private final AlignedMemory hostStaging;
    private final CudaStream stream;
    private final CudaEvent ready;
    private final CudaEvent released;
    private final CuFileBufferRegistration registration;
    private volatile boolean releasePending;
    private boolean closed;

    private Slot(Builder b) {
        this.index = b.index;
        this.layout = b.layout;
        this.device = b.device;
        this.pinned = b.pinned;
        this.packed = b.packed;
        this.hostTarget = b.hostTarget;
        this.hostStaging = b.hostStaging;
        this.stream = b.stream;
        this.ready = b.ready;
        this.released = b.released;
        this.registration = b.registration;
    }

    /** @return position in the ring */
    public int index() {
        return index;
    }

    /** @return the region layout */
    public SlotLayout layout() {
        return layout;
    }

    /** @return device target memory, or null on the host path */
    public DeviceBuffer device() {
        return device;
    }

    /** @return pinned staging memory (bounce path), or null */
    public PinnedBuffer pinned() {
        return pinned;
    }

    /**
     * @return pinned memory where the bounce path packs the small records of a batch into their view layout, so
     *     that they go to the device in one copy per column; or null where no column's records are small
     */
    public PinnedBuffer packed() {
        return packed;
    }

    /** @return host target memory (host path), or null */
    public MemorySegment hostTarget() {
        return hostTarget == null ? null : hostTarget.segment();
    }

    /** @return staging memory for the staged paths: pinned (bounce) or plain aligned host memory (host) */
    public MemorySegment staging() {
        return pinned != null ? pinned.segment() : hostStaging == null ? null : hostStaging.segment();
    }

    /** @return the slot's stream, or null on the host path */
    public CudaStream stream() {
        return stream;
    }

    /** @return the event recorded after the batch's last copy, or null on the host path */
    public CudaEvent ready() {
        return ready;
    }

    /**
     * Marks the slot released on the consumer's stream: records {@code released} there, so the loader
     * refills the slot only after the consumer's queued work on it has run.
     *
     * @param consumerStream the consumer's stream
     */
    public void releaseOn(CudaStream consumerStream) {
        released.record(consumerStream);
        releasePending = true;
    }

    /**
     * Blocks until the slot may be refilled: the consumer's release event (if any) and the slot's own last
     * copies (the pinned staging must not be overwritten under an in-flight copy) have completed.
     */
    public void awaitReusable() {
        if (releasePending) {
            released.synchronize();
            releasePending = false;
        }
        if (ready != null) {
            ready.synchronize();
        }
    }

    /**
     * Waits for every copy already enqueued on the slot's stream (after a failed batch, whose ready event
     * was never recorded); does nothing on the host path.
     */
    public void quiesce() {
        if (stream != null) {
            stream.synchronize();
        }
    }

    /** Frees everything the slot holds, once. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        Exception first = Closeables.closeAll(registration, stream == null ? null : (AutoCloseable) stream::synchronize,
                released, ready, stream, device, pinned, packed, hostTarget, hostStaging);
        if (first != null) {
            throw new IllegalStateException("slot " + index + ": freeing failed: " + first.getMessage(), first);
        }
    }

    /**
     * Allocates what a slot of one read path needs, on a {@link Builder}.
     *
     * @param <E> the checked exception the allocation may throw ({@link RuntimeException} where none)
     */
    @FunctionalInterface
    public interface Recipe<E extends Exception> {
        /**
         * @param builder the slot being built; each {@code with...} call hands its resource to it
         * @throws E if an allocation fails
         */
        void allocate(Builder builder) throws E;
    }

    /**
     * Builds one slot of the ring: runs {@code recipe} and returns the slot owning everything it allocated.
     * If the recipe throws (an exception or an error, such as running out of host memory), whatever it had
     * allocated is freed before the throwable propagates, so a half-built slot never leaks.
     *
     * @param index position in the ring
     * @param layout region layout
     * @param allocator the allocator every {@code with...} call charges its memory to
     * @param recipe the allocations, e.g. {@code b -> b.withDevice().withPinnedStaging()}
     * @param <E> the checked exception the recipe may throw
     * @return the slot; the caller owns it and closes it
     * @throws E what the recipe threw, after freeing its allocations
     * @throws dev.gdsloader.memory.MemoryBudgetException if the allocator's budget refuses an allocation (after
     *     freeing the others)
     */
    public static <E extends Exception> Slot assemble(int index, SlotLayout layout, NativeAllocator allocator, Recipe<E> recipe)
            throws E {
        Builder b = new Builder(index, layout, allocator);
        try {
            recipe.allocate(b);
        } catch (Throwable t) {
            try {
                new Slot(b).close();
            } catch (Throwable c) {
                t.addSuppressed(c);
            }
            throw t;
        }
        return new Slot(b);
    }

    /**
     * Collects a slot's resources for {@link #assemble}; each {@code with...} call takes its memory from the
     * builder's {@link NativeAllocator} and hands ownership of it to the slot being built. Not thread-safe; used by
     * one thread during {@link #assemble}.
     */
    public static final class Builder {
        private final int index;
        private final SlotLayout layout;
        private final NativeAllocator allocator;
        private DeviceBuffer device;
        private PinnedBuffer pinned;
        private PinnedBuffer packed;
        private AlignedMemory hostTarget;
        private AlignedMemory hostStaging;
        private CudaStream stream;
        private CudaEvent ready;
        private CudaEvent released;
        private CuFileBufferRegistration registration;

        private Builder(int index, SlotLayout layout, NativeAllocator allocator) {
            this.index = index;
            this.layout = layout;
            this.allocator = java.util.Objects.requireNonNull(allocator, "allocator");
        }

        /**
         * Allocates device target memory, a stream and two events on the current device.
         *
         * @return this
         */
        public Builder withDevice() {
            device = DeviceBuffer.allocate(layout.targetBytes(), allocator);
            stream = CudaStream.create();
            ready = CudaEvent.create();
            released = CudaEvent.create();
            return this;
        }

        /**
         * Allocates pinned staging memory.
         *
         * @return this
         */
        public Builder withPinnedStaging() {
            pinned = PinnedBuffer.allocate(layout.stagingBytes(), allocator);
            return this;
        }

        /**
         * Allocates pinned memory for packed small records ({@link Slot#packed()}).
         *
         * @param bytes its size, bytes; 0 allocates nothing
         * @return this
         */
        public Builder withPinnedPacking(long bytes) {
            if (bytes > 0) {
                packed = PinnedBuffer.allocate(bytes, allocator);
            }
            return this;
        }

        /**
         * Allocates host target and host staging memory.
         *
         * @return this
         */
        public Builder withHostMemory() {
            hostTarget = new AlignedMemory(layout.targetBytes(), dev.gdsloader.posix.PosixFile.DIRECT_ALIGNMENT, allocator);
            hostStaging = new AlignedMemory(layout.stagingBytes(), dev.gdsloader.posix.PosixFile.DIRECT_ALIGNMENT, allocator);
            return this;
        }

        /**
         * Registers the device memory with cuFile.
         *
         * @return this
         * @throws dev.gdsloader.cufile.CuFileException if registration fails
         */
        public Builder withCuFileRegistration() throws dev.gdsloader.cufile.CuFileException {
            registration = CuFileBufferRegistration.register(device, allocator);
            return this;
        }

    }
}
