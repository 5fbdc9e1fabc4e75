package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Shuffle;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Device groups on the GPU. On one GPU: a group of one behaves exactly as a plain loader (the same bytes of every
 * batch, the same counters), on every device path this machine has. On two or more GPUs: a group of two delivers every
 * batch byte-exact on both GPUs, each member on its own thread and stream, with storage read once.
 */
@org.junit.jupiter.api.Tag("gpu")
class DeviceGroupGpuTest {
    @TempDir
    static Path dir;
    static List<Path> images;
    static List<Path> labels;

    @BeforeAll
    static void data() throws IOException {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        CudaDevice.makeCurrent(0);
        images = TestShards.writeImages(dir, 7, 130, 1, 0, 300);
        labels = TestShards.writeLabels(dir, 7, 130, 1, 0, 300);
    }

    private static GdsLoader.Builder builder(ReadPath path) {
        return GdsLoader.builder(dir).batchSize(64).path(path).prefetchDepth(3).maxIoBytes(8192).shuffle(Shuffle.GLOBAL, 3);
    }

    /** Each batch's index, records and column bytes, read back on {@code s}. */
    private static List<Object[]> drain(Iterator<Batch> it, CudaStream s) {
        List<Object[]> out = new ArrayList<>();
        while (it.hasNext()) {
            Batch b = it.next();
            b.awaitOn(s);
            out.add(new Object[] {b.index(), b.recordIndices(), FixtureLoads.download(b.column("images"), s),
                FixtureLoads.download(b.column("labels"), s)});
            b.release(s);
        }
        return out;
    }

    private static void assertSameBatches(List<Object[]> want, List<Object[]> got, String what) {
        assertEquals(want.size(), got.size(), what);
        for (int i = 0; i < want.size(); i++) {
            assertEquals(want.get(i)[0], got.get(i)[0], what);
            assertArrayEquals((long[]) want.get(i)[1], (long[]) got.get(i)[1], what + " batch " + i);
            assertArrayEquals((byte[]) want.get(i)[2], (byte[]) got.get(i)[2], what + " images of batch " + i);
            assertArrayEquals((byte[]) want.get(i)[3], (byte[]) got.get(i)[3], what + " labels of batch " + i);
        }
    }

    @ParameterizedTest
    @EnumSource(value = ReadPath.class, names = {"BOUNCE", "MAPPED", "AUTO"})
    void aGroupOfOneIsAPlainLoader(ReadPath path) throws IOException {
        List<Object[]> plain;
        LoaderStats plainStats;
        PathTaken plainPath;
        try (GdsLoader l = builder(path).build(); CudaStream s = CudaStream.create()) {
            plain = drain(l.iterator(), s);
            plainStats = l.stats();
            plainPath = l.pathTaken();
        }
        try (GdsLoader l = builder(path).deviceGroup(0).build(); CudaStream s = CudaStream.create()) {
            assertEquals(plainPath, l.pathTaken());
            GroupEpoch e = l.groupEpoch();
            List<Object[]> got = drain(e.member(0), s);
            assertSameBatches(plain, got, path + " group of one");
            LoaderStats st = l.stats();
            assertEquals(plainStats.batches(), st.batches());
            assertEquals(plainStats.bytes(), st.bytes());
            assertEquals(plainStats.storageBytes(), st.storageBytes(), "storage bytes");
            assertEquals(List.of((long) plain.size()), e.stats().memberBatches());
            assertEquals(0, e.stats().fanOutBytes(), "a group of one copies nothing");
            assertEquals(List.of(plainStats.memory().device(), plainStats.memory().pinned(), plainStats.memory().host()),
                    List.of(st.memory().device(), st.memory().pinned(), st.memory().host()), "the same memory held (its allocator's "
                    + "name aside)");
        }
    }

    @ParameterizedTest
    @EnumSource(value = ReadPath.class, names = {"BOUNCE", "MAPPED"})
    void aGroupOfTwoGpusGetsEveryBatchByteExactOnBothWithStorageReadOnce(ReadPath path) throws Exception {
        assumeTrue(Cuda.availability().deviceCount() >= 2, "needs two GPUs");
        List<Object[]> plain;
        long plainStorage;
        try (GdsLoader l = builder(path).build(); CudaStream s = CudaStream.create()) {
            plain = drain(l.iterator(), s);
            plainStorage = l.stats().storageBytes();
        }
        try (GdsLoader l = builder(path).deviceGroup(0, 1).build()) {
            assertTrue(l.pathReason().contains("device group [0, 1]"), l.pathReason());
            for (int epoch = 0; epoch < 2; epoch++) {
                GroupEpoch e = l.groupEpoch();
                List<CompletableFuture<List<Object[]>>> got = new ArrayList<>();
                for (int m = 0; m < 2; m++) {
                    Iterator<Batch> it = e.member(m);
                    int gpu = m;
                    CompletableFuture<List<Object[]>> f = new CompletableFuture<>();
                    Thread.ofPlatform().daemon().start(() -> {
                        try {
                            CudaDevice.makeCurrent(gpu);
                            try (CudaStream s = CudaStream.create()) {
                                f.complete(drain(it, s));
                            }
                        } catch (Throwable t) {
                            f.completeExceptionally(t);
                        }
                    });
                    got.add(f);
                }
                List<Object[]> g0 = got.get(0).get(60, TimeUnit.SECONDS);
                List<Object[]> g1 = got.get(1).get(60, TimeUnit.SECONDS);
                if (epoch == 0) {
                    assertSameBatches(plain, g0, path + " member 0 (GPU 0)");
                    assertSameBatches(plain, g1, path + " member 1 (GPU 1)");
                    assertEquals(plainStorage, e.stats().loader().storageBytes(), "storage read once");
                }
                assertTrue(e.stats().fanOutBytes() >= e.stats().loader().bytes(), e.stats().toString());
            }
        }
    }
}
