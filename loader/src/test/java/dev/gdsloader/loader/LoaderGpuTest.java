package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cufile.CuFileProbe;
import dev.gdsloader.cufile.CuFileStatus;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.path.ReadPath;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The loader's device paths on a real GPU: every byte of every batch checked after it reached GPU memory. */
@Tag("gpu")
class LoaderGpuTest {
    @TempDir
    Path dir;

    @BeforeAll
    static void needsGpu() {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        CudaDevice.makeCurrent(0);
    }

    @ParameterizedTest(name = "{0}, batch {1}, maxIo {2}, threads {3}, GDS threshold {4}")
    @CsvSource({"GDS, 5, 4096, 1, 0", "GDS, 64, 8388608, 4, 0", "GDS, 1000, 8192, 8, 0",
                "GDS, 5, 4096, 1, 1048576", "GDS, 64, 8388608, 4, 2000", "GDS, 1000, 8192, 8, 100000",
                "BOUNCE, 5, 4096, 1, 0", "BOUNCE, 64, 8388608, 4, 0", "BOUNCE, 1000, 8192, 8, 0"})
    void everyBatchArrivesByteExactInDeviceMemory(ReadPath path, int batch, long maxIo, int threads, long gdsThreshold)
            throws IOException {
        if (path == ReadPath.GDS) {
            CuFileStatus st = CuFileProbe.probe(Optional.of(dir));
            assumeTrue(st.usable(), () -> "cuFile unusable here: " + st.reason());
        }
        int[] shards = {7, 130, 1, 0, 300};
        List<Path> images = TestShards.writeImages(dir, shards);
        List<Path> labels = TestShards.writeLabels(dir, shards);
        List<Path> weights = TestShards.writeWeights(dir, shards);
        long total = 438;
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(batch).path(path).maxIoBytes(maxIo).ioThreads(threads)
                .prefetchDepth(3).gdsThresholdBytes(gdsThreshold).build();
             CudaStream consumer = CudaStream.create()) {
            assertEquals(path == ReadPath.BOUNCE ? PathTaken.BOUNCE : loader.pathTaken(), loader.pathTaken());
            if (path == ReadPath.GDS) {
                assertTrue(loader.pathReason().contains("GDS threshold " + gdsThreshold), loader.pathReason());
            }
            long next = 0;
            for (Batch b : loader) {
                assertEquals(next, b.firstRecord());
                assertTrue(b.readyEvent().isPresent());
                b.awaitOn(consumer);
                assertArrayEquals(TestShards.fromFiles(images, b.firstRecord(), b.records()),
                        FixtureLoads.download(b.column("images"), consumer),
                        "images of batch " + b.index());
                assertArrayEquals(TestShards.fromFiles(labels, b.firstRecord(), b.records()),
                        FixtureLoads.download(b.column("labels"), consumer));
                ColumnView w = b.column("weights");
                assertEquals(0, w.devicePointer() % 4, "float32 view is 4-byte aligned on the device");
                assertArrayEquals(TestShards.fromFiles(weights, b.firstRecord(), b.records()), FixtureLoads.download(w, consumer));
                next += b.records();
                b.release(consumer);
            }
            assertEquals(total, next);
        }
    }

    @ParameterizedTest(name = "{0}, GDS threshold {1}")
    @CsvSource({"GDS, 0", "GDS, 1048576", "BOUNCE, 0"})
    void globallyShuffledRecordsArriveByteExactInDeviceMemory(ReadPath path, long gdsThreshold) throws IOException {
        if (path == ReadPath.GDS) {
            CuFileStatus st = CuFileProbe.probe(Optional.of(dir));
            assumeTrue(st.usable(), () -> "cuFile unusable here: " + st.reason());
        }
        int[] shards = {7, 130, 1, 300};
        List<Path> images = TestShards.writeImages(dir, shards);
        List<Path> labels = TestShards.writeLabels(dir, shards);
        long seen = 0;
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(100).path(path).ioThreads(4).prefetchDepth(3)
                .shuffle(dev.gdsloader.loader.sampler.Shuffle.GLOBAL, 17).gdsThresholdBytes(gdsThreshold).build();
             CudaStream consumer = CudaStream.create()) {
            for (Batch b : loader) {
                b.awaitOn(consumer);
                java.io.ByteArrayOutputStream wantImages = new java.io.ByteArrayOutputStream();
                java.io.ByteArrayOutputStream wantLabels = new java.io.ByteArrayOutputStream();
                for (long r : b.recordIndices()) {
                    wantImages.writeBytes(TestShards.fromFiles(images, r, 1));
                    wantLabels.writeBytes(TestShards.fromFiles(labels, r, 1));
                }
                assertArrayEquals(wantImages.toByteArray(), FixtureLoads.download(b.column("images"), consumer),
                        "images of " + b.describe());
                assertArrayEquals(wantLabels.toByteArray(), FixtureLoads.download(b.column("labels"), consumer),
                        "labels of " + b.describe());
                seen += b.records();
                b.release(consumer);
            }
        }
        assertEquals(438, seen);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"GDS", "BOUNCE"})
    void aFloat32SafetensorsTensorAtAnOddOffsetArrivesAlignedAndExactOnTheDevice(ReadPath path) throws IOException {
        if (path == ReadPath.GDS) {
            CuFileStatus st = CuFileProbe.probe(Optional.of(dir));
            assumeTrue(st.usable(), () -> "cuFile unusable here: " + st.reason());
        }
        java.nio.ByteBuffer f = java.nio.ByteBuffer.allocate(3000 * 4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 3000; i++) {
            f.putFloat(i * 0.5f);
        }
        java.util.Map<String, dev.gdsloader.formats.safetensors.TensorData> t = new java.util.LinkedHashMap<>();
        t.put("odd", new dev.gdsloader.formats.safetensors.TensorData(dev.gdsloader.formats.DType.UINT8, new long[] {3},
                new byte[] {1, 2, 3}));
        t.put("values", new dev.gdsloader.formats.safetensors.TensorData(dev.gdsloader.formats.DType.FLOAT32,
                new long[] {1000, 3}, f.array()));
        Path file = dir.resolve("t-00000.safetensors");
        dev.gdsloader.formats.safetensors.SafetensorsWriter.write(file, t, java.util.Map.of());
        var d = dev.gdsloader.loader.dataset.Dataset.ofShards(dir, List.of(file), List.of("values"));
        java.io.ByteArrayOutputStream got = new java.io.ByteArrayOutputStream();
        try (GdsLoader loader = GdsLoader.builder(d).batchSize(300).path(path).build(); CudaStream s = CudaStream.create()) {
            for (Batch b : loader) {
                b.awaitOn(s);
                ColumnView v = b.column("values");
                assertEquals(0, v.devicePointer() % 16, "device view aligned");
                got.writeBytes(FixtureLoads.download(v, s));
                b.release(s);
            }
        }
        assertArrayEquals(f.array(), got.toByteArray());
    }

    @Test
    void closeReturnsDeviceMemoryToItsBaseline() throws IOException {
        TestShards.writeImages(dir, 5000);
        consumeOneEpoch(ReadPath.BOUNCE); // warm up lazily created CUDA state
        long before = CudaDevice.memoryInfo()[0];
        consumeOneEpoch(ReadPath.BOUNCE);
        long after = CudaDevice.memoryInfo()[0];
        assertTrue(Math.abs(after - before) < (16L << 20), "free device memory " + before + " -> " + after);
    }

    private void consumeOneEpoch(ReadPath path) throws IOException {
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(512).path(path).build()) {
            for (Batch b : loader) {
                b.close();
            }
        }
    }

    @Test
    void autoTakesMappedThenCuFileOnlyWithTrueGpuDirectAndSaysWhy() throws IOException {
        TestShards.writeImages(dir, 10);
        CuFileStatus st = CuFileProbe.probe(Optional.of(dir));
        try (GdsLoader loader = GdsLoader.builder(dir).batchSize(4).build()) {
            if (dev.gdsloader.cuda.HostRegistration.support(0).readOnlyRegistration()) {
                // a small dataset on a GPU with read-only host registration: MAPPED comes first
                assertEquals(PathTaken.MAPPED, loader.pathTaken(), loader.pathReason());
                assertTrue(loader.pathReason().startsWith("MAPPED: the dataset ("), loader.pathReason());
            } else if (st.usable() && st.mode() == dev.gdsloader.cufile.CuFileMode.GDS) {
                assertEquals(PathTaken.GDS, loader.pathTaken(), loader.pathReason());
            } else {
                // no cuFile, or only its compat mode (its own bounce): the loader's bounce path
                assertEquals(PathTaken.BOUNCE, loader.pathTaken(), loader.pathReason());
                if (st.usable()) {
                    assertTrue(loader.pathReason().startsWith("BOUNCE: cuFile runs only in compat mode here"),
                            loader.pathReason());
                }
            }
            assertTrue(loader.pathReason().length() > 10, loader.pathReason());
        }
    }

    /** A bounce-path loader's device and pinned slot memory is charged to its allocator until close. */
    @Test
    void aBouncePathLoaderHoldsDeviceAndPinnedMemoryUntilClose() throws IOException {
        TestShards.writeImages(dir, 300, 200);
        try (dev.gdsloader.memory.NativeAllocator parent = dev.gdsloader.memory.NativeAllocator.root().newChild("gpu loader parent", 1L << 30, 1L << 30)) {
            try (GdsLoader loader = GdsLoader.builder(dir).batchSize(64).path(ReadPath.BOUNCE).prefetchDepth(3)
                    .allocator(parent).build()) {
                dev.gdsloader.memory.MemoryUsage m = loader.stats().memory();
                assertTrue(m.device() >= 3L * 64 * TestShards.IMAGE_BYTES, m.toString());
                assertTrue(m.pinned() > 0, m.toString());
                assertEquals(0, m.host(), m.toString());
                assertEquals(m.outstandingBytes(), parent.outstandingBytes());
                for (Batch b : loader) {
                    b.close();
                }
            }
            assertEquals(0, parent.outstandingBytes());
        }
    }
}
