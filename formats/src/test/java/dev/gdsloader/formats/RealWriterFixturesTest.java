package dev.gdsloader.formats;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gdsloader.formats.arrow.ArrowIpcFile;
import dev.gdsloader.formats.fixtures.RealWriterFixtures;
import dev.gdsloader.formats.npy.NpyHeader;
import dev.gdsloader.formats.npy.NpyShard;
import dev.gdsloader.formats.npy.NpzArchive;
import dev.gdsloader.formats.safetensors.SafetensorsFile;
import dev.gdsloader.formats.safetensors.Tensor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.arrow.vector.compression.CompressionUtil.CodecType;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.function.Executable;

/**
 * Every real-writer fixture (numpy, pyarrow, safetensors; {@code src/test/resources/fixtures}) read on the host by our
 * readers: the values equal the writer's own ({@code <file>.json}), or the file or column is refused with the exact
 * error the product documents. The fixture directory is listed, so a new fixture without an expectation here fails.
 */
class RealWriterFixturesTest {
    /** A structural check of one fixture, beyond its values. */
    @FunctionalInterface
    private interface Check {
        void check(Path f) throws Exception;
    }

    /** What each fixture's writer gave it, beyond the values; a fixture missing here fails the suite. */
    private static final Map<String, Check> CHECKS = withArrowTables(Map.ofEntries(
            Map.entry("npy-v1-int32.npy", f -> npyHeader(f, 1, DType.INT32, new long[] {3, 4})),
            Map.entry("npy-v1-float16.npy", RealWriterFixturesTest::float16),
            Map.entry("npy-v1-float64-3d.npy", f -> npyHeader(f, 1, DType.FLOAT64, new long[] {2, 3, 4})),
            Map.entry("npy-v1-bool.npy", f -> {
                npyHeader(f, 1, DType.BOOL, new long[] {4});
                assertArrayEquals(new byte[] {1, 0, 1, 1}, RealWriterFixtures.bytesOf(NpyShard.open(f)));
            }),
            Map.entry("npy-v1-uint8-images.npy", f -> {
                npyHeader(f, 1, DType.UINT8, new long[] {3, 28, 28});
                assertEquals(784, NpyShard.open(f).recordBytes());
            }),
            Map.entry("npy-v1-bigendian-int32.npy", f -> refusedAt(f, 20, () -> NpyHeader.parse(f))),
            Map.entry("npy-v1-bigendian-float64.npy", f -> refusedAt(f, 20, () -> NpyHeader.parse(f))),
            Map.entry("npy-v1-fortran-float32.npy", f -> {
                NpyHeader h = NpyHeader.parse(f); // the header is fine: the refusal is of the Fortran-order rows
                assertTrue(h.fortranOrder());
                assertArrayEquals(new long[] {2, 3}, h.shape());
            }),
            Map.entry("npy-v1-empty.npy", f -> {
                NpyShard s = npyHeader(f, 1, DType.FLOAT32, new long[] {0});
                assertEquals(0, s.recordCount());
                assertEquals(0, s.extent(0, 0).length());
                assertEquals(s.fileSize(), s.dataOffset(), "no data after the header");
            }),
            Map.entry("npy-v2-int64.npy", f -> npyHeader(f, 2, DType.INT64, new long[] {10})),
            Map.entry("npz-stored.npz", f -> npz(f, 0)),
            Map.entry("npz-deflated.npz", f -> npz(f, 8)),
            Map.entry("safetensors-mixed.safetensors", RealWriterFixturesTest::safetensors),
            Map.entry("arrow-zero-then-three-stream.arrows", f -> {
                arrowStream(f);
                ArrowIpcFile a = ArrowIpcFile.open(f);
                for (String c : a.columns()) {
                    RecordLayout empty = a.records(c, 0);
                    assertEquals(0, empty.recordCount(), c);
                    assertEquals(0, empty.extent(0, 0).length(), c + ": empty where the batch is empty");
                    assertEquals(3, a.records(c, 1).recordCount(), c);
                }
            })));

    /** Adds the pyarrow tables: {@code arrow-<fixed|nulls>-<file|stream>[-lz4|-zstd].arrow[s]}. */
    private static Map<String, Check> withArrowTables(Map<String, Check> others) {
        Map<String, Check> all = new java.util.HashMap<>(others);
        for (String table : List.of("fixed", "nulls")) {
            for (String codec : List.of("", "-lz4", "-zstd")) {
                all.put("arrow-" + table + "-file" + codec + ".arrow", RealWriterFixturesTest::arrowFile);
                all.put("arrow-" + table + "-stream" + codec + ".arrows", RealWriterFixturesTest::arrowStream);
            }
        }
        return Map.copyOf(all);
    }

    @TestFactory
    Stream<DynamicTest> everyFixtureReadsToTheWritersValuesOrIsRefusedByName() {
        List<Path> files = RealWriterFixtures.files();
        assertFalse(files.isEmpty(), "no fixtures in " + RealWriterFixtures.directory());
        return files.stream().map(f -> DynamicTest.dynamicTest(f.getFileName().toString(), () -> {
            Check c = CHECKS.get(f.getFileName().toString());
            assertNotNull(c, f + " has no expectation in " + RealWriterFixturesTest.class.getSimpleName() + ".CHECKS");
            for (RealWriterFixtures.Column col : RealWriterFixtures.columns(f)) {
                values(col);
            }
            c.check(f);
        }));
    }

    @Test
    void everyExpectationHasItsFixtureAndItsJson() {
        Set<String> files = RealWriterFixtures.files().stream().map(p -> p.getFileName().toString())
                .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(new TreeSet<>(CHECKS.keySet()), files);
        for (Path f : RealWriterFixtures.files()) {
            assertTrue(Files.isRegularFile(f.resolveSibling(f.getFileName() + ".json")), f + " has no .json beside it");
        }
        assertTrue(Files.isRegularFile(RealWriterFixtures.directory().resolve("make_fixtures.py")));
    }

    /** One column: its bytes as our reader gives them equal the writer's values, or its exact refusal. */
    private static void values(RealWriterFixtures.Column col) throws IOException {
        Path f = col.fixture();
        String n = f.getFileName().toString();
        Optional<String> refusal = col.refusal();
        if (n.endsWith(".arrow") || n.endsWith(".arrows")) {
            arrowValues(col, refusal);
            return;
        }
        if (refusal.isPresent()) {
            refused(f, refusal.get(), () -> NpyShard.open(f));
            return;
        }
        RecordLayout l = n.endsWith(".npy") ? NpyShard.open(f) : n.endsWith(".npz") ? NpzArchive.open(f).records(col.name())
                : SafetensorsFile.open(f).records(col.name());
        long[] shape = col.shape();
        assertEquals(DType.fromNumpyDescr(col.dtype(), f, 0), l.dtype(), col.name());
        assertEquals(shape[0], l.recordCount(), col.name());
        assertArrayEquals(Arrays.copyOfRange(shape, 1, shape.length), l.recordShape(), col.name());
        assertArrayEquals(col.littleEndianBytes(), RealWriterFixtures.bytesOf(l), f + " " + col.name());
    }

    /** An Arrow column: its batches concatenated equal the writer's values; or each batch's exact refusal. */
    private static void arrowValues(RealWriterFixtures.Column col, Optional<String> refusal) throws IOException {
        Path f = col.fixture();
        ArrowIpcFile a = ArrowIpcFile.open(f);
        JsonNode e = RealWriterFixtures.expected(f);
        assertEquals(e.get("batches").size(), a.batchCount());
        if (refusal.isPresent()) {
            refused(f, refusal.get(), () -> a.records(col.name(), 0));
            if (col.dtype() == null) {
                refused(f, refusal.get().replace("record batch 0", "record batch 1"), () -> a.records(col.name(), 1));
            } else {
                // batch 1 of the nullable column has no nulls: it reads, and to the writer's values
                byte[] all = col.littleEndianBytes(List.of(col.values().get(4), col.values().get(5)));
                assertArrayEquals(all, RealWriterFixtures.bytesOf(a.records(col.name(), 1)));
            }
            return;
        }
        DType dtype = DType.fromNumpyDescr(col.dtype(), f, 0);
        long[] recordShape = Arrays.copyOfRange(col.shape(), 1, col.shape().length);
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        for (int b = 0; b < a.batchCount(); b++) {
            RecordLayout l = a.records(col.name(), b);
            assertEquals(e.get("batches").get(b).asLong(), l.recordCount(), "rows of batch " + b);
            assertEquals(dtype, l.dtype());
            assertArrayEquals(recordShape, l.recordShape());
            assertEquals(a.compression(b) != CodecType.NO_COMPRESSION, l instanceof HostDecodedRecords, "batch " + b);
            got.writeBytes(RealWriterFixtures.bytesOf(l));
        }
        assertArrayEquals(col.littleEndianBytes(), got.toByteArray(), f + " " + col.name());
    }

    private static void refused(Path f, String detail, Executable read) {
        FormatException x = assertThrows(FormatException.class, read, f.toString());
        assertEquals(f, x.file());
        assertEquals(detail, x.detail());
    }

    private static void refusedAt(Path f, long offset, Executable read) {
        FormatException x = assertThrows(FormatException.class, read, f.toString());
        assertEquals(RealWriterFixtures.fileRefusal(f).orElseThrow(), x.detail());
        assertEquals(f + ": at byte offset " + offset + ": " + x.detail(), x.getMessage());
    }

    private static NpyShard npyHeader(Path f, int version, DType dtype, long[] shape) throws IOException {
        NpyHeader h = NpyHeader.parse(f);
        assertEquals(version, h.majorVersion(), "header version");
        assertEquals(dtype, h.dtype());
        assertArrayEquals(shape, h.shape());
        assertFalse(h.fortranOrder());
        assertEquals(0, h.dataOffset() % 64, "numpy pads the header to 64 bytes");
        assertEquals(h.dataOffset(), Files.readAllBytes(f).length - h.dataBytes());
        return NpyShard.open(f);
    }

    private static void float16(Path f) throws IOException {
        npyHeader(f, 1, DType.FLOAT16, new long[] {5});
        ByteBuffer b = ByteBuffer.wrap(RealWriterFixtures.bytesOf(NpyShard.open(f))).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals((short) 0x7BFF, b.getShort(6), "65504, the largest float16");
        assertEquals((short) 0x0400, b.getShort(8), "2^-14, the smallest normal float16");
        float[] expected = {0.5f, -1.25f, 2.0f, 65504.0f, 6.1035156e-05f};
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], Float.float16ToFloat(b.getShort(2 * i)), "element " + i);
        }
    }

    private static void npz(Path f, int method) throws IOException {
        NpzArchive z = NpzArchive.open(f);
        assertEquals(List.of("images", "labels"), z.columns());
        for (NpzArchive.Member m : z.members()) {
            assertEquals(method, m.method(), m.name());
            if (method == 0) {
                assertInstanceOf(Records.class, m.records(), "a stored member is read in place");
                assertEquals(m.dataOffset() + m.header().dataOffset(), m.records().dataOffset());
            } else {
                assertInstanceOf(HostDecodedRecords.class, m.records(), "a deflated member is decoded on the host");
            }
        }
    }

    private static void safetensors(Path f) throws IOException {
        SafetensorsFile st = SafetensorsFile.open(f);
        assertEquals(Map.of("format", "np", "source", "make_fixtures.py"), st.metadata(), "__metadata__ kept");
        assertEquals(new TreeSet<>(List.of("weight", "bias", "mask", "half", "bytes", "odd")), new TreeSet<>(st.names()));
        Tensor mask = st.tensor("mask");
        assertEquals(1, mask.fileOffset() % 2, "the writer puts 'mask' after the 5 'bytes', at an odd offset: " + mask);
        long end = st.dataStart();
        for (Tensor t : st.tensors()) {
            assertEquals(end, t.fileOffset(), "tensors are packed in file order: " + t);
            end += t.bytes();
        }
        assertEquals(st.fileSize(), end);
    }

    private static void arrowFile(Path f) throws IOException {
        arrow(f, new byte[] {'A', 'R', 'R', 'O', 'W', '1'});
    }

    private static void arrowStream(Path f) throws IOException {
        arrow(f, new byte[] {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF});
        byte[] all = Files.readAllBytes(f);
        assertArrayEquals(new byte[] {(byte) 0xFF, (byte) 0xFF, (byte) 0xFF, (byte) 0xFF, 0, 0, 0, 0},
                Arrays.copyOfRange(all, all.length - 8, all.length), "the stream ends with its end-of-stream marker");
    }

    private static void arrow(Path f, byte[] magic) throws IOException {
        assertArrayEquals(magic, Arrays.copyOf(Files.readAllBytes(f), magic.length));
        JsonNode e = RealWriterFixtures.expected(f);
        ArrowIpcFile a = ArrowIpcFile.open(f);
        CodecType codec = switch (e.get("compression").asText()) {
            case "lz4" -> CodecType.LZ4_FRAME;
            case "zstd" -> CodecType.ZSTD;
            default -> CodecType.NO_COMPRESSION;
        };
        assertEquals(e.get("batches").size(), a.batchCount());
        for (int b = 0; b < a.batchCount(); b++) {
            assertEquals(e.get("batches").get(b).asLong(), a.rows(b), "rows of batch " + b);
            assertEquals(codec, a.compression(b), "compression of batch " + b);
        }
        assertEquals(RealWriterFixtures.columns(f).stream().map(RealWriterFixtures.Column::name).toList(), a.columns());
    }
}
