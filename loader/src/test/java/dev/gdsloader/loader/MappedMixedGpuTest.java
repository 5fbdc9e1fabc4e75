package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.HostRegistration;
import dev.gdsloader.cuda.MappedShards;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Shuffle;
import dev.gdsloader.memory.MemoryKind;
import dev.gdsloader.memory.NativeAllocator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * MAPPED over a mixed dataset on a real GPU: {@code .npz} archives whose deflated members (host-decoded) and stored
 * members (mapped) alternate in both columns ({@link TestShards#writeMixedNpz}). Requested and under AUTO, with and
 * without a global shuffle, over two epochs (so every slot's staging is reused): every batch is byte-identical
 * (downloaded) to the HOST path's, reports {@link PathTaken#MAPPED} with {@link Batch#stagedBytes()} equal to the
 * bytes of its records that live in deflated members (counted here from the archive layout, independently of the
 * loader), the reason names the staged runs, only the archives with a stored member are registered and charged, and
 * after {@code close()} the allocator holds nothing and no registration is left.
 */
@Tag("gpu")
class MappedMixedGpuTest {
    /** Records per archive: sequential batches of 2000 784-byte images make pieces of over 1 MiB (copies). */
    private static final int[] SHARDS = {3000, 1700, 2500, 1200};

    @TempDir
    Path dir;

    @BeforeAll
    static void needsReadOnlyRegistration() {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        CudaDevice.makeCurrent(0);
        HostRegistration.Support s = HostRegistration.support(0);
        assumeTrue(s.readOnlyRegistration(), () -> "MAPPED unavailable here: " + s.reason());
    }

    /** @return whether column {@code name} of archive {@code s} is a deflated member, as writeMixedNpz writes them */
    private static boolean deflated(String name, int s) {
        return name.equals("images") ? s % 2 == 0 : s % 3 == 0;
    }

    /** @return the archive holding global record {@code r} */
    private static int shardOf(long r) {
        long first = 0;
        for (int s = 0; s < SHARDS.length; s++) {
            first += SHARDS[s];
            if (r < first) {
                return s;
            }
        }
        throw new AssertionError("record " + r + " past the dataset");
    }

    /** One pass: per column, every batch's bytes in order; checks each batch's path and staged bytes on the way. */
    private static Map<String, byte[]> epochs(GdsLoader loader, int epochs) throws IOException {
        Map<String, ByteArrayOutputStream> out = new LinkedHashMap<>();
        boolean device = loader.pathTaken().onDevice();
        long stagedSeen = 0;
        try (CudaStream s = device ? CudaStream.create() : null) {
            for (int e = 0; e < epochs; e++) {
                Iterator<Batch> it = loader.iterator();
                while (it.hasNext()) {
                    Batch b = it.next();
                    long expectStaged = 0;
                    for (var col : loader.dataset().columns()) {
                        for (long r : b.recordIndices()) {
                            expectStaged += deflated(col.name(), shardOf(r)) ? col.recordBytes() : 0;
                        }
                    }
                    assertEquals(loader.pathTaken(), b.path());
                    assertEquals(loader.pathTaken() == PathTaken.MAPPED ? expectStaged : 0, b.stagedBytes(), b.describe());
                    long staged = b.stagedBytes();
                    stagedSeen += staged;
                    if (device) {
                        b.awaitOn(s);
                    }
                    for (var col : loader.dataset().columns()) {
                        ColumnView v = b.column(col.name());
                        byte[] bytes = device ? FixtureLoads.download(v, s) : v.hostSegment().toArray(ValueLayout.JAVA_BYTE);
                        out.computeIfAbsent(col.name(), k -> new ByteArrayOutputStream()).writeBytes(bytes);
                    }
                    if (device) {
                        b.release(s);
                    } else {
                        b.close();
                    }
                    assertEquals(staged, b.stagedBytes(), "readable after release");
                }
            }
        }
        if (loader.pathTaken() == PathTaken.MAPPED) {
            assertTrue(stagedSeen > 0, "some batches went through staging");
        }
        Map<String, byte[]> r = new LinkedHashMap<>();
        out.forEach((k, v) -> r.put(k, v.toByteArray()));
        return r;
    }

    @ParameterizedTest(name = "{0}, {1}, batch {2}")
    @CsvSource({"MAPPED, NONE, 2000", "MAPPED, NONE, 97", "MAPPED, SHARD_BLOCKS, 700", "MAPPED, GLOBAL, 256",
                "MAPPED, GLOBAL, 33", "AUTO, GLOBAL, 512", "AUTO, NONE, 1024"})
    void mixedDatasetOnMappedMatchesTheHostPathAndSaysWhatWasStaged(ReadPath path, Shuffle shuffle, int batch)
            throws IOException {
        List<Path> archives = TestShards.writeMixedNpz(dir, SHARDS);
        long mappable = 0;
        for (Path f : archives.subList(1, archives.size())) {
            mappable += Files.size(f);
        }
        Map<String, byte[]> host;
        try (GdsLoader h = GdsLoader.builder(dir).path(ReadPath.HOST).batchSize(batch).shuffle(shuffle, 7).build()) {
            host = epochs(h, 2);
        }
        try (NativeAllocator parent = NativeAllocator.root().newChild("MappedMixedGpuTest", 4L << 30, 4L << 30)) {
            Map<String, byte[]> mapped;
            try (GdsLoader m = GdsLoader.builder(dir).path(path).batchSize(batch).shuffle(shuffle, 7).prefetchDepth(3)
                    .ioThreads(4).allocator(parent).build()) {
                assertEquals(PathTaken.MAPPED, m.pathTaken(), m.pathReason());
                String staged = "4 host-decoded shard runs decoded on the host and copied through pinned staging";
                assertTrue(m.pathReason().startsWith("HOST-DECODE: "), m.pathReason());
                assertTrue(m.pathReason().contains(path == ReadPath.AUTO
                        ? "; MAPPED: the dataset's mappable shards (" : "; MAPPED: requested; " + staged), m.pathReason());
                assertTrue(m.pathReason().contains(staged), m.pathReason());
                assertEquals(3, MappedShards.process().size(), "archive 0 holds no stored member: not registered");
                assertEquals(mappable, m.stats().memory().bytes(MemoryKind.HOST_REGISTERED));
                mapped = epochs(m, 2);
            }
            assertEquals(0, parent.outstandingBytes(), parent.describeOutstanding());
            assertEquals(host.keySet(), mapped.keySet());
            for (String c : host.keySet()) {
                assertArrayEquals(host.get(c), mapped.get(c), path + " " + shuffle + " batch " + batch + ", column " + c);
            }
        }
        assertEquals(0, MappedShards.process().size(), "no registration left after close");
    }
}
