package dev.gdsloader.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * {@link IpcTrace}: exact nearest-rank statistics on known durations, the summary line, what is kept past the
 * capacity, marks, the property switch, the published lines, and that an off trace (and an on one, past its creation)
 * allocates nothing per record (the JVM's per-thread allocation counter).
 */
class IpcTraceTest {
    private static final long US = 1_000;

    @Test
    void statisticsOfOneToOneHundredMicrosecondsAreExact() {
        IpcTrace t = IpcTrace.of(true, "test", 1024, "a", "b");
        List<Integer> values = new ArrayList<>(IntStream.rangeClosed(1, 100).boxed().toList());
        Collections.shuffle(values, new Random(42)); // order of arrival does not matter
        for (int v : values) {
            t.record(0, v * US);
        }
        IpcTrace.Stats s = t.stats(0);
        assertEquals(new IpcTrace.Stats(100, 100, 50 * US, 90 * US, 99 * US, 100 * US, 5050 * US), s);
        assertEquals(new IpcTrace.Stats(0, 0, 0, 0, 0, 0, 0), t.stats(1), "a stage never recorded");
        t.record(1, 10 * US);
        t.record(1, 40 * US);
        t.record(1, 30 * US);
        t.record(1, 20 * US);
        // nearest rank of 4: median is the 2nd, p90 and p99 the 4th
        assertEquals(new IpcTrace.Stats(4, 4, 20 * US, 40 * US, 40 * US, 40 * US, 100 * US), t.stats(1));
        assertEquals(List.of(
                "test a: n=100 median=50.0 p90=90.0 p99=99.0 max=100.0 us, sum=5.050 ms = 50.5% of 0.010 s wall",
                "test b: n=4 median=20.0 p90=40.0 p99=40.0 max=40.0 us, sum=0.100 ms = 1.0% of 0.010 s wall"),
                t.summary(10_000_000));
    }

    @Test
    void pastTheCapacityCountSumAndMaxCoverEveryOccurrenceAndPercentilesTheFirst() {
        IpcTrace t = IpcTrace.of(true, "test", 4, "a");
        for (long v : new long[] {4, 3, 2, 1, 100, 50}) {
            t.record(0, v * US);
        }
        assertEquals(new IpcTrace.Stats(6, 4, 2 * US, 4 * US, 4 * US, 100 * US, 160 * US), t.stats(0));
        assertTrue(t.summary(1_000_000_000).getFirst().endsWith(" (percentiles of the first 4)"), t.summary(1).toString());
        t.reset();
        assertEquals(new IpcTrace.Stats(0, 0, 0, 0, 0, 0, 0), t.stats(0));
        t.record(0, 7 * US);
        assertEquals(new IpcTrace.Stats(1, 1, 7 * US, 7 * US, 7 * US, 7 * US, 7 * US), t.stats(0), "reset forgets");
    }

    @Test
    void startStopAndMarksMeasureElapsedTime() throws InterruptedException {
        IpcTrace t = IpcTrace.of(true, "test", 4, "span", "sinceMark");
        long s = t.start();
        t.mark(6); // 6 & 3 = 2: ids wrap at the capacity
        Thread.sleep(5);
        t.stop(0, s);
        t.stopSinceMark(1, 6);
        assertTrue(t.stats(0).max() >= 5_000_000, t.stats(0).toString());
        assertTrue(t.stats(1).max() >= 5_000_000, t.stats(1).toString());
        assertTrue(t.sinceReset() >= 5_000_000);
    }

    @Test
    void offRecordsNothingAndTheSwitchIsTheSystemProperty() {
        IpcTrace off = IpcTrace.of(false, "test", 0, "a");
        assertFalse(off.on());
        assertEquals(0, off.start());
        off.record(0, 5);
        off.stop(0, 0);
        off.mark(3);
        off.stopSinceMark(0, 3);
        assertEquals(new IpcTrace.Stats(0, 0, 0, 0, 0, 0, 0), off.stats(0));
        assertEquals(List.of(), off.summary(1_000));
        String before = System.getProperty(IpcTrace.PROPERTY);
        try {
            System.clearProperty(IpcTrace.PROPERTY);
            assertFalse(IpcTrace.create("x", "a").on(), "off by default");
            System.setProperty(IpcTrace.PROPERTY, "true");
            assertTrue(IpcTrace.create("x", "a").on());
        } finally {
            if (before == null) {
                System.clearProperty(IpcTrace.PROPERTY);
            } else {
                System.setProperty(IpcTrace.PROPERTY, before);
            }
        }
        assertThrows(IllegalArgumentException.class, () -> IpcTrace.of(true, "x", 3, "a"), "capacity not a power of two");
        assertThrows(IllegalArgumentException.class, () -> IpcTrace.of(false, "x", 4));
    }

    @Test
    void recordingAllocatesNothingPerBatchOffOrOn() {
        for (boolean on : new boolean[] {false, true}) {
            IpcTrace t = IpcTrace.of(on, "test", 1 << 10, "a", "b");
            exercise(t, 20_000); // warm up: compiled before measuring
            long before = allocated();
            exercise(t, 200_000);
            long bytes = allocated() - before;
            assertTrue(bytes < 4096, (on ? "on" : "off") + " trace allocated " + bytes + " bytes over 200000 records");
        }
    }

    private static void exercise(IpcTrace t, int n) {
        for (int i = 0; i < n; i++) {
            long s = t.start();
            t.stop(0, s);
            t.mark(i);
            t.stopSinceMark(1, i);
            t.record(0, i);
        }
    }

    private static long allocated() {
        var bean = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        return bean.getThreadAllocatedBytes(Thread.currentThread().threadId());
    }

    @Test
    void publishedLinesAreDrainedOnceInOrderAndTheLast512Kept() {
        IpcTrace.drainPublished();
        IpcTrace.publish(List.of("one", "two"));
        IpcTrace.publish(List.of("three"));
        assertEquals(List.of("one", "two", "three"), IpcTrace.drainPublished());
        assertEquals(List.of(), IpcTrace.drainPublished());
        List<String> many = IntStream.range(0, 600).mapToObj(Integer::toString).toList();
        IpcTrace.publish(many);
        assertEquals(many.subList(88, 600), IpcTrace.drainPublished());
    }
}
