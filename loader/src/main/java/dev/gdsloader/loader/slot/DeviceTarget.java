package dev.gdsloader.loader.slot;

import dev.gdsloader.loader.spi.SlotMemory;
import dev.gdsloader.memory.NativeAllocator;
import dev.gdsloader.cuda.Closeables;
import dev.gdsloader.cuda.CudaEvent;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import java.lang.foreign.MemorySegment;

/**
 * The device half of a slot on a device path: device memory the views point into, the slot's stream (its
 * copies run there in issue order), the event recorded after a batch's last copy and the event the consumer's
 * release is recorded on. Engines compose it into their slot-memory classes.
 *
 * <p>Owned by the slot that made it; {@link #close()} waits for the stream and frees everything once.
 */
public final class DeviceTarget implements SlotMemory {
    private final DeviceBuffer device;
    private final CudaStream stream;
    private final CudaEvent ready;
    private final CudaEvent released;
    private final boolean ownsStream;
    private volatile boolean releasePending;
    private boolean closed;

    private DeviceTarget(DeviceBuffer device, CudaStream stream, boolean ownsStream, CudaEvent ready, CudaEvent released) {
        this.device = device;
        this.stream = stream;
        this.ownsStream = ownsStream;
        this.ready = ready;
        this.released = released;
    }

    /**
     * Allocates {@code bytes} of device memory, a stream and two events on the current device; on a failure
     * frees what it had made before rethrowing.
     *
     * @param bytes device bytes, &gt; 0
     * @param allocator the allocator the device memory is charged to
     * @return the target, owned by the caller
     * @throws dev.gdsloader.cuda.CudaException if CUDA cannot allocate
     * @throws dev.gdsloader.memory.MemoryBudgetException if the allocator's device budget refuses it
     */
    public static DeviceTarget allocate(long bytes, NativeAllocator allocator) {
        return SlotAllocation.build(owner -> {
            DeviceBuffer d = owner.add(DeviceBuffer.allocate(bytes, allocator));
            CudaStream s = owner.add(CudaStream.create());
            CudaEvent r = owner.add(CudaEvent.create());
            CudaEvent rel = owner.add(CudaEvent.create());
            return new DeviceTarget(d, s, true, r, rel);
        });
    }

    /**
     * As {@link #allocate(long, NativeAllocator)}, but the slot's work is issued on {@code shared}, a stream its
     * engine owns and gives every slot of the ring (their batches then run on the device one after another, in issue
     * order); {@link #close()} synchronizes that stream but does not destroy it.
     *
     * @param bytes device bytes, &gt; 0
     * @param allocator the allocator the device memory is charged to
     * @param shared the stream, owned by the caller, open until this target is closed
     * @return the target, owned by the caller
     * @throws dev.gdsloader.cuda.CudaException if CUDA cannot allocate
     * @throws dev.gdsloader.memory.MemoryBudgetException if the allocator's device budget refuses it
     */
    public static DeviceTarget allocate(long bytes, NativeAllocator allocator, CudaStream shared) {
        java.util.Objects.requireNonNull(shared, "shared");
        return SlotAllocation.build(owner -> {
            DeviceBuffer d = owner.add(DeviceBuffer.allocate(bytes, allocator));
            CudaEvent r = owner.add(CudaEvent.create());
            CudaEvent rel = owner.add(CudaEvent.create());
            return new DeviceTarget(d, shared, false, r, rel);
        });
    }

    @Override
    public DeviceBuffer device() {
        return device;
    }

    @Override
    public MemorySegment hostTarget() {
        return null;
    }

    /** @return the slot's stream: every copy into {@link #device()} is issued here */
    public CudaStream stream() {
        return stream;
    }

    @Override
    public CudaEvent ready() {
        return ready;
    }

    @Override
    public void releaseOn(CudaStream consumerStream) {
        released.record(consumerStream);
        releasePending = true;
    }

    @Override
    public void awaitReusable() {
        if (releasePending) {
            released.synchronize();
            releasePending = false;
        }
        ready.synchronize();
    }

    /**
     * Orders the slot's next work after the consumer's release, on the device: if the consumer released the last batch
     * on its stream, the slot's stream waits for that release event ({@code cudaStreamWaitEvent}); this thread does not
     * block. Work issued on {@link #stream()} afterwards runs after the consumer's queued work on the batch and after
     * the slot's own earlier work (stream order). For engines whose every write into the slot is issued on
     * {@link #stream()}; engines that write the slot or its staging from the host use {@link #awaitReusable()}.
     * Called by the one thread refilling the slot.
     */
    public void orderAfterRelease() {
        if (releasePending) {
            stream.waitFor(released);
            releasePending = false;
        }
    }

    @Override
    public void quiesce() {
        stream.synchronize();
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        Exception first = Closeables.closeAll(stream::synchronize, released, ready, ownsStream ? stream : null, device);
        if (first != null) {
            throw new IllegalStateException("device slot memory: freeing failed: " + first.getMessage(), first);
        }
    }
}
