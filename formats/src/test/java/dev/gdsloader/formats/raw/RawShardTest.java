package dev.gdsloader.formats.raw;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.RecordExtent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

class RawShardTest {

    @TempDir
    Path dir;

    private static void contains(Exception e, String... parts) {
        for (String p : parts) {
            assertTrue(e.getMessage().contains(p), "missing '" + p + "' in: " + e.getMessage());
        }
    }

    @ParameterizedTest
    @EnumSource(DType.class)
    @SuppressWarnings("EnumOrdinal") // the ordinal only seeds the test data
    void roundTrip(DType dtype) throws IOException {
        long[] recordShape = {3, 4};
        int recordBytes = 12 * dtype.itemSize();
        byte[] data = new byte[7 * recordBytes];
        new Random(dtype.ordinal()).nextBytes(data);
        Path bin = dir.resolve("x-00000.bin");
        RawWriter.write(bin, dtype, recordShape, data);
        assertEquals(dir.resolve("x-00000.bin.json"), RawShard.sidecarOf(bin));
        assertTrue(Files.isRegularFile(RawShard.sidecarOf(bin)));

        RawShard shard = RawShard.open(bin);
        assertEquals(bin, shard.file());
        assertEquals(RawShard.sidecarOf(bin), shard.sidecar());
        assertEquals(dtype, shard.dtype());
        assertArrayEquals(recordShape, shard.recordShape());
        assertEquals(recordBytes, shard.recordBytes());
        assertEquals(7, shard.recordCount());
        assertEquals(0, shard.dataOffset());
        assertEquals(data.length, shard.fileSize());
        byte[] file = Files.readAllBytes(bin);
        assertArrayEquals(data, file);
        RecordExtent x = shard.extent(2, 3);
        assertEquals(new RecordExtent(2L * recordBytes, 3L * recordBytes), x);
        assertArrayEquals(Arrays.copyOfRange(data, 2 * recordBytes, 5 * recordBytes),
                Arrays.copyOfRange(file, (int) x.offset(), (int) x.end()));
        String json = Files.readString(shard.sidecar());
        contains(new Exception(json), "\"format\":\"gdsloader-raw\"", "\"version\":1",
                "\"dtype\":\"" + dtype.safetensorsName() + "\"", "\"record_shape\":[3,4]",
                "\"record_bytes\":" + recordBytes, "\"count\":7");
    }

    @Test
    void scalarRecordsAndEmptyShards() throws IOException {
        Path bin = dir.resolve("s.bin");
        RawWriter.write(bin, DType.INT64, new long[] {}, new byte[24]);
        RawShard s = RawShard.open(bin);
        assertEquals(3, s.recordCount());
        assertEquals(8, s.recordBytes());
        assertArrayEquals(new long[0], s.recordShape());

        Path empty = dir.resolve("empty.bin");
        RawWriter.write(empty, DType.FLOAT32, new long[] {3, 4}, new byte[0]);
        assertEquals(0, Files.size(empty));
        RawShard e = RawShard.open(empty);
        assertEquals(0, e.recordCount());
        assertEquals(48, e.recordBytes());
        assertEquals(0, e.fileSize());
        assertEquals(new RecordExtent(0, 0), e.extent(0, 0));

        // Hand-written sidecar: a 0-byte shard with count 0.
        Path hand = dir.resolve("hand.bin");
        Files.write(hand, new byte[0]);
        Files.writeString(RawShard.sidecarOf(hand), "{\"format\": \"gdsloader-raw\", \"version\": 1,"
                + " \"dtype\": \"BF16\", \"record_shape\": [2], \"record_bytes\": 4, \"count\": 0}");
        assertEquals(0, RawShard.open(hand).recordCount());
        assertEquals(DType.BFLOAT16, RawShard.open(hand).dtype());
    }

    @Test
    void sizeMismatchNamesBothNumbers() throws IOException {
        Path bin = dir.resolve("m.bin");
        RawWriter.write(bin, DType.FLOAT32, new long[] {3, 4}, new byte[48 * 100]);
        Files.write(bin, new byte[48 * 100 - 5]);
        FormatException e = assertThrows(FormatException.class, () -> RawShard.open(bin));
        assertEquals(bin, e.file());
        contains(e, "4800 bytes", "count 100 x record_bytes 48", "found 4795 bytes");
        assertEquals(4795, e.offset());
    }

    @Test
    void missingSidecarIsNamed() throws IOException {
        Path bin = dir.resolve("lonely.bin");
        Files.write(bin, new byte[16]);
        FormatException e = assertThrows(FormatException.class, () -> RawShard.open(bin));
        assertEquals(RawShard.sidecarOf(bin), e.file());
        contains(e, "lonely.bin.json", "sidecar of raw shard " + bin, "no such file");
        assertThrows(NoSuchFileException.class, () -> RawShard.open(dir.resolve("none.bin")));
    }

    @ParameterizedTest
    @CsvSource(delimiter = ';', quoteCharacter = '`', value = {
        "{\"format\":\"gdsloader-raw\",\"version\":1,\"dtype\":\"F32\",\"record_shape\":[3,4],\"record_bytes\":40,\"count\":1};\"record_bytes\" 48 (3 x 4 x 4",
        "{\"format\":\"gdsloader-raw\",\"version\":2,\"dtype\":\"F32\",\"record_shape\":[3,4],\"record_bytes\":48,\"count\":1};\"version\": 1",
        "{\"format\":\"npy\",\"version\":1,\"dtype\":\"F32\",\"record_shape\":[3,4],\"record_bytes\":48,\"count\":1};\"format\": \"gdsloader-raw\"",
        "{\"format\":\"gdsloader-raw\",\"version\":1,\"dtype\":\"<f4\",\"record_shape\":[3,4],\"record_bytes\":48,\"count\":1};unknown dtype '<f4'",
        "{\"format\":\"gdsloader-raw\",\"version\":1,\"dtype\":\"F32\",\"record_shape\":[3,-4],\"record_bytes\":48,\"count\":1};entry 1",
        "{\"format\":\"gdsloader-raw\",\"version\":1,\"dtype\":\"F32\",\"record_shape\":[3,4],\"record_bytes\":48,\"count\":-1};\"count\"",
        "{\"format\":\"gdsloader-raw\",\"version\":1,\"dtype\":\"F32\",\"record_shape\":[3,4],\"record_bytes\":48};\"count\" key",
        "{\"format\":\"gdsloader-raw\",\"version\":1,\"dtype\":\"F32\",\"record_shape\":[3,4],\"record_bytes\":48,\"count\":1,\"x\":0};unknown key \"x\"",
        "{\"format\":\"gdsloader-raw\",\"version\":1,\"dtype\":\"U8\",\"record_shape\":[4294967296,4294967296],\"record_bytes\":0,\"count\":1};signed 64-bit",
        "{\"format\":\"gdsloader-raw\",\"version\":1,\"dtype\":\"U8\",\"record_shape\":[4294967296],\"record_bytes\":4294967296,\"count\":4294967296};fits in a signed 64-bit",
        "[];JSON object",
        "`{\"format\":\"gdsloader-raw\",`;malformed JSON"})
    void badSidecarsAreRefused(String sidecar, String text) throws IOException {
        Path bin = dir.resolve("b.bin");
        Files.write(bin, new byte[48]);
        Files.writeString(RawShard.sidecarOf(bin), sidecar);
        FormatException e = assertThrows(FormatException.class, () -> RawShard.open(bin));
        assertEquals(RawShard.sidecarOf(bin), e.file());
        contains(e, text);
    }

    @Test
    void everySidecarTruncationIsAFormatException() throws IOException {
        Path bin = dir.resolve("t.bin");
        RawWriter.write(bin, DType.UINT16, new long[] {2}, new byte[8]);
        byte[] full = Files.readAllBytes(RawShard.sidecarOf(bin));
        for (int len = 0; len < full.length - 2; len++) { // the last two bytes are "}\n"
            Files.write(RawShard.sidecarOf(bin), Arrays.copyOf(full, len));
            assertThrows(FormatException.class, () -> RawShard.open(bin), new String(full, 0, len,
                    StandardCharsets.UTF_8));
        }
    }

    @Test
    void writerRefusesPartialRecords() {
        Path bin = dir.resolve("p.bin");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RawWriter.write(bin, DType.FLOAT32, new long[] {3}, new byte[13]));
        contains(e, "13 data bytes", "12-byte records");
        assertTrue(Files.notExists(bin));
        assertThrows(IllegalArgumentException.class,
                () -> RawWriter.write(bin, DType.FLOAT32, new long[] {0}, new byte[1]));
    }

    @Test
    void sidecarOnlyWriterForStreamedShards() throws IOException {
        Path bin = dir.resolve("streamed.bin");
        Files.write(bin, new byte[5 * 6]);
        RawWriter.writeSidecar(bin, DType.FLOAT8_E5M2, new long[] {2, 3}, 5);
        RawShard s = RawShard.open(bin);
        assertEquals(5, s.recordCount());
        assertEquals(6, s.recordBytes());
        assertThrows(IllegalArgumentException.class,
                () -> RawWriter.writeSidecar(bin, DType.UINT8, new long[] {1}, -1));
    }
}
