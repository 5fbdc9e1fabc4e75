package dev.gdsloader.loader;

import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.formats.DType;
import java.lang.foreign.MemorySegment;

/**
 * One column's state in one slot of the ring: where the column lands in the slot's memory and, refilled by
 * {@link #fill} for each batch the slot holds, its record count, size and offset. The consumer never sees it:
 * each {@link Batch} wraps it in its own {@link ColumnView}, which checks the batch is still held before reading
 * it. Written by the consumer thread in {@code EpochPipeline.next()} before the batch is handed over, read by it
 * while the batch is held.
 */
final class SlotColumn {
    final String name;
    final DType dtype;
    final long[] recordShape;
    final DeviceBuffer device;
    final MemorySegment hostTarget;
    int records;
    long bytes;
    long offset;
    MemorySegment host;

    /**
     * @param name column name
     * @param dtype element type
     * @param recordShape shape of one record
     * @param device the slot's device memory, or null on the host path
     * @param hostTarget the slot's host memory, or null on device paths
     */
    SlotColumn(String name, DType dtype, long[] recordShape, DeviceBuffer device, MemorySegment hostTarget) {
        this.name = name;
        this.dtype = dtype;
        this.recordShape = recordShape.clone();
        this.device = device;
        this.hostTarget = hostTarget;
    }

    /**
     * @param batchRecords records of the batch now in the slot
     * @param viewBytes the column's bytes in it
     * @param viewOffset where they start in the slot's target memory
     */
    void fill(int batchRecords, long viewBytes, long viewOffset) {
        records = batchRecords;
        bytes = viewBytes;
        offset = viewOffset;
        host = hostTarget == null ? null : hostTarget.asSlice(viewOffset, viewBytes);
    }
}
