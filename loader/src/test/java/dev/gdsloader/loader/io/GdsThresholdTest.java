package dev.gdsloader.loader.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The GDS threshold: its default, its environment variable, and which pieces it sends through staging. */
class GdsThresholdTest {
    @Test
    void theEnvironmentSetsTheThresholdInBytesAndDefaultsToKvikiosOneMiB() {
        assertEquals(1 << 20, GdsEngine.thresholdFromEnvironment(Map.of()));
        assertEquals(0, GdsEngine.thresholdFromEnvironment(Map.of(GdsEngine.THRESHOLD_ENV, "0")));
        assertEquals(65536, GdsEngine.thresholdFromEnvironment(Map.of(GdsEngine.THRESHOLD_ENV, " 65536 ")));
        for (String bad : new String[] {"-1", "1MiB", "x"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> GdsEngine.thresholdFromEnvironment(Map.of(GdsEngine.THRESHOLD_ENV, bad)));
            assertTrue(e.getMessage().startsWith("GDSLOADER_GDS_THRESHOLD must be a whole number of bytes >= 0"), e.getMessage());
            assertTrue(e.getMessage().endsWith("got '" + bad + "'"), e.getMessage());
        }
    }

    @Test
    void piecesUnderTheThresholdAreStagedAndZeroSendsEveryPieceToCuFile() {
        assertTrue(GdsEngine.staged(784, 1 << 20));
        assertFalse(GdsEngine.staged(1 << 20, 1 << 20));
        assertFalse(GdsEngine.staged(1, 0));
    }
}
