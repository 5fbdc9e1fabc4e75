package dev.gdsloader.formats.safetensors;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.RecordExtent;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.Shapes;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class SafetensorsRoundTripTest {

    @TempDir
    Path dir;

    static byte[] random(DType t, long[] shape, long seed) {
        byte[] b = new byte[(int) Shapes.byteSize(shape, t.itemSize())];
        new Random(seed).nextBytes(b);
        return b;
    }

    @SuppressWarnings("EnumOrdinal") // the ordinal only seeds the test data
    @ParameterizedTest
    @EnumSource(DType.class)
    void everyDtypeRoundTrips(DType dtype) throws IOException {
        long[][] shapes = {{3, 4}, {}, {0}, {5}, {2, 3, 4}, {4, 0, 2}};
        Map<String, TensorData> in = new LinkedHashMap<>();
        for (int i = 0; i < shapes.length; i++) {
            in.put("t" + i + "." + dtype.safetensorsName(),
                    new TensorData(dtype, shapes[i], random(dtype, shapes[i], i * 31L + dtype.ordinal())));
        }
        Map<String, String> meta = new LinkedHashMap<>();
        meta.put("format", "pt");
        meta.put("note", "caf\u00e9 \u2603 \uD83D\uDE00 \"quoted\" \n");
        Path f = dir.resolve(dtype + ".safetensors");
        SafetensorsWriter.write(f, in, meta);

        SafetensorsFile st = SafetensorsFile.open(f);
        assertEquals(f, st.file());
        assertEquals(Files.size(f), st.fileSize());
        assertEquals(0, st.headerLength() % 8, "header padded to a multiple of 8");
        assertEquals(8 + st.headerLength(), st.dataStart());
        assertEquals(meta, st.metadata());
        assertEquals(List.copyOf(meta.keySet()), List.copyOf(st.metadata().keySet()));
        assertEquals(in.size(), st.tensors().size());
        byte[] file = Files.readAllBytes(f);
        long expectedOffset = st.dataStart();
        long previous = -1;
        for (Tensor t : st.tensors()) {
            assertTrue(t.fileOffset() >= previous, "tensors in file order");
            previous = t.fileOffset();
        }
        for (Map.Entry<String, TensorData> e : in.entrySet()) {
            Tensor t = st.tensor(e.getKey());
            TensorData d = e.getValue();
            assertEquals(dtype, t.dtype());
            assertArrayEquals(d.shape(), t.shape());
            assertEquals(d.littleEndianBytes().length, t.bytes());
            assertEquals(expectedOffset, t.fileOffset(), "packed in map order");
            expectedOffset += t.bytes();
            assertArrayEquals(d.littleEndianBytes(), slice(file, t.extent()), e.getKey());
            if (t.ndim() == 0) {
                FormatException x = assertThrows(FormatException.class,
                        () -> st.records(e.getKey()));
                assertTrue(x.getMessage().contains("'" + e.getKey() + "'"), x.getMessage());
                continue;
            }
            RecordLayout r = st.records(e.getKey());
            assertEquals(f, r.file());
            assertEquals(dtype, r.dtype());
            assertEquals(t.shape()[0], r.recordCount());
            assertArrayEquals(Arrays.copyOfRange(d.shape(), 1, d.shape().length), r.recordShape());
            assertEquals(t.fileOffset(), r.dataOffset());
            assertEquals(st.fileSize(), r.fileSize());
            long rb = r.recordBytes();
            for (long i = 0; i < r.recordCount(); i++) {
                assertArrayEquals(Arrays.copyOfRange(d.littleEndianBytes(), (int) (i * rb),
                        (int) ((i + 1) * rb)), slice(file, r.extent(i, 1)));
            }
            assertEquals(t.extent(), r.extent(0, r.recordCount()));
        }
        assertEquals(file.length, expectedOffset, "no bytes after the last tensor");
    }

    @Test
    void headerIsWhatTheReferenceWrites() throws IOException {
        Map<String, TensorData> in = new LinkedHashMap<>();
        in.put("w", new TensorData(DType.FLOAT32, new long[] {2, 2}, new byte[16]));
        in.put("b", new TensorData(DType.BFLOAT16, new long[] {3}, new byte[6]));
        Path f = dir.resolve("ref.safetensors");
        SafetensorsWriter.write(f, in, Map.of("format", "pt"));
        byte[] bytes = Files.readAllBytes(f);
        String json = "{\"__metadata__\":{\"format\":\"pt\"},"
                + "\"w\":{\"dtype\":\"F32\",\"shape\":[2,2],\"data_offsets\":[0,16]},"
                + "\"b\":{\"dtype\":\"BF16\",\"shape\":[3],\"data_offsets\":[16,22]}}";
        int padded = (json.length() + 7) / 8 * 8;
        assertEquals(padded, ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getLong(0));
        assertEquals(json + " ".repeat(padded - json.length()),
                new String(bytes, 8, padded, StandardCharsets.UTF_8));
        assertEquals(8 + padded + 22, bytes.length);
    }

    @Test
    void emptyFileAndNoMetadata() throws IOException {
        Path f = dir.resolve("empty.safetensors");
        SafetensorsWriter.write(f, Map.of(), null);
        SafetensorsFile st = SafetensorsFile.open(f);
        assertEquals(List.of(), st.tensors());
        assertEquals(Map.of(), st.metadata());
        assertEquals(16, st.fileSize()); // "{}" padded to 8
    }

    @Test
    void writerRefusesBadInput() {
        Path f = dir.resolve("bad.safetensors");
        assertThrows(IllegalArgumentException.class,
                () -> new TensorData(DType.FLOAT32, new long[] {2, 2}, new byte[15]));
        assertThrows(IllegalArgumentException.class,
                () -> new TensorData(DType.FLOAT32, new long[] {-1}, new byte[0]));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SafetensorsWriter.write(f, Map.of("__metadata__",
                        new TensorData(DType.UINT8, new long[] {1}, new byte[1])), null));
        assertTrue(e.getMessage().contains("__metadata__"));
        assertTrue(Files.notExists(f), "nothing written");
    }

    @Test
    void missingTensorListsNames() throws IOException {
        Path f = dir.resolve("n.safetensors");
        Map<String, TensorData> in = new LinkedHashMap<>();
        in.put("alpha", new TensorData(DType.UINT8, new long[] {1}, new byte[1]));
        in.put("beta", new TensorData(DType.UINT8, new long[] {1}, new byte[1]));
        SafetensorsWriter.write(f, in, null);
        SafetensorsFile st = SafetensorsFile.open(f);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> st.tensor("gamma"));
        assertTrue(e.getMessage().contains("'gamma'") && e.getMessage().contains("[alpha, beta]"),
                e.getMessage());
        assertEquals(List.of("alpha", "beta"), st.names());
    }

    @Test
    void misalignedOffsetsOpenAndReportExactFileOffsets() throws IOException {
        String header = "{\"bytes\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]},"
                + "\"f\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[3,11]},"
                + "\"d\":{\"dtype\":\"F64\",\"shape\":[1,1],\"data_offsets\":[11,19]}}";
        Path f = StBytes.write(dir, "mis.safetensors", header, 19);
        SafetensorsFile st = SafetensorsFile.open(f);
        long n = header.getBytes(StandardCharsets.UTF_8).length;
        assertEquals(8 + n, st.dataStart());
        assertEquals(st.dataStart() + 3, st.tensor("f").fileOffset());
        assertEquals(8, st.tensor("f").bytes());
        assertEquals(st.dataStart() + 11, st.tensor("d").fileOffset());
        assertEquals(List.of("bytes", "f", "d"), st.names());
        byte[] file = Files.readAllBytes(f);
        assertEquals(file[(int) st.dataStart() + 3], slice(file, st.records("f").extent(0, 1))[0]);
        assertEquals(new RecordExtent(st.dataStart() + 7, 4), st.records("f").extent(1, 1));
    }

    @Test
    void gapsAndOutOfOrderEntriesAreAcceptedButTrailingBytesAreRefused() throws IOException {
        String header = "{\"b\":{\"dtype\":\"I16\",\"shape\":[2],\"data_offsets\":[16,20]},"
                + "\"e\":{\"dtype\":\"I16\",\"shape\":[0],\"data_offsets\":[2,2]},"
                + "\"a\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
        Path f = StBytes.write(dir, "gap.safetensors", header, 20);
        SafetensorsFile st = SafetensorsFile.open(f);
        assertEquals(List.of("a", "e", "b"), st.names());
        Path trailing = StBytes.write(dir, "trailing.safetensors", header, 32);
        dev.gdsloader.formats.FormatException e = org.junit.jupiter.api.Assertions.assertThrows(
                dev.gdsloader.formats.FormatException.class, () -> SafetensorsFile.open(trailing));
        org.junit.jupiter.api.Assertions.assertTrue(e.getMessage().contains("12 more bytes"), e.getMessage());
    }

    static byte[] slice(byte[] file, RecordExtent x) {
        return Arrays.copyOfRange(file, (int) x.offset(), (int) x.end());
    }
}
