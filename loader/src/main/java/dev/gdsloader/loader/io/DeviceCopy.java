package dev.gdsloader.loader.io;

import dev.gdsloader.cuda.PinnedBuffer;
import dev.gdsloader.loader.slot.DeviceTarget;
import java.lang.foreign.MemorySegment;

/**
 * {@link CopyStep} into device memory: {@code cudaMemcpyAsync} from pinned memory on the slot's stream, and the
 * slot's ready event recorded after the last one. Thread-safe (copies on one stream run in issue order).
 *
 * @param target the slot's device memory, stream and events
 * @param sources the slot's pinned buffers a copy may come from (staging, packed image)
 */
@SuppressWarnings("ArrayRecordComponent") // the slot's buffers, never compared
public record DeviceCopy(DeviceTarget target, PinnedBuffer... sources) implements CopyStep {
    @Override
    public void copy(MemorySegment src, long srcOffset, long targetOffset, long bytes) {
        target.stream().copyToDevice(target.device(), targetOffset, pinned(src), srcOffset, bytes);
    }

    @SuppressWarnings({"ReferenceEquality", "MemorySegmentReferenceEquality"}) // src is one of these buffers' own segment
    private PinnedBuffer pinned(MemorySegment src) {
        for (PinnedBuffer p : sources) {
            if (p != null && p.segment() == src) {
                return p;
            }
        }
        throw new IllegalArgumentException("copy source at 0x" + Long.toHexString(src.address())
                + " is not pinned memory of this slot");
    }

    @Override
    public void finish() {
        target.ready().record(target.stream());
    }
}
