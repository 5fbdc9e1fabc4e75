package dev.gdsloader.loader.slot;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gdsloader.posix.AlignedMemory;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A half-built slot frees what it had allocated, newest first, and the failure still reaches the caller. */
class SlotAllocationTest {
    @Test
    void aFailedRecipeFreesItsAllocationsNewestFirstAndRethrows() {
        List<String> closed = new ArrayList<>();
        AlignedMemory[] first = new AlignedMemory[1];
        OutOfMemoryError oom = new OutOfMemoryError("no host memory for staging");
        OutOfMemoryError thrown = assertThrows(OutOfMemoryError.class, () -> SlotAllocation.build(a -> {
            first[0] = a.add(new AlignedMemory(4096));
            a.add(() -> closed.add("registration"));
            a.add(() -> closed.add("stream"));
            throw oom;
        }));
        assertSame(oom, thrown);
        assertEquals(List.of("stream", "registration"), closed);
        assertThrows(IllegalStateException.class, () -> first[0].segment().get(ValueLayout.JAVA_BYTE, 0),
                "the first allocation was freed too");
    }

    @Test
    void slotResourcesFreeOnceAndNameTheSlotWhenAPartFails() {
        List<String> closed = new ArrayList<>();
        SlotResources r = new SlotResources("bounce slot", () -> closed.add("target"), () -> {
            throw new IllegalStateException("cudaFreeHost: invalid argument");
        }, null, () -> closed.add("staging"));
        IllegalStateException e = assertThrows(IllegalStateException.class, r::close);
        assertEquals("bounce slot: freeing failed: cudaFreeHost: invalid argument", e.getMessage());
        assertEquals(List.of("target", "staging"), closed);
        r.close();
        assertEquals(2, closed.size(), "a second close frees nothing again");
    }
}
