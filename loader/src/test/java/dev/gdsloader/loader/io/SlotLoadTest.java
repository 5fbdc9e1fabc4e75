package dev.gdsloader.loader.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.plan.SlotPlan;
import dev.gdsloader.loader.spi.SlotLoad;
import java.io.IOException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The scheduling every engine shares: grouping, completion, errors, and the order of idle and signal. */
class SlotLoadTest {
    /** A work of {@code ops} operations of {@code bytes} each; run counts them; finish runs {@code onFinish}. */
    private static final class Counted implements SlotLoad.Work {
        final int ops;
        final long bytes;
        final AtomicInteger ran = new AtomicInteger();
        volatile Runnable onFinish = () -> { };
        volatile boolean fail;

        Counted(int ops, long bytes) {
            this.ops = ops;
            this.bytes = bytes;
        }

        @Override
        public void plan(SlotPlan plan, SlotLoad load) {
            for (int i = 0; i < ops; i++) {
                load.add(bytes);
            }
        }

        @Override
        public long run(int from, int to) throws IOException {
            if (fail) {
                throw new IOException("shard-00003.npy: pread of 784 bytes at offset 4096 failed");
            }
            ran.addAndGet(to - from);
            return (to - from) * bytes;
        }

        @Override
        public void finish() {
            onFinish.run();
        }
    }

    @Test
    void smallOperationsAreGroupedIntoTasksOfAbout256KiB() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Counted w = new Counted(21_400, 784); // a shuffled 16 MiB batch of 784-byte records
            SlotLoad l = new SlotLoad("slot 0", 21_400, w, new AtomicLong());
            l.start(new SlotPlan(new int[0]), pool);
            assertEquals(21_400L * 784, l.await(TimeUnit.SECONDS.toNanos(10)));
            assertEquals(21_400, w.ran.get(), "every operation ran once");
            int perTask = (int) Math.min(SlotLoad.TASK_OPS, (SlotLoad.TASK_BYTES + 783) / 784);
            assertEquals((21_400 + perTask - 1) / perTask, l.taskCount());
            Counted big = new Counted(5, 8 << 20); // 8 MiB reads: one task each
            SlotLoad b = new SlotLoad("slot 1", 5, big, new AtomicLong());
            b.start(new SlotPlan(new int[0]), pool);
            b.await(TimeUnit.SECONDS.toNanos(10));
            assertEquals(5, b.taskCount());
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void theEntryIsIdleBeforeItsBatchIsSignalled() throws Exception {
        // finish() runs last before the signal: had the entry been marked idle after the signal (the old order), a
        // consumer woken by it could refill the entry and then see it marked idle under live reads
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Counted w = new Counted(8, 1 << 20);
            SlotLoad l = new SlotLoad("slot 0", 8, w, new AtomicLong());
            for (int i = 0; i < 2_000; i++) {
                l.start(new SlotPlan(new int[0]), pool);
                l.await(TimeUnit.SECONDS.toNanos(10));
                assertFalse(l.busy(), "batch " + i + ": signalled while still marked in flight");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void theFirstErrorReachesTheConsumerAndFinishIsSkipped() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Counted w = new Counted(3, 4096);
            AtomicInteger finished = new AtomicInteger();
            w.onFinish = finished::incrementAndGet;
            w.fail = true;
            SlotLoad l = new SlotLoad("slot 0", 3, w, new AtomicLong());
            l.start(new SlotPlan(new int[0]), pool);
            IOException e = assertThrows(IOException.class, () -> l.await(TimeUnit.SECONDS.toNanos(10)));
            assertTrue(e.getMessage().contains("shard-00003.npy"), e.getMessage());
            assertEquals(0, finished.get());
            assertTrue(l.quiesce(System.nanoTime() + TimeUnit.SECONDS.toNanos(1)));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void quiesceWakesWhenTheLastTaskEndsAndGivesUpAtItsDeadline() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Counted w = new Counted(2, 4096);
            java.util.concurrent.CountDownLatch finishing = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CountDownLatch mayFinish = new java.util.concurrent.CountDownLatch(1);
            w.onFinish = () -> {
                finishing.countDown();
                try {
                    mayFinish.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            };
            SlotLoad l = new SlotLoad("slot 0", 2, w, new AtomicLong());
            l.start(new SlotPlan(new int[0]), pool);
            assertTrue(finishing.await(30, TimeUnit.SECONDS));
            assertFalse(l.quiesce(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(20)), "still in flight at the deadline");
            java.util.concurrent.CompletableFuture<Boolean> quiet = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> l.quiesce(System.nanoTime() + TimeUnit.SECONDS.toNanos(30)));
            mayFinish.countDown();
            assertTrue(quiet.get(30, TimeUnit.SECONDS), "woken by the end of the batch");
            assertEquals(2L * 4096, l.await(TimeUnit.SECONDS.toNanos(10)));
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void startingABusyEntryOrOverfillingItThrows() {
        Counted w = new Counted(4, 1);
        SlotLoad l = new SlotLoad("slot 2", 3, w, new AtomicLong());
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> l.start(new SlotPlan(new int[0]), r -> { }));
        assertTrue(e.getMessage().startsWith("slot 2: a batch needs more than 3 operations"), e.getMessage());
        assertFalse(l.busy(), "a batch that failed to plan leaves the entry idle");
        SlotLoad queued = new SlotLoad("slot 3", 4, w, new AtomicLong());
        queued.start(new SlotPlan(new int[0]), r -> { }); // tasks never run: still in flight
        assertThrows(IllegalStateException.class, () -> queued.start(new SlotPlan(new int[0]), r -> { }));
    }
}
