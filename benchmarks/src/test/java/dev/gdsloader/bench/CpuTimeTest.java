package dev.gdsloader.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@link CpuTime}: the process's CPU time in nanoseconds, finer than the 10 ms ticks of the JDK's bean on Linux. */
class CpuTimeTest {
    @Test
    void processCpuTimeGrowsInStepsFinerThanClockTicks() {
        long previous = CpuTime.processNanos();
        assertTrue(previous > 0, "process CPU time " + previous);
        int fine = 0;
        long sink = 0;
        for (int sample = 0; sample < 20; sample++) {
            for (int i = 0; i < 200_000; i++) {
                sink += (long) i * i ^ sink;
            }
            long now = CpuTime.processNanos();
            assertTrue(now >= previous, now + " after " + previous);
            if ((now - previous) % 10_000_000 != 0) {
                fine++;
            }
            previous = now;
        }
        assertTrue(fine > 0, "every step a multiple of 10 ms: clock ticks, not clock_gettime (" + sink + ")");
    }

    @Test
    void secondsPerGigabyteIsNaNWhereUnknownOrNothingMoved() {
        assertEquals(0.5, CpuTime.secondsPerGigabyte(500_000_000L, 1_000_000_000L), 1e-12);
        assertTrue(Double.isNaN(CpuTime.secondsPerGigabyte(-1, 1_000)));
        assertTrue(Double.isNaN(CpuTime.secondsPerGigabyte(1_000, 0)));
    }
}
