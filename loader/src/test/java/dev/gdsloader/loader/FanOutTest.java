package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Every member gets every item in the source's order, whoever pulls; end and failure reach every member. */
class FanOutTest {
    /** A source of n batches, each item "b:m" for member m. */
    private static FanOut.Source<String> items(int n, int members, AtomicInteger pulls) {
        return () -> {
            int b = pulls.getAndIncrement();
            if (b >= n) {
                return null;
            }
            List<String> out = new ArrayList<>();
            for (int m = 0; m < members; m++) {
                out.add(b + ":" + m);
            }
            return out;
        };
    }

    @Test
    void everyMemberOnItsOwnThreadGetsEveryItemInOrderAndTheSourceIsPulledOncePerItem() throws InterruptedException {
        int k = 3;
        int n = 500;
        AtomicInteger pulls = new AtomicInteger();
        FanOut<String> f = new FanOut<>(k, items(n, k, pulls));
        List<List<String>> got = new ArrayList<>();
        List<Thread> ts = new ArrayList<>();
        for (int m = 0; m < k; m++) {
            List<String> mine = Collections.synchronizedList(new ArrayList<>());
            got.add(mine);
            int member = m;
            ts.add(Thread.ofPlatform().start(() -> {
                for (String s; (s = f.next(member)) != null; ) {
                    mine.add(s);
                    if (member == 1 && mine.size() % 7 == 0) {
                        Thread.onSpinWait(); // members at different paces
                    }
                }
            }));
        }
        for (Thread t : ts) {
            t.join(10_000);
        }
        for (int m = 0; m < k; m++) {
            List<String> want = new ArrayList<>();
            for (int b = 0; b < n; b++) {
                want.add(b + ":" + m);
            }
            assertEquals(want, got.get(m), "member " + m);
        }
        assertEquals(n + 1, pulls.get(), "each item pulled once, plus the one pull that found the end");
    }

    @Test
    void aMemberWithQueuedItemsDoesNotWaitForAnotherMembersPull() throws InterruptedException {
        CountDownLatch secondPullMayEnd = new CountDownLatch(1);
        AtomicInteger pulls = new AtomicInteger();
        FanOut<String> f = new FanOut<>(2, () -> {
            int b = pulls.getAndIncrement();
            if (b == 1) {
                try {
                    secondPullMayEnd.await(); // the source blocks (a slot still held) while member 0 pulls
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return b < 2 ? List.of(b + ":0", b + ":1") : null;
        });
        assertEquals("0:0", f.next(0));
        Thread puller = Thread.ofPlatform().start(() -> f.next(0)); // blocks in the second pull
        while (pulls.get() < 2) {
            Thread.onSpinWait();
        }
        assertEquals(1, f.queued(1));
        assertEquals("0:1", f.next(1), "member 1 takes its queued item while member 0's pull is blocked");
        secondPullMayEnd.countDown();
        puller.join(5_000);
        assertEquals("1:1", f.next(1));
        assertNull(f.next(1));
        assertNull(f.next(0));
    }

    /**
     * The source pulls item k only after member 1 took item k-1 (a ring of one slot that member 1's copy holds): while
     * member 0 waits inside such a pull, member 1 must get the item queued for it rather than wait for the pull.
     */
    @Test
    void aMemberWaitingForAPullTakesWhatThePullQueuedForIt() throws Exception {
        int n = 300;
        AtomicInteger taken1 = new AtomicInteger();
        AtomicInteger pulls = new AtomicInteger();
        FanOut<Integer> f = new FanOut<>(2, () -> {
            int k = pulls.getAndIncrement();
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (taken1.get() < k) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("pull " + k + " waited 5 s for member 1, which took " + taken1.get());
                }
                Thread.onSpinWait();
            }
            return k < n ? List.of(k, k) : null;
        });
        java.util.concurrent.CompletableFuture<Integer> a = new java.util.concurrent.CompletableFuture<>();
        Thread.ofPlatform().daemon().start(() -> {
            try {
                int got = 0;
                while (f.next(0) != null) {
                    got++;
                }
                a.complete(got);
            } catch (RuntimeException e) {
                a.completeExceptionally(e);
            }
        });
        for (int k = 0; k < n; k++) {
            assertEquals(k, f.next(1));
            taken1.incrementAndGet();
        }
        assertNull(f.next(1));
        assertEquals(n, a.get(10, java.util.concurrent.TimeUnit.SECONDS));
    }

    @Test
    void theSourcesFailureReachesEveryMemberOnceItsQueueIsEmpty() {
        AtomicInteger pulls = new AtomicInteger();
        IllegalStateException boom = new IllegalStateException("batch 1: reads failed");
        FanOut<String> f = new FanOut<>(2, () -> {
            if (pulls.getAndIncrement() == 1) {
                throw boom;
            }
            return List.of("0:0", "0:1");
        });
        assertEquals("0:0", f.next(0));
        assertSame(boom, assertThrows(IllegalStateException.class, () -> f.next(0)));
        assertEquals("0:1", f.next(1), "queued before the failure");
        assertSame(boom, assertThrows(IllegalStateException.class, () -> f.next(1)));
        assertEquals(2, pulls.get(), "a failed source is not pulled again");
    }

    @Test
    void drainDisposesItemsNoMemberTookAndEndsTheFanOut() {
        AtomicInteger pulls = new AtomicInteger();
        FanOut<String> f = new FanOut<>(3, items(10, 3, pulls));
        f.next(0);
        f.next(0);
        List<String> disposed = new ArrayList<>();
        f.drain(disposed::add);
        assertEquals(List.of("0:1", "1:1", "0:2", "1:2"), disposed);
        assertNull(f.next(1), "drained: the epoch is over for every member");
        assertEquals(2, pulls.get());
    }

    @Test
    void aSourceGivingTheWrongNumberOfItemsIsRefused() {
        FanOut<String> f = new FanOut<>(2, () -> List.of("only one"));
        assertThrows(IllegalStateException.class, () -> f.next(0));
        assertThrows(IndexOutOfBoundsException.class, () -> f.next(2));
        assertThrows(IllegalArgumentException.class, () -> new FanOut<String>(0, () -> null));
    }
}
