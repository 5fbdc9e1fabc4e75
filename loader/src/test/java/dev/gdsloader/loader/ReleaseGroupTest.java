package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The device group's release rule: the slot goes back once, after every member's release, in any order. */
class ReleaseGroupTest {
    private static void permutations(List<Integer> prefix, List<Integer> rest, List<List<Integer>> out) {
        if (rest.isEmpty()) {
            out.add(prefix);
            return;
        }
        for (int i = 0; i < rest.size(); i++) {
            List<Integer> p = new ArrayList<>(prefix);
            p.add(rest.get(i));
            List<Integer> r = new ArrayList<>(rest);
            r.remove(/* index */ i);
            permutations(p, r, out);
        }
    }

    @Test
    void everyOrderOfReleasesGivesTheSlotBackOnceAfterTheLast() {
        for (int k = 1; k <= 4; k++) {
            List<List<Integer>> orders = new ArrayList<>();
            List<Integer> members = new ArrayList<>();
            for (int m = 0; m < k; m++) {
                members.add(m);
            }
            permutations(List.of(), members, orders);
            for (List<Integer> order : orders) {
                AtomicInteger back = new AtomicInteger();
                ReleaseGroup g = new ReleaseGroup(k, back::incrementAndGet, "batch 0 of epoch 0");
                for (int i = 0; i < order.size(); i++) {
                    assertEquals(0, back.get(), "given back before every member released: " + order);
                    boolean last = g.release(order.get(i));
                    assertEquals(i == order.size() - 1, last, order.toString());
                    assertEquals(order.subList(i + 1, order.size()).stream().sorted().toList(), g.outstanding());
                }
                assertEquals(1, back.get(), "given back once: " + order);
                g.close(); // nothing outstanding: no throw
            }
        }
    }

    @Test
    void aSecondReleaseByOneMemberThrowsAndDoesNotCountTwice() {
        AtomicInteger back = new AtomicInteger();
        ReleaseGroup g = new ReleaseGroup(2, back::incrementAndGet, "batch 3 of epoch 1");
        g.release(1);
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> g.release(1));
        assertEquals("batch 3 of epoch 1: member 1 of the device group released it twice", e.getMessage());
        assertEquals(0, back.get());
        assertTrue(g.release(0));
        assertThrows(IllegalStateException.class, () -> g.release(0));
        assertEquals(1, back.get());
    }

    @Test
    void closeWithOutstandingReleasesNamesTheMembersAndLaterReleasesThrow() {
        AtomicInteger back = new AtomicInteger();
        ReleaseGroup g = new ReleaseGroup(3, back::incrementAndGet, "batch 2 of epoch 0");
        g.release(1);
        IllegalStateException e = assertThrows(IllegalStateException.class, g::close);
        assertEquals("batch 2 of epoch 0 is still held by device group member(s) [0, 2]: its slot cannot go back to the ring",
                e.getMessage());
        assertThrows(IllegalStateException.class, () -> g.release(0));
        assertEquals(0, back.get(), "a closed group never gives the slot back");
    }

    @Test
    void membersOutOfRangeAndGroupSizesAreRefused() {
        ReleaseGroup g = new ReleaseGroup(2, () -> { }, "b");
        assertThrows(IndexOutOfBoundsException.class, () -> g.release(2));
        assertThrows(IndexOutOfBoundsException.class, () -> g.release(-1));
        assertThrows(IllegalArgumentException.class, () -> new ReleaseGroup(0, () -> { }, "b"));
        assertThrows(IllegalArgumentException.class, () -> new ReleaseGroup(65, () -> { }, "b"));
        ReleaseGroup wide = new ReleaseGroup(64, () -> { }, "b");
        for (int m = 0; m < 63; m++) {
            assertFalse(wide.release(m));
        }
        assertTrue(wide.release(63), "64 members: the last bit completes the group");
    }

    @Test
    void concurrentReleasesGiveTheSlotBackExactlyOnce() throws InterruptedException {
        for (int round = 0; round < 200; round++) {
            AtomicInteger back = new AtomicInteger();
            int k = 8;
            ReleaseGroup g = new ReleaseGroup(k, back::incrementAndGet, "b");
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> ts = new ArrayList<>();
            for (int m = 0; m < k; m++) {
                int member = m;
                ts.add(Thread.ofPlatform().start(() -> {
                    try {
                        go.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    g.release(member);
                }));
            }
            go.countDown();
            for (Thread t : ts) {
                t.join();
            }
            assertEquals(1, back.get());
        }
    }
}
