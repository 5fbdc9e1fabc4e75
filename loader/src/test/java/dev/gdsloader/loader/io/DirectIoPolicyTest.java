package dev.gdsloader.loader.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The O_DIRECT default: half of host memory is the line; an explicit choice always wins. */
class DirectIoPolicyTest {
    private static final long GB = 1_000_000_000L;

    @Test
    void aDatasetThatFitsInHalfOfMemoryIsReadBuffered() {
        DirectIoPolicy.Choice c = DirectIoPolicy.choose(null, 47 * 1_000_000L, 128 * GB);
        assertFalse(c.direct());
        assertEquals("buffered reads: the dataset (0.05 GB) fits in half of host memory (64.00 GB), "
                + "so the page cache serves it after the first epoch", c.reason());
    }

    @Test
    void aDatasetLargerThanHalfOfMemoryStreamsWithODirect() {
        assertTrue(DirectIoPolicy.choose(null, 64 * GB + 1, 128 * GB).direct());
        assertFalse(DirectIoPolicy.choose(null, 64 * GB, 128 * GB).direct());
        assertTrue(DirectIoPolicy.choose(null, 65 * GB, 128 * GB).reason().startsWith("O_DIRECT reads: the dataset (65.00 GB) exceeds"));
    }

    @Test
    void anExplicitChoiceWins() {
        assertTrue(DirectIoPolicy.choose(true, 1, 128 * GB).direct());
        assertFalse(DirectIoPolicy.choose(false, 100 * GB, 128 * GB).direct());
        assertEquals("buffered reads as requested", DirectIoPolicy.choose(false, 1, 1).reason());
    }

    @Test
    void negativeSizesAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> DirectIoPolicy.choose(null, -1, GB));
    }
}
