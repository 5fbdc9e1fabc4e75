package dev.gdsloader.loader.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.plan.SlotPlan;
import dev.gdsloader.loader.spi.SlotLoad;
import java.io.IOException;
import java.util.BitSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** A batch planned on the pool in parts ({@link SlotLoad#startPlanning}): every part, then the last step, then the reads. */
class SlotLoadPlanningTest {
    /** One op per planned part; records the order of the steps. */
    private static final class Steps implements SlotLoad.Planning, SlotLoad.Work {
        final int parts;
        final BitSet done = new BitSet();
        final AtomicInteger partsSeenByLast = new AtomicInteger(-1);
        final AtomicInteger ran = new AtomicInteger();
        volatile int failPart = -1;

        Steps(int parts) {
            this.parts = parts;
        }

        @Override
        public int parts() {
            return parts;
        }

        @Override
        public void part(int k) {
            if (k == failPart) {
                throw new IllegalStateException("part " + k + ": column 'images' needs more pieces than the slot holds");
            }
            synchronized (done) {
                done.set(k);
            }
        }

        @Override
        public void last() {
            synchronized (done) {
                partsSeenByLast.set(done.cardinality());
            }
        }

        @Override
        public void plan(SlotPlan plan, SlotLoad load) {
            for (int i = 0; i < parts; i++) {
                load.add(1);
            }
        }

        @Override
        public long run(int from, int to) throws IOException {
            ran.addAndGet(to - from);
            return (long) to - from;
        }

        @Override
        public void finish() {
        }
    }

    @Test
    void everyPartRunsBeforeTheLastStepAndTheReadsFollow() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            for (int round = 0; round < 200; round++) {
                Steps s = new Steps(SlotLoad.MAX_PLANNING_PARTS);
                SlotLoad l = new SlotLoad("slot 0", 64, s, new AtomicLong());
                l.startPlanning(s, new SlotPlan(new int[0]), pool);
                assertEquals(SlotLoad.MAX_PLANNING_PARTS, l.await(TimeUnit.SECONDS.toNanos(10)));
                assertEquals(SlotLoad.MAX_PLANNING_PARTS, s.partsSeenByLast.get(), "round " + round);
                assertEquals(SlotLoad.MAX_PLANNING_PARTS, s.ran.get());
                assertFalse(l.busy());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void aFailingPartIsTheBatchsErrorAndLeavesTheEntryIdleWithNothingRead() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            Steps s = new Steps(5);
            s.failPart = 3;
            SlotLoad l = new SlotLoad("slot 2", 64, s, new AtomicLong());
            l.startPlanning(s, new SlotPlan(new int[0]), pool);
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> l.await(TimeUnit.SECONDS.toNanos(10)));
            assertTrue(e.getMessage().contains("part 3: column 'images'"), e.getMessage());
            assertEquals(0, s.ran.get(), "no read of a batch whose planning failed");
            assertEquals(-1, s.partsSeenByLast.get(), "the last step does not run after a failed part");
            assertFalse(l.busy());
            // the entry can take the next batch
            s.failPart = -1;
            l.startPlanning(s, new SlotPlan(new int[0]), pool);
            assertEquals(5, l.await(TimeUnit.SECONDS.toNanos(10)));
        } finally {
            pool.shutdownNow();
        }
    }
}
