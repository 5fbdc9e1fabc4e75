package dev.gdsloader.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The registry of mapped shards over real files and real mappings, with a registrar that registers nothing (no GPU
 * here): one mapping per version of a file however many leases share it, undone by the last lease, a changed file
 * named by the check, a refused registration leaving nothing behind.
 */
class MappedShardsTest {
    @TempDir
    Path dir;

    private Path file(String name, int bytes) throws IOException {
        byte[] b = new byte[bytes];
        for (int i = 0; i < bytes; i++) {
            b[i] = (byte) (i * 7);
        }
        return Files.write(dir.resolve(name), b);
    }

    @Test
    void leasesOfOneFileShareOneMappingUndoneByTheLast() throws IOException {
        AtomicInteger registrations = new AtomicInteger();
        AtomicInteger undone = new AtomicInteger();
        MappedShards reg = counting(registrations, undone);
        Path f = file("a.npy", 10_000);
        MappedShards.Lease a = reg.acquire(f);
        MappedShards.Lease b = reg.acquire(dir.resolve(".").resolve("a.npy"));
        assertEquals(1, registrations.get());
        assertEquals(1, reg.size());
        assertEquals(10_000, reg.registeredBytes());
        assertEquals(a.hostAddress(0), b.hostAddress(0));
        assertEquals(0, a.hostAddress(0) % 4096, "a mapping starts on a page");
        assertEquals(a.hostAddress(123), a.deviceAddress(123));
        assertTrue(a.registrationNanos() > 0);
        assertEquals(0, b.registrationNanos(), "the second lease shares the mapping");
        assertThrows(IndexOutOfBoundsException.class, () -> a.deviceAddress(10_001));
        a.close();
        a.close(); // once
        assertEquals(1, reg.size());
        assertEquals(0, undone.get());
        b.close();
        assertEquals(0, reg.size());
        assertEquals(1, undone.get());
        assertThrows(IllegalStateException.class, () -> b.hostAddress(0));
    }

    @Test
    void aChangedFileIsNamedAndGetsItsOwnMapping() throws IOException {
        MappedShards reg = new MappedShards(MappedShards.IDENTITY);
        Path f = file("b.npy", 5000);
        try (MappedShards.Lease a = reg.acquire(f)) {
            a.checkUnchanged();
            Files.setLastModifiedTime(f, FileTime.fromMillis(Files.getLastModifiedTime(f).toMillis() - 60_000));
            IOException x = assertThrows(IOException.class, a::checkUnchanged);
            assertTrue(x.getMessage().startsWith(f + ": changed since it was registered for the MAPPED path (size 5000 -> "
                    + "5000 bytes"), x.getMessage());
            try (MappedShards.Lease b = reg.acquire(f)) {
                assertEquals(2, reg.size(), "the new version is another mapping");
                assertNotEquals(a.key(), b.key());
                b.checkUnchanged();
            }
        }
        assertEquals(0, reg.size());
    }

    @Test
    void aResizedFileIsNamedWithBothSizes() throws IOException {
        MappedShards reg = new MappedShards(MappedShards.IDENTITY);
        Path f = file("c.npy", 5000);
        try (MappedShards.Lease a = reg.acquire(f)) {
            FileTime t = Files.getLastModifiedTime(f);
            Files.write(f, new byte[4000]);
            Files.setLastModifiedTime(f, t); // same time: the size alone must tell
            IOException x = assertThrows(IOException.class, a::checkUnchanged);
            assertTrue(x.getMessage().contains(f + ": changed since it was registered for the MAPPED path (size 5000 -> 4000"),
                    x.getMessage());
        }
    }

    @Test
    void aRefusedRegistrationLeavesNothingBehind() throws IOException {
        MappedShards reg = new MappedShards(m -> {
            throw new IOException(m.path() + ": refused (test)");
        });
        Path f = file("d.npy", 100);
        IOException x = assertThrows(IOException.class, () -> reg.acquire(f));
        assertEquals(f + ": refused (test)", x.getMessage());
        assertEquals(0, reg.size());
        assertThrows(IOException.class, () -> reg.acquire(file("e.npy", 0)), "an empty file cannot be mapped");
        assertEquals(0, reg.size());
    }

    /** A registrar over IDENTITY that counts registrations and their undoing. */
    private static MappedShards counting(AtomicInteger registrations, AtomicInteger undone) {
        return new MappedShards(m -> {
            registrations.incrementAndGet();
            MappedShards.Registered r = MappedShards.IDENTITY.register(m);
            return new MappedShards.Registered() {
                @Override
                public long deviceAddress(long offset) {
                    return r.deviceAddress(offset);
                }

                @Override
                public void close() {
                    undone.incrementAndGet();
                }
            };
        });
    }

    @Test
    void aLingeringRegistrationIsReusedByTheNextLeaseAndUndoneWhenItsTimeIsUp() throws Exception {
        AtomicInteger registrations = new AtomicInteger();
        AtomicInteger undone = new AtomicInteger();
        MappedShards reg = counting(registrations, undone);
        assertEquals(java.time.Duration.ZERO, reg.linger(java.time.Duration.ofMillis(300)));
        Path f = file("l.npy", 8192);
        MappedShards.Lease a = reg.acquire(f);
        assertTrue(a.registrationNanos() > 0);
        a.close();
        assertEquals(0, undone.get(), "lingers after its last lease");
        assertEquals(1, reg.size());
        MappedShards.Lease b = reg.acquire(f);
        assertEquals(1, registrations.get(), "the next lease reuses the lingering registration");
        assertEquals(0, b.registrationNanos());
        Thread.sleep(450); // the first linger's time passes while b holds it: not undone
        assertEquals(0, undone.get());
        b.close();
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (undone.get() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(1, undone.get(), "undone once its linger after the last lease is up");
        assertEquals(0, reg.size());
        assertEquals(0, reg.registeredBytes());
    }

    @Test
    void closeIdleAndALingerOfZeroUndoLingeringRegistrationsNowButNotHeldOnes() throws IOException {
        AtomicInteger registrations = new AtomicInteger();
        AtomicInteger undone = new AtomicInteger();
        MappedShards reg = counting(registrations, undone);
        reg.linger(java.time.Duration.ofHours(1));
        MappedShards.Lease held = reg.acquire(file("h.npy", 4096));
        reg.acquire(file("i.npy", 4096)).close();
        reg.acquire(file("j.npy", 4096)).close();
        assertEquals(3, reg.size());
        assertEquals(2, reg.closeIdle());
        assertEquals(2, undone.get());
        assertEquals(1, reg.size(), "the held one stays");
        reg.acquire(file("k.npy", 4096)).close();
        assertEquals(java.time.Duration.ofHours(1), reg.linger(java.time.Duration.ZERO));
        assertEquals(3, undone.get(), "a linger of zero undoes the lingering one at once");
        held.close();
        assertEquals(4, undone.get(), "and later ones with their last lease");
        assertEquals(0, reg.size());
        assertThrows(IllegalArgumentException.class, () -> reg.linger(java.time.Duration.ofSeconds(-1)));
    }

    /** Two holders (servers) each ask for a linger: the longest live one holds; closing one takes back only its own. */
    @Test
    void eachHolderAsksForItsOwnLingerAndTheLongestLiveOneHolds() throws IOException {
        AtomicInteger registrations = new AtomicInteger();
        AtomicInteger undone = new AtomicInteger();
        MappedShards reg = counting(registrations, undone);
        MappedShards.LingerRequest a = reg.requestLinger(java.time.Duration.ofHours(1));
        MappedShards.LingerRequest b = reg.requestLinger(java.time.Duration.ofMinutes(1));
        assertEquals(java.time.Duration.ofHours(1), reg.linger());
        a.close();
        assertEquals(java.time.Duration.ofMinutes(1), reg.linger(), "the other holder's linger stays");
        reg.acquire(file("m.npy", 4096)).close();
        assertEquals(0, undone.get(), "lingers under the remaining holder's request");
        a.close();
        assertEquals(java.time.Duration.ofMinutes(1), reg.linger(), "a second close takes back nothing more");
        MappedShards.LingerRequest none = reg.requestLinger(java.time.Duration.ZERO);
        assertEquals(java.time.Duration.ofMinutes(1), reg.linger(), "a request of zero does not shorten another's");
        b.close();
        assertEquals(java.time.Duration.ZERO, reg.linger());
        assertEquals(1, undone.get(), "no linger left: the lingering registration is undone at once");
        none.close();
        assertEquals(0, reg.size());
        assertThrows(IllegalArgumentException.class, () -> reg.requestLinger(java.time.Duration.ofSeconds(-1)));
    }
}
