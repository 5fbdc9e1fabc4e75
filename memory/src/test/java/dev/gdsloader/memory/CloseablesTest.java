package dev.gdsloader.memory;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** One failing close does not leak the others; the first failure carries the later ones. */
class CloseablesTest {
    @Test
    void everyResourceIsClosedInOrderAndTheFirstFailureCarriesTheRest() {
        List<String> closed = new ArrayList<>();
        IllegalStateException one = new IllegalStateException("one");
        Exception two = new Exception("two");
        Exception first = Closeables.closeAll(() -> closed.add("a"), null, () -> {
            closed.add("b");
            throw one;
        }, () -> closed.add("c"), () -> {
            closed.add("d");
            throw two;
        });
        assertEquals(List.of("a", "b", "c", "d"), closed);
        assertSame(one, first);
        assertArrayEquals(new Throwable[] {two}, first.getSuppressed());
    }

    @Test
    void noFailureGivesNull() {
        assertNull(Closeables.closeAll(() -> { }, null));
    }
}
