package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaModule;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.HostRegistration;
import dev.gdsloader.cuda.MappedShards;
import dev.gdsloader.cuda.Nvrtc;
import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.sampler.Partition;
import dev.gdsloader.loader.sampler.Shuffle;
import dev.gdsloader.memory.MemoryKind;
import dev.gdsloader.memory.NativeAllocator;
import dev.gdsloader.posix.FileMapping;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The MAPPED path on a real GPU: every batch of every column byte-identical (downloaded) to what the HOST path
 * delivers for the same options, for every sampler, several record sizes, ranks, resume and the real-writer fixtures;
 * AUTO's choice and reasons; a tiny budget refuses MAPPED naming both sizes; a changed shard fails the next epoch
 * naming it; a refused registration is reported by name and leaves no stale CUDA error; after {@code close()} the
 * allocator holds nothing and no registration is left.
 */
@Tag("gpu")
class MappedEngineGpuTest {
    @TempDir
    Path dir;

    private static HostRegistration.Support support;

    @BeforeAll
    static void needsGpu() {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        CudaDevice.makeCurrent(0);
        support = HostRegistration.support(0);
        System.out.println("MappedEngineGpuTest: " + support.reason());
    }

    private static void needsReadOnlyRegistration() {
        assumeTrue(support.readOnlyRegistration(), () -> "MAPPED unavailable here: " + support.reason());
    }

    private static byte value(long record, int j) {
        return (byte) (record * 31 + j * 7L + 1);
    }

    /** Writes columns x (uint8 [n, recordBytes]), labels (uint8) and weights (float32 x 3) in shards of these sizes. */
    private void write(int recordBytes, int... shards) throws IOException {
        long first = 0;
        for (int s = 0; s < shards.length; s++) {
            byte[] data = new byte[shards[s] * recordBytes];
            for (int r = 0; r < shards[s]; r++) {
                for (int j = 0; j < recordBytes; j++) {
                    data[r * recordBytes + j] = value(first + r, j);
                }
            }
            NpyWriter.write(dir.resolve(String.format("x-%05d.npy", s)), DType.UINT8, new long[] {shards[s], recordBytes}, data);
            first += shards[s];
        }
        TestShards.writeLabels(dir, shards);
        TestShards.writeWeights(dir, shards);
    }

    /**
     * Runs {@code epochs} epochs and gives back, per column, every batch's bytes in order (downloaded from the device
     * on a device path), checking each batch's ready event and view alignment on the way.
     */
    static Map<String, byte[]> epochs(GdsLoader loader, int epochs, int maxBatches) throws IOException {
        Map<String, ByteArrayOutputStream> out = new LinkedHashMap<>();
        try (CudaStream s = loader.pathTaken().onDevice() ? CudaStream.create() : null) {
            for (int e = 0; e < epochs; e++) {
                java.util.Iterator<Batch> it = loader.iterator();
                for (int n = 0; n < maxBatches && it.hasNext(); n++) {
                    Batch b = it.next();
                    if (s != null) {
                        assertTrue(b.readyEvent().isPresent());
                        b.awaitOn(s);
                    }
                    for (var col : loader.dataset().columns()) {
                        ColumnView v = b.column(col.name());
                        byte[] bytes;
                        if (s == null) {
                            bytes = v.hostSegment().toArray(ValueLayout.JAVA_BYTE);
                        } else {
                            assertEquals(0, v.devicePointer() % 16, col.name() + " view 16-byte aligned");
                            bytes = FixtureLoads.download(v, s);
                        }
                        out.computeIfAbsent(col.name(), k -> new ByteArrayOutputStream()).writeBytes(bytes);
                    }
                    if (s != null) {
                        b.release(s);
                    } else {
                        b.close();
                    }
                }
            }
        }
        Map<String, byte[]> r = new LinkedHashMap<>();
        out.forEach((k, v) -> r.put(k, v.toByteArray()));
        return r;
    }

    private Map<String, byte[]> load(ReadPath path, UnaryOperator<GdsLoader.Builder> options, int epochs) throws IOException {
        try (GdsLoader l = options.apply(GdsLoader.builder(dir).path(path)).build()) {
            if (path == ReadPath.MAPPED) {
                assertEquals(PathTaken.MAPPED, l.pathTaken(), l.pathReason());
            }
            return epochs(l, epochs, Integer.MAX_VALUE);
        }
    }

    private static void assertSame(Map<String, byte[]> host, Map<String, byte[]> mapped, String what) {
        assertEquals(host.keySet(), mapped.keySet());
        for (String c : host.keySet()) {
            assertArrayEquals(host.get(c), mapped.get(c), what + ", column " + c);
        }
    }

    @ParameterizedTest(name = "{0}, {1} B records, batch {2}, rank {3} of {4}")
    @CsvSource({"NONE, 784, 64, 0, 1", "NONE, 1, 1000, 0, 1", "NONE, 4096, 300, 1, 2", "NONE, 70000, 40, 0, 1",
                "SHARD_BLOCKS, 784, 100, 0, 1", "SHARD_BLOCKS, 70000, 20, 1, 3", "SHARD_BLOCKS, 4096, 512, 0, 1",
                "SHARD_BLOCKS, 13, 77, 0, 1", "GLOBAL, 1, 1000, 0, 1", "GLOBAL, 784, 64, 1, 2", "GLOBAL, 4096, 37, 0, 1",
                "GLOBAL, 70000, 5, 0, 1", "GLOBAL, 13, 250, 0, 1", "GLOBAL, 100, 128, 2, 3"})
    void mappedDeliversTheHostPathsBytes(Shuffle shuffle, int recordBytes, int batch, int rank, int world) throws IOException {
        needsReadOnlyRegistration();
        write(recordBytes, 7, 130, 1, 300);
        UnaryOperator<GdsLoader.Builder> o = b -> b.batchSize(batch).shuffle(shuffle, 11).ranks(rank, world,
                Partition.EXACT_ONCE).prefetchDepth(3);
        Map<String, byte[]> host = load(ReadPath.HOST, o, 2);
        assertSame(host, load(ReadPath.MAPPED, o, 2), shuffle + " " + recordBytes + " B");
        assertEquals(0, MappedShards.process().size(), "no registration left after close");
    }

    /**
     * The refill of a slot is ordered after the consumer's release on its stream, on the device: the consumer's stream
     * spins about a millisecond before it copies each batch out (on the device, into one buffer per column), and the
     * loader, two slots deep, must not overwrite a slot under that queued copy. Nothing is synchronised on the host
     * until the epoch ends; the copies must then hold exactly the HOST path's bytes.
     */
    @Test
    void aConsumersQueuedWorkReadsItsBatchBeforeTheSlotIsRefilled() throws IOException {
        needsReadOnlyRegistration();
        write(784, 600, 601);
        UnaryOperator<GdsLoader.Builder> o = b -> b.batchSize(50).shuffle(Shuffle.GLOBAL, 3).prefetchDepth(2);
        Map<String, byte[]> host = load(ReadPath.HOST, o, 1);
        String spin = "extern \"C\" __global__ void spin(long long cycles) {"
                + " long long t0 = clock64(); while (clock64() - t0 < cycles) { } }";
        CudaDevice d = CudaDevice.get(0);
        String arch = "--gpu-architecture=compute_" + d.computeMajor() + d.computeMinor();
        try (GdsLoader l = o.apply(GdsLoader.builder(dir).path(ReadPath.MAPPED)).build();
             CudaModule m = CudaModule.load(Nvrtc.compileToPtx(spin, "spin.cu", arch));
             CudaStream s = CudaStream.create()) {
            assertEquals(PathTaken.MAPPED, l.pathTaken(), l.pathReason());
            var cols = l.dataset().columns();
            DeviceBuffer[] all = new DeviceBuffer[cols.size()];
            long[] at = new long[cols.size()];
            try {
                for (int c = 0; c < all.length; c++) {
                    all[c] = DeviceBuffer.allocate(host.get(cols.get(c).name()).length);
                }
                for (Batch b : l) {
                    b.awaitOn(s);
                    m.launch("spin", 1, 1, s, 2_000_000L);
                    for (int c = 0; c < all.length; c++) {
                        ColumnView v = b.column(cols.get(c).name());
                        s.copyDeviceToDevice(all[c], at[c], v.deviceBuffer().orElseThrow(), v.deviceOffset(), v.bytes());
                        at[c] += v.bytes();
                    }
                    b.release(s);
                }
                s.synchronize();
                for (int c = 0; c < all.length; c++) {
                    String name = cols.get(c).name();
                    byte[] want = host.get(name);
                    assertEquals(want.length, at[c], name + " bytes delivered");
                    try (dev.gdsloader.cuda.PinnedBuffer back = dev.gdsloader.cuda.PinnedBuffer.allocate(want.length)) {
                        s.copyToHost(back, 0, all[c], 0, want.length);
                        s.synchronize();
                        assertArrayEquals(want, back.segment().toArray(ValueLayout.JAVA_BYTE), "column " + name);
                    }
                }
            } finally {
                for (DeviceBuffer b : all) {
                    if (b != null) {
                        b.close();
                    }
                }
            }
        }
    }

    @Test
    void resumeContinuesWithTheHostPathsBytes() throws IOException {
        needsReadOnlyRegistration();
        write(784, 50, 200, 77);
        UnaryOperator<GdsLoader.Builder> o = b -> b.batchSize(32).shuffle(Shuffle.GLOBAL, 5);
        LoaderState state;
        try (GdsLoader l = o.apply(GdsLoader.builder(dir).path(ReadPath.MAPPED)).build()) {
            epochs(l, 1, Integer.MAX_VALUE); // epoch 0
            LoaderStats s0 = l.stats(); // GPU time of the batches whose slots were refilled, timed by events
            assertTrue(s0.deviceBatches() > 0 && s0.deviceBatches() <= s0.batches() && s0.deviceNanos() > 0, s0.toString());
            epochs(l, 1, 3); // three batches of epoch 1
            state = l.state();
        }
        Map<String, byte[]> rest = load(ReadPath.MAPPED, b -> o.apply(b).resumeFrom(state), 1);
        Map<String, byte[]> host;
        try (GdsLoader l = o.apply(GdsLoader.builder(dir).path(ReadPath.HOST)).build()) {
            epochs(l, 1, Integer.MAX_VALUE);
            Map<String, byte[]> all = epochs(l, 1, Integer.MAX_VALUE);
            host = new LinkedHashMap<>();
            for (var c : l.dataset().columns()) {
                byte[] a = all.get(c.name());
                int skip = (int) (3 * 32 * c.recordBytes());
                host.put(c.name(), java.util.Arrays.copyOfRange(a, skip, a.length));
            }
        }
        assertSame(host, rest, "resumed epoch 1 after 3 batches");
    }

    @Test
    void autoTakesMappedWhereTheDatasetFitsAndBounceUnderATinyBudgetSayingWhy() throws IOException {
        write(784, 1000, 1000);
        long files = 0;
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                files += Files.size(p);
            }
        }
        try (GdsLoader l = GdsLoader.builder(dir).batchSize(16).build()) {
            if (support.readOnlyRegistration()) {
                assertEquals(PathTaken.MAPPED, l.pathTaken(), l.pathReason());
                assertTrue(l.pathReason().startsWith("MAPPED: the dataset ("), l.pathReason());
            } else {
                assertTrue(l.pathReason().contains("MAPPED declined: " + support.reason()), l.pathReason());
            }
        }
        needsReadOnlyRegistration();
        long limit = files - 1; // the ring of a bounce loader of batch 16 fits; the files do not
        IllegalStateException x = assertThrows(IllegalStateException.class,
                () -> GdsLoader.builder(dir).batchSize(16).path(ReadPath.MAPPED).memoryLimit(limit).build());
        assertTrue(x.getMessage().startsWith("MAPPED path refused: the dataset's 6 shard file(s) (" + files + " bytes, "),
                x.getMessage());
        assertTrue(x.getMessage().contains("do not fit the host budget of 'loader #"), x.getMessage());
        assertTrue(x.getMessage().contains("(" + limit + " bytes, "), x.getMessage());
        try (GdsLoader l = GdsLoader.builder(dir).batchSize(16).memoryLimit(limit).build()) {
            assertEquals(PathTaken.BOUNCE, l.pathTaken(), l.pathReason());
            assertTrue(l.pathReason().startsWith("BOUNCE: MAPPED declined: the dataset's 6 shard file(s)"), l.pathReason());
        }
        assertEquals(0, MappedShards.process().size());
    }

    @Test
    void registrationsAreChargedSharedAndAllGoneAfterClose() throws IOException {
        needsReadOnlyRegistration();
        write(4096, 100, 60);
        long files = 0;
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                files += Files.size(p);
            }
        }
        long freeBefore = CudaDevice.memoryInfo()[0];
        try (NativeAllocator parent = NativeAllocator.root().newChild("MappedEngineGpuTest", 1L << 30, 1L << 30)) {
            GdsLoader a = GdsLoader.builder(dir).batchSize(64).path(ReadPath.MAPPED).allocator(parent).build();
            try (GdsLoader b = GdsLoader.builder(dir).batchSize(10).path(ReadPath.MAPPED).shuffle(Shuffle.GLOBAL, 1)
                         .allocator(parent).build()) {
                assertEquals(6, MappedShards.process().size(), "one registration per file, shared by both loaders");
                assertEquals(files, MappedShards.process().registeredBytes());
                assertEquals(files, a.stats().memory().bytes(MemoryKind.HOST_REGISTERED), a.stats().memory().toString());
                assertEquals(files, b.stats().memory().bytes(MemoryKind.HOST_REGISTERED));
                assertTrue(a.stats().memory().device() > 0);
                assertTrue(a.stats().registrationNanos() > 0, "the first loader registered the files");
                assertEquals(a.stats().memory().outstandingBytes() + b.stats().memory().outstandingBytes(),
                        parent.outstandingBytes());
                epochs(a, 1, Integer.MAX_VALUE);
                a.close();
                assertEquals(6, MappedShards.process().size(), "b still holds them");
                epochs(b, 1, Integer.MAX_VALUE);
            } finally {
                a.close(); // once: later calls do nothing
            }
            assertEquals(0, parent.outstandingBytes(), parent.describeOutstanding());
        }
        assertEquals(0, MappedShards.process().size());
        long freeAfter = CudaDevice.memoryInfo()[0];
        assertTrue(Math.abs(freeAfter - freeBefore) < (16L << 20), "free device memory " + freeBefore + " -> " + freeAfter);
    }

    @Test
    void aShardChangedBetweenEpochsFailsTheNextEpochNamingIt() throws IOException {
        needsReadOnlyRegistration();
        write(784, 40, 40);
        Path shard = dir.resolve("x-00001.npy");
        try (GdsLoader l = GdsLoader.builder(dir).batchSize(16).path(ReadPath.MAPPED).build()) {
            epochs(l, 1, Integer.MAX_VALUE);
            Files.setLastModifiedTime(shard, FileTime.fromMillis(Files.getLastModifiedTime(shard).toMillis() + 3000));
            UncheckedIOException x = assertThrows(UncheckedIOException.class, l::iterator);
            assertTrue(x.getMessage().startsWith(shard + ": changed since it was registered for the MAPPED path"),
                    x.getMessage());
        }
        assertEquals(0, MappedShards.process().size());
    }

    @Test
    void aRefusedRegistrationIsNamedAndLeavesNoStaleError() throws IOException {
        Path f = Files.write(dir.resolve("plain.bin"), new byte[1 << 20]);
        try (FileMapping m = FileMapping.map(f, 1 << 20)) {
            // default flags on a PROT_READ mapping: refused (cudaErrorInvalidValue on the H200 machine)
            IOException x = assertThrows(IOException.class, () -> HostRegistration.register(m.address(), m.size(), 0,
                    f.toString()));
            assertTrue(x.getMessage().startsWith(f + ": cudaHostRegister(1048576 bytes at offset 0, flags 0x0) failed: CUDA_ERROR_"),
                    x.getMessage());
            System.out.println("MappedEngineGpuTest: refused as expected: " + x.getMessage());
        }
        assertEquals(0, jcuda.runtime.JCuda.cudaGetLastError(), "no stale error after the refusal");
        try (DeviceBuffer d = DeviceBuffer.allocate(1 << 20)) {
            assertTrue(d.address() != 0);
        }
        if (support.readOnlyRegistration()) {
            try (FileMapping m = FileMapping.map(f, 1 << 20);
                 HostRegistration r = HostRegistration.register(m.address(), m.size(), MappedShards.FLAGS, f.toString())) {
                assertEquals(1, r.calls());
                assertTrue(r.deviceAddress(0) != 0);
                System.out.println("MappedEngineGpuTest: device pointer " + (r.deviceAddress(0) == m.address()
                        ? "equals" : "differs from") + " the host pointer");
            }
        }
    }

    @TestFactory
    Stream<DynamicTest> realWriterFixturesOnMappedMatchTheHostPath() {
        return RealWriterFixturesLoadTest.perColumn(c -> {
            assumeTrue(c.refusal().isEmpty(), () -> "refused, see RealWriterFixturesLoadTest: " + c.refusal().get());
            needsReadOnlyRegistration();
            Path f = c.fixture(); // host-decoded runs (compressed Arrow, deflated members) go through pinned staging
            byte[] host = FixtureLoads.load(f, c.name(), ReadPath.HOST);
            assertArrayEquals(c.littleEndianBytes(), host);
            assertArrayEquals(host, FixtureLoads.load(f, c.name(), ReadPath.MAPPED), f + " " + c.name());
        });
    }
}
