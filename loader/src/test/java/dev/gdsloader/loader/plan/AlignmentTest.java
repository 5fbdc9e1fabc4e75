package dev.gdsloader.loader.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@link Alignment}: rounding to 4 KiB. */
class AlignmentTest {

    @Test
    void downRoundsToTheBlockAtOrBelow() {
        assertEquals(0, Alignment.down(0));
        assertEquals(0, Alignment.down(4095));
        assertEquals(4096, Alignment.down(4096));
        assertEquals(4096, Alignment.down(8191));
        assertEquals(1L << 40, Alignment.down((1L << 40) + 123));
    }

    @Test
    void upRoundsToTheBlockAtOrAbove() {
        assertEquals(0, Alignment.up(0));
        assertEquals(4096, Alignment.up(1));
        assertEquals(4096, Alignment.up(4096));
        assertEquals(8192, Alignment.up(4097));
    }

    @Test
    void upOverflowIsAnErrorNotAWrap() {
        assertThrows(ArithmeticException.class, () -> Alignment.up(Long.MAX_VALUE));
    }

    @Test
    void isAlignedAcceptsOnlyMultiplesOf4096() {
        assertTrue(Alignment.isAligned(0));
        assertTrue(Alignment.isAligned(4096));
        assertTrue(Alignment.isAligned(8L << 20));
        assertFalse(Alignment.isAligned(1000));
        assertFalse(Alignment.isAligned(4097));
        assertFalse(Alignment.isAligned(2048));
        assertEquals(4096, Alignment.BLOCK);
    }
}
