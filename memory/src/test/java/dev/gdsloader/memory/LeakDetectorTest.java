package dev.gdsloader.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The levels and their properties. */
class LeakDetectorTest {
    @Test
    void theLevelIsSimpleByDefaultAndTheOldSwitchMeansParanoid() {
        assertEquals(LeakDetector.Level.SIMPLE, LeakDetector.levelFrom(null, null));
        assertEquals(LeakDetector.Level.PARANOID, LeakDetector.levelFrom(null, "true"));
        assertEquals(LeakDetector.Level.DISABLED, LeakDetector.levelFrom(null, "false"));
        assertEquals(LeakDetector.Level.PARANOID, LeakDetector.levelFrom("Paranoid", "false"), "the level property wins");
        assertEquals(LeakDetector.Level.DISABLED, LeakDetector.levelFrom("disabled", null));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LeakDetector.levelFrom("loud", null));
        assertEquals("gdsloader.leakDetection.level must be disabled, simple or paranoid, got 'loud'", e.getMessage());
    }

    @Test
    void paranoidRecordsEverySiteDisabledNone() {
        LeakDetector.Level before = LeakDetector.level();
        try {
            LeakDetector.setLevel(LeakDetector.Level.PARANOID);
            for (int i = 0; i < 100; i++) {
                assertNotNull(LeakDetector.allocationSite());
            }
            LeakDetector.setLevel(LeakDetector.Level.DISABLED);
            for (int i = 0; i < 100; i++) {
                assertNull(LeakDetector.allocationSite());
            }
            LeakDetector.setLevel(LeakDetector.Level.SIMPLE);
            int sampled = 0;
            for (int i = 0; i < 128_000; i++) {
                sampled += LeakDetector.sample() ? 1 : 0;
            }
            assertTrue(sampled > 500 && sampled < 1500, "about 1 in 128: " + sampled);
        } finally {
            LeakDetector.setLevel(before);
        }
    }
}
