package dev.gdsloader.loader.slot;

import dev.gdsloader.cuda.CudaEvent;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.loader.spi.SlotMemory;
import java.lang.foreign.MemorySegment;

/**
 * Slot memory built around a target ({@link DeviceTarget} or {@link HostTarget}) plus what an engine adds (staging,
 * a packed image, a cuFile registration): everything the ring and the views need is the target's, so an engine's
 * slot class implements only {@link #target()} and {@link #close()} (which must close the target too).
 */
public interface ComposedSlot extends SlotMemory {
    /** @return the memory the views live in, with its stream and events where it is on the device */
    SlotMemory target();

    @Override
    default DeviceBuffer device() {
        return target().device();
    }

    @Override
    default MemorySegment hostTarget() {
        return target().hostTarget();
    }

    @Override
    default CudaEvent ready() {
        return target().ready();
    }

    @Override
    default void releaseOn(CudaStream consumerStream) {
        target().releaseOn(consumerStream);
    }

    @Override
    default void awaitReusable() {
        target().awaitReusable();
    }

    @Override
    default void quiesce() {
        target().quiesce();
    }
}
