package dev.gdsloader.posix;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.memory.MemoryBudgetException;
import dev.gdsloader.memory.MemoryKind;
import dev.gdsloader.memory.NativeAllocator;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Test;

/** {@link AlignedMemory}: alignment, size, close. */
class AlignedMemoryTest {

    @Test
    void addressIsAlignedTo4096AndSizeIsExact() {
        for (long size : new long[] {1, 100, 4095, 4096, 4097, 3 * 4096 + 100, 1 << 20}) {
            try (AlignedMemory m = new AlignedMemory(size)) {
                assertEquals(0, m.segment().address() % PosixFile.DIRECT_ALIGNMENT, "size " + size);
                assertEquals(size, m.segment().byteSize());
            }
        }
    }

    @Test
    void memoryIsWritableAndReadableToTheLastByte() {
        try (AlignedMemory m = new AlignedMemory(8193)) {
            m.segment().set(ValueLayout.JAVA_BYTE, 8192, (byte) 42);
            assertEquals(42, m.segment().get(ValueLayout.JAVA_BYTE, 8192));
            assertThrows(IndexOutOfBoundsException.class, () -> m.segment().get(ValueLayout.JAVA_BYTE, 8193));
        }
    }

    @Test
    void closingTwiceIsHarmlessAndTheSegmentIsDeadAfterwards() {
        AlignedMemory m = new AlignedMemory(4096);
        MemorySegment s = m.segment();
        m.close();
        assertDoesNotThrow(m::close);
        assertThrows(IllegalStateException.class, () -> s.get(ValueLayout.JAVA_BYTE, 0));
    }

    @Test
    void aSliceCannotOutliveItsMemory() {
        AlignedMemory m = new AlignedMemory(3 * 4096);
        MemorySegment slice = m.segment().asSlice(4096, 100);
        slice.set(ValueLayout.JAVA_BYTE, 99, (byte) 7);
        assertEquals(7, slice.get(ValueLayout.JAVA_BYTE, 99));
        m.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> slice.get(ValueLayout.JAVA_BYTE, 99));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> MemorySegment.copy(slice, 0, MemorySegment.ofArray(new byte[8]), 0, 8));
    }

    @Test
    void itIsChargedToItsAllocatorUntilClosed() {
        try (NativeAllocator a = NativeAllocator.root().newChild("aligned test", 3 * 4096, NativeAllocator.UNLIMITED)) {
            AlignedMemory m = new AlignedMemory(2 * 4096, 4096, a);
            assertEquals(2 * 4096, a.usage().bytes(MemoryKind.HOST));
            assertEquals(2 * 4096, NativeAllocator.root().usage().bytes(MemoryKind.HOST));
            MemoryBudgetException e = assertThrows(MemoryBudgetException.class, () -> new AlignedMemory(2 * 4096, 4096, a));
            assertTrue(e.getMessage().contains("'aligned test' has a host budget of 12288 B"), e.getMessage());
            m.close();
            m.close();
            assertEquals(0, a.outstandingBytes());
            assertEquals(0, NativeAllocator.root().outstandingBytes());
        }
    }

    @Test
    void nonPositiveSizeIsRejectedWithTheSize() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new AlignedMemory(0));
        assertTrue(e.getMessage().contains("0"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new AlignedMemory(-4096));
    }
}
