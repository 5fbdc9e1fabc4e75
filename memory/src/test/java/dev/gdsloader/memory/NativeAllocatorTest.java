package dev.gdsloader.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/** Budgets, children, leaks at close and concurrent accounting of {@link NativeAllocator}, without a GPU. */
class NativeAllocatorTest {
    private static final long MIB = 1L << 20;

    @Test
    void aReservationPastTheLimitThrowsNamingBudgetRequestAndHolders() {
        try (NativeAllocator parent = NativeAllocator.root().newChild("test parent", 10 * MIB, NativeAllocator.UNLIMITED);
             NativeAllocator a = parent.newChild("loader a", NativeAllocator.UNLIMITED, NativeAllocator.UNLIMITED);
             NativeAllocator b = parent.newChild("loader b", NativeAllocator.UNLIMITED, NativeAllocator.UNLIMITED)) {
            NativeAllocator.Allocation held = a.reserve(MemoryKind.PINNED, 6 * MIB, "pinned staging");
            MemoryBudgetException e = assertThrows(MemoryBudgetException.class,
                    () -> b.reserve(MemoryKind.HOST, 6 * MIB, "host slot"));
            assertTrue(e.getMessage().contains("allocator 'test parent' has a host budget of 10485760 B (10.0 MiB)"), e.getMessage());
            assertTrue(e.getMessage().contains("request of 6291456 B (6.0 MiB) host memory (host slot) by 'loader b'"), e.getMessage());
            assertTrue(e.getMessage().contains("'loader a' 6291456 B"), e.getMessage());
            assertEquals("test parent", e.allocator());
            assertEquals(10 * MIB, e.limit());
            assertEquals(6 * MIB, e.requested());
            assertEquals(0, b.outstandingBytes(), "a refused reservation charges nothing");
            assertEquals(6 * MIB, parent.usage().hostBytes());
            NativeAllocator.Allocation fits = b.reserve(MemoryKind.HOST, 4 * MIB, "host slot");
            assertEquals(10 * MIB, parent.usage().hostBytes(), "exactly the limit fits");
            held.release();
            fits.release();
            assertEquals(0, parent.outstandingBytes());
        }
    }

    @Test
    void aChildsOwnLimitBindsBeforeItsParentsAndKindsAreCountedApart() {
        try (NativeAllocator parent = NativeAllocator.root().newChild("test parent", 100 * MIB, 100 * MIB);
             NativeAllocator child = parent.newChild("session 1", 8 * MIB, 4 * MIB)) {
            NativeAllocator.Allocation d = child.reserve(MemoryKind.DEVICE, 4 * MIB, "slot device memory");
            NativeAllocator.Allocation r = child.reserve(MemoryKind.CUFILE_REGISTERED, 4 * MIB, "its cuFile registration");
            MemoryBudgetException e = assertThrows(MemoryBudgetException.class,
                    () -> child.reserve(MemoryKind.DEVICE, 1, "one more byte"));
            assertTrue(e.getMessage().contains("allocator 'session 1' has a device budget of 4194304 B"), e.getMessage());
            NativeAllocator.Allocation p = child.reserve(MemoryKind.PINNED, 5 * MIB, "pinned");
            assertThrows(MemoryBudgetException.class, () -> child.reserve(MemoryKind.HOST_REGISTERED, 4 * MIB, "cudaHostRegister"));
            MemoryUsage u = parent.usage();
            assertEquals(4 * MIB, u.device());
            assertEquals(4 * MIB, u.cuFileRegistered());
            assertEquals(5 * MIB, u.pinned());
            assertEquals(0, u.host());
            assertEquals(13 * MIB, u.outstandingBytes());
            assertEquals(5 * MIB, u.hostBytes());
            for (NativeAllocator.Allocation a : List.of(r, d, p)) {
                a.release();
                a.release(); // a second release returns nothing more
            }
            assertEquals(0, parent.outstandingBytes());
            assertEquals(0, NativeAllocator.root().usage().bytes(MemoryKind.PINNED), "bytes went back to every ancestor");
        }
    }

    @Test
    void closeWithSomethingOutstandingThrowsListingIt() {
        NativeAllocator parent = NativeAllocator.root().newChild("test parent", NativeAllocator.UNLIMITED, NativeAllocator.UNLIMITED);
        NativeAllocator child = parent.newChild("loader x", NativeAllocator.UNLIMITED, NativeAllocator.UNLIMITED);
        LeakDetector.Level before = LeakDetector.level();
        LeakDetector.setLevel(LeakDetector.Level.PARANOID);
        NativeAllocator.Allocation leaked;
        try {
            leaked = child.reserve(MemoryKind.PINNED, 4096, "pinned staging of slot 0");
        } finally {
            LeakDetector.setLevel(before);
        }
        IllegalStateException open = assertThrows(IllegalStateException.class, parent::close);
        assertTrue(open.getMessage().contains("1 child allocator(s) still open") && open.getMessage().contains("child 'loader x' (open)"),
                open.getMessage());
        IllegalStateException e = assertThrows(IllegalStateException.class, child::close);
        assertTrue(e.getMessage().startsWith("Memory was leaked by allocator 'loader x': device 0 B, pinned 4.0 KiB")
                || e.getMessage().startsWith("Memory was leaked by allocator 'loader x': device 0 B, pinned 4096 B"), e.getMessage());
        assertTrue(e.getMessage().contains("pinned 4096 B (4.0 KiB): pinned staging of slot 0 in 'loader x'"), e.getMessage());
        assertTrue(e.getMessage().contains("closeWithSomethingOutstandingThrowsListingIt"), "names the allocation site: " + e.getMessage());
        assertThrows(IllegalStateException.class, () -> child.reserve(MemoryKind.HOST, 1, "after close"));
        leaked.release(); // freed late: its bytes still go back through the closed allocator
        assertEquals(0, parent.outstandingBytes());
        child.close(); // idempotent
        parent.close();
        assertThrows(IllegalStateException.class, () -> NativeAllocator.root().close());
    }

    @Test
    void concurrentReservationsNeverPassTheLimitAndAllComeBack() throws Exception {
        int threads = 8;
        int rounds = 20_000;
        long limit = 16 * 4096;
        try (NativeAllocator parent = NativeAllocator.root().newChild("test parent", limit, NativeAllocator.UNLIMITED)) {
            List<NativeAllocator> children = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                children.add(parent.newChild("child " + t, limit / 2, NativeAllocator.UNLIMITED));
            }
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            CountDownLatch start = new CountDownLatch(1);
            List<Future<Long>> refused = new ArrayList<>();
            java.util.concurrent.atomic.AtomicLong maxSeen = new java.util.concurrent.atomic.AtomicLong();
            for (int t = 0; t < threads; t++) {
                NativeAllocator c = children.get(t);
                refused.add(pool.submit(() -> {
                    start.await();
                    long n = 0;
                    List<NativeAllocator.Allocation> held = new ArrayList<>();
                    for (int i = 0; i < rounds; i++) {
                        try {
                            held.add(c.reserve(i % 2 == 0 ? MemoryKind.HOST : MemoryKind.PINNED, 4096, "page"));
                        } catch (MemoryBudgetException e) {
                            n++;
                        }
                        maxSeen.accumulateAndGet(parent.charged(MemoryKind.Budget.HOST), Math::max);
                        if (held.size() >= 6 || i % 7 == 0) {
                            held.forEach(NativeAllocator.Allocation::release);
                            held.clear();
                        }
                    }
                    held.forEach(NativeAllocator.Allocation::release);
                    return n;
                }));
            }
            start.countDown();
            long totalRefused = 0;
            for (Future<Long> f : refused) {
                totalRefused += f.get();
            }
            pool.shutdown();
            assertTrue(maxSeen.get() <= limit, "never above the limit: " + maxSeen.get());
            assertTrue(totalRefused > 0, "8 threads x up to 6 pages contend for 16 pages' budget");
            assertEquals(0, parent.outstandingBytes());
            assertEquals(0, parent.usage().hostBytes());
            assertEquals(0, parent.charged(MemoryKind.Budget.HOST));
            children.forEach(NativeAllocator::close);
        }
    }

    @Test
    void checkAvailableRefusesWithoutCharging() {
        try (NativeAllocator parent = NativeAllocator.root().newChild("test parent", 10 * MIB, NativeAllocator.UNLIMITED)) {
            parent.checkAvailable(MemoryKind.HOST, 10 * MIB, "a ring");
            MemoryBudgetException e = assertThrows(MemoryBudgetException.class,
                    () -> parent.checkAvailable(MemoryKind.PINNED, 10 * MIB + 1, "prefetch depth 2 x 5.0 MiB"));
            assertTrue(e.getMessage().contains("(prefetch depth 2 x 5.0 MiB)"), e.getMessage());
            parent.checkAvailable(MemoryKind.DEVICE, Long.MAX_VALUE / 2, "no device limit");
            assertEquals(0, parent.outstandingBytes());
        }
    }

    @Test
    void limitsComeFromPropertiesAsByteCountsWithOrWithoutBinaryUnits() {
        assertEquals(7, NativeAllocator.limitFrom("p", null, 7));
        assertEquals(1073741824L, NativeAllocator.limitFrom("p", " 1073741824 ", 7));
        assertEquals(1073741824L, NativeAllocator.limitFrom("p", "1G", 7));
        assertEquals(1048576L, NativeAllocator.limitFrom("p", "1MiB", 7));
        assertEquals(64L << 30, NativeAllocator.limitFrom("p", "64 GiB", 7));
        assertEquals(4096L, NativeAllocator.limitFrom("p", "4kib", 7));
        assertEquals(2L << 50, NativeAllocator.limitFrom("p", "2PiB", 7), "PiB as the CLI's byte options take it");
        assertEquals(8191L << 50, NativeAllocator.limitFrom("p", "8191P", 7));
        for (String bad : new String[] {"abc", "-1", "1.5G", "1EiB", "8192PiB", "99999999999T"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NativeAllocator.limitFrom("p", bad, 7));
            assertEquals("p must be a byte count >= 0 (e.g. 68719476736 or 64GiB), got '" + bad + "'", e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> NativeAllocator.root().newChild("x", -1, 0));
        long half = NativeAllocator.hostMemoryBytes() / 2;
        assertEquals(Long.getLong(NativeAllocator.HOST_LIMIT_PROPERTY, half), NativeAllocator.root().hostLimit());
    }
}
