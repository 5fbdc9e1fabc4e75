package dev.gdsloader.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gdsloader.cufile.CuFileBufferRegistration;
import dev.gdsloader.cufile.CuFileProbe;
import dev.gdsloader.cufile.CuFileStatus;
import dev.gdsloader.memory.MemoryBudgetException;
import dev.gdsloader.memory.MemoryKind;
import dev.gdsloader.memory.NativeAllocator;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Device memory, pinned memory and cuFile registrations through the allocator, on a real GPU; skipped without one. */
@Tag("gpu")
class NativeAllocatorGpuTest {
    private static final long MIB = 1L << 20;

    @BeforeAll
    static void needsGpu() {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        CudaDevice.makeCurrent(0);
    }

    @Test
    void deviceAndPinnedMemoryAreChargedByKindAndComeBackAtClose() {
        try (NativeAllocator parent = NativeAllocator.root().newChild("gpu test parent", 64 * MIB, 64 * MIB);
             NativeAllocator child = parent.newChild("gpu test child", NativeAllocator.UNLIMITED, 48 * MIB)) {
            DeviceBuffer dev = DeviceBuffer.allocate(32 * MIB, child);
            PinnedBuffer pinned = PinnedBuffer.allocate(16 * MIB, child);
            assertEquals(32 * MIB, child.usage().device());
            assertEquals(16 * MIB, child.usage().pinned());
            assertEquals(48 * MIB, parent.outstandingBytes());
            assertEquals(32 * MIB, NativeAllocator.root().usage().device(), "charged up to the root");
            MemoryBudgetException e = assertThrows(MemoryBudgetException.class, () -> DeviceBuffer.allocate(32 * MIB, child));
            assertTrue(e.getMessage().contains("allocator 'gpu test child' has a device budget of 50331648 B"), e.getMessage());
            assertThrows(MemoryBudgetException.class, () -> PinnedBuffer.allocate(64 * MIB, child));
            assertEquals(48 * MIB, parent.outstandingBytes(), "refused requests charge nothing");
            dev.close();
            MemorySegment slice = pinned.segment().asSlice(MIB, 16);
            slice.set(ValueLayout.JAVA_BYTE, 0, (byte) 1);
            pinned.close();
            assertThrows(IllegalStateException.class, () -> slice.get(ValueLayout.JAVA_BYTE, 0),
                    "a slice of a freed pinned buffer refuses access");
            assertEquals(0, parent.outstandingBytes());
            assertEquals(0, NativeAllocator.root().usage().device() + NativeAllocator.root().usage().pinned());
        }
    }

    @Test
    void aFailedCudaMallocReturnsItsReservation() {
        try (NativeAllocator a = NativeAllocator.root().newChild("gpu test huge", NativeAllocator.UNLIMITED, NativeAllocator.UNLIMITED)) {
            assertThrows(CudaException.class, () -> DeviceBuffer.allocate(1L << 50, a));
            assertEquals(0, a.outstandingBytes());
        }
    }

    @Test
    void aCuFileRegistrationIsCountedWithoutChargingABudget() throws Exception {
        CuFileStatus st = CuFileProbe.probe(Optional.empty());
        assumeTrue(st.usable(), () -> "cuFile unusable: " + st.reason());
        try (NativeAllocator a = NativeAllocator.root().newChild("gpu test cufile", NativeAllocator.UNLIMITED, 8 * MIB)) {
            try (DeviceBuffer dev = DeviceBuffer.allocate(8 * MIB, a);
                 CuFileBufferRegistration reg = CuFileBufferRegistration.register(dev, a)) {
                assertEquals(8 * MIB, a.usage().cuFileRegistered());
                assertEquals(8 * MIB, a.charged(MemoryKind.Budget.DEVICE), "registered bytes are not charged twice");
                assertEquals(8 * MIB, reg.bytes());
            }
            assertEquals(0, a.outstandingBytes());
        }
    }
}
