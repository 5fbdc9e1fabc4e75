package dev.gdsloader.formats.manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.npy.NpyWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class DatasetManifestTest {

    @TempDir
    Path dir;

    private static void contains(String text, String... parts) {
        for (String p : parts) {
            assertTrue(text.contains(p), "missing '" + p + "' in: " + text);
        }
    }

    private static long crcOf(byte[] bytes) {
        CRC32C c = new CRC32C();
        c.update(bytes);
        return c.getValue();
    }

    /** Two npy shards of images and one of labels; the first image shard spans several chunks. */
    private DatasetManifest dataset() throws IOException {
        byte[] big = new byte[(int) (2.5 * DatasetManifest.CHUNK)];
        new Random(7).nextBytes(big);
        int n = big.length / 784;
        NpyWriter.write(dir.resolve("images-00000.npy"), DType.UINT8, new long[] {n, 28, 28},
                java.util.Arrays.copyOf(big, n * 784));
        NpyWriter.write(dir.resolve("images-00001.npy"), DType.UINT8, new long[] {2, 28, 28},
                new byte[2 * 784]);
        Files.createDirectories(dir.resolve("labels"));
        NpyWriter.write(dir.resolve("labels/labels-00000.npy"), DType.INT64, new long[] {n + 2},
                new byte[(n + 2) * 8]);
        return DatasetManifest.builder(ShardFormat.NPY)
                .column("images", DType.UINT8, 28, 28)
                .column("labels", DType.INT64)
                .shard("images-00000.npy", "images", n)
                .shard("images-00001.npy", "images", 2)
                .shard("labels/labels-00000.npy", "labels", n + 2)
                .build(dir);
    }

    @Test
    void builderComputesSizesAndChecksums() throws IOException {
        DatasetManifest m = dataset();
        assertEquals(3, m.shards().size());
        for (ShardEntry s : m.shards()) {
            byte[] bytes = Files.readAllBytes(dir.resolve(s.file()));
            assertEquals(bytes.length, s.bytes(), s.file());
            assertEquals(crcOf(bytes), s.crc32c(), s.file());
            assertEquals(crcOf(bytes), DatasetManifest.crc32c(dir.resolve(s.file())));
        }
        assertTrue(m.shards().get(0).bytes() > 2 * DatasetManifest.CHUNK);
        assertEquals(0, DatasetManifest.crc32c(Files.write(dir.resolve("e"), new byte[0])));
        // The CRC-32C check value of "123456789" (RFC 3720 appendix B.4).
        assertEquals(0xE3069283L, DatasetManifest.crc32c(
                Files.writeString(dir.resolve("c"), "123456789")));
        assertEquals(List.of("images-00000.npy", "images-00001.npy"),
                m.shardsOf("images").stream().map(ShardEntry::file).toList());
        assertEquals(DType.INT64, m.column("labels").dtype());
        assertEquals(784, m.column("images").recordBytes());
    }

    @Test
    void writeReadRoundTrip() throws IOException {
        DatasetManifest m = dataset();
        m.write(dir);
        Path json = dir.resolve(DatasetManifest.FILE_NAME);
        String text = Files.readString(json);
        contains(text, "\"format\": \"npy\"", "\"version\": 1",
                "{\"name\":\"images\",\"dtype\":\"U8\",\"record_shape\":[28,28]}",
                "\"crc32c\":\"" + m.shards().get(0).crc32cHex() + "\"");
        assertTrue(m.shards().get(0).crc32cHex().matches("0x[0-9a-f]{8}"));
        DatasetManifest back = DatasetManifest.read(json);
        assertEquals(m, back);
        assertEquals(List.of(), back.verify(dir));
        // Rewriting replaces the manifest and leaves no temporary file behind.
        new DatasetManifest(ShardFormat.RAW, List.of(), List.of()).write(dir);
        assertEquals(new DatasetManifest(ShardFormat.RAW, List.of(), List.of()),
                DatasetManifest.read(json));
        try (var s = Files.list(dir)) {
            assertEquals(0, s.filter(p -> p.getFileName().toString().endsWith(".tmp")).count());
        }
    }

    @Test
    void verifyDetectsAFlippedByte() throws IOException {
        DatasetManifest m = dataset();
        Path f = dir.resolve("images-00001.npy");
        byte[] bytes = Files.readAllBytes(f);
        bytes[200] ^= 0x10;
        Files.write(f, bytes);
        List<String> problems = m.verify(dir);
        assertEquals(1, problems.size(), problems.toString());
        contains(problems.get(0), f.toString(), ShardEntry.hex(crcOf(bytes)),
                m.shards().get(1).crc32cHex());
    }

    @Test
    void verifyDetectsMissingFilesAndSizeChanges() throws IOException {
        DatasetManifest m = dataset();
        Files.delete(dir.resolve("labels/labels-00000.npy"));
        Path f = dir.resolve("images-00001.npy");
        Files.write(f, new byte[] {1, 2, 3}, java.nio.file.StandardOpenOption.APPEND);
        List<String> problems = m.verify(dir);
        assertEquals(2, problems.size(), problems.toString());
        contains(problems.get(0), f.toString(), "size " + Files.size(f),
                String.valueOf(m.shards().get(1).bytes()));
        contains(problems.get(1), "labels-00000.npy", "missing");
    }

    private String manifest(String shardFile) {
        return "{\"format\": \"raw\", \"version\": 1,\n"
                + " \"columns\": [{\"name\": \"x\", \"dtype\": \"F32\", \"record_shape\": [3]}],\n"
                + " \"shards\": [{\"file\": \"ok.bin\", \"column\": \"x\", \"records\": 1, "
                + "\"bytes\": 12, \"crc32c\": \"0x0\"},\n"
                + "  {\"file\": " + shardFile + ", \"column\": \"x\", \"records\": 1, "
                + "\"bytes\": 12, \"crc32c\": \"0x1234ABCD\"}]}";
    }

    @ParameterizedTest
    @CsvSource(delimiter = ';', quoteCharacter = '`', value = {
        "\"../escape.bin\";'..' segments",
        "\"a/../../escape.bin\";'..' segments",
        "\"a/..\";'..' segments",
        "\"/etc/passwd\";absolute paths",
        "\"C:/x.bin\";absolute paths",
        "\"a\\\\b.bin\";backslashes",
        "\"\";path is empty",
        "\"ok.bin\";listed once",
        "7;to be a string"})
    void badShardPathsAreRefused(String shardFile, String text) throws IOException {
        String json = manifest(shardFile);
        Path f = Files.writeString(dir.resolve(DatasetManifest.FILE_NAME), json);
        FormatException e = assertThrows(FormatException.class, () -> DatasetManifest.read(f));
        contains(e.getMessage(), text, "shard 1");
        assertEquals(json.lastIndexOf("{\"file\": " + shardFile), e.offset(), e.getMessage());
    }

    @Test
    void goodManifestParses() throws IOException {
        Path f = Files.writeString(dir.resolve(DatasetManifest.FILE_NAME),
                manifest("\"sub/dir/./y.bin\""));
        DatasetManifest m = DatasetManifest.read(f);
        assertEquals(ShardFormat.RAW, m.format());
        assertEquals(0x1234abcdL, m.shards().get(1).crc32c());
        assertEquals(0, m.shards().get(0).crc32c());
    }

    @ParameterizedTest
    @CsvSource(delimiter = ';', quoteCharacter = '`', value = {
        "\"version\": 1;\"version\": 2;\"version\": 1",
        "\"version\": 1;\"version\": \"1\";\"version\": 1",
        "\"format\": \"raw\";\"format\": \"parquet\";\"format\" \"npy\", \"safetensors\", \"raw\" or \"arrow\"",
        "\"records\": 1;\"records\": -1;shard 0 \"records\"",
        "\"bytes\": 12;\"bytes\": 1.5;the number 1.5",
        "\"crc32c\": \"0x0\";\"crc32c\": \"1234\";\"0x\" and up to 8 hex digits",
        "\"crc32c\": \"0x0\";\"crc32c\": \"0x123456789\";\"0x\" and up to 8 hex digits",
        "\"column\": \"x\";\"column\": \"y\";declared columns [x]",
        "\"dtype\": \"F32\";\"dtype\": \"float32\";unknown dtype 'float32'",
        "\"record_shape\": [3];\"record_shape\": [-3];non-negative",
        "\"name\": \"x\";\"name\": \"\";non-empty",
        "\"version\": 1,;\"version\": 1, \"extra\": 0,;unknown key \"extra\"",
        "\"records\": 1,;;\"records\" key"})
    void badFieldsAreRefused(String from, String to, String text) throws IOException {
        String json = manifest("\"y.bin\"").replaceFirst(java.util.regex.Pattern.quote(from),
                java.util.regex.Matcher.quoteReplacement(to == null ? "" : to));
        Path f = Files.writeString(dir.resolve(DatasetManifest.FILE_NAME), json);
        FormatException e = assertThrows(FormatException.class, () -> DatasetManifest.read(f));
        assertEquals(f, e.file());
        contains(e.getMessage(), text);
    }

    @Test
    void duplicateColumnsAndTruncationsAreRefused() throws IOException {
        String json = manifest("\"y.bin\"").replace("\"columns\": [",
                "\"columns\": [{\"name\": \"x\", \"dtype\": \"U8\", \"record_shape\": []}, ");
        Path f = Files.writeString(dir.resolve(DatasetManifest.FILE_NAME), json);
        contains(assertThrows(FormatException.class, () -> DatasetManifest.read(f)).getMessage(),
                "unique column names");
        String good = manifest("\"y.bin\"");
        for (int len = 0; len < good.length(); len++) {
            Files.writeString(f, good.substring(0, len));
            assertThrows(FormatException.class, () -> DatasetManifest.read(f), "length " + len);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"../x.npy", "/abs/x.npy", "a/../../x.npy", ""})
    void builderAndRecordsRefuseEscapingPaths(String file) {
        assertThrows(IllegalArgumentException.class,
                () -> DatasetManifest.builder(ShardFormat.NPY).shard(file, "c", 1));
        assertThrows(IllegalArgumentException.class, () -> new ShardEntry(file, "c", 1, 0, 0));
    }

    @Test
    void constructorChecksColumnsAndShards() {
        ColumnEntry c = new ColumnEntry("c", DType.UINT8, new long[] {1});
        ShardEntry s = new ShardEntry("a.npy", "c", 1, 1, 1);
        assertThrows(IllegalArgumentException.class,
                () -> new DatasetManifest(ShardFormat.NPY, List.of(c, c), List.of()));
        assertThrows(IllegalArgumentException.class,
                () -> new DatasetManifest(ShardFormat.NPY, List.of(c), List.of(s, s)));
        assertThrows(IllegalArgumentException.class, () -> new DatasetManifest(ShardFormat.NPY,
                List.of(c), List.of(new ShardEntry("b.npy", "d", 1, 1, 1))));
        assertThrows(IllegalArgumentException.class, () -> new ShardEntry("a", "c", -1, 0, 0));
        assertThrows(IllegalArgumentException.class,
                () -> new ShardEntry("a", "c", 0, 0, 0x1_0000_0000L));
        assertThrows(IllegalArgumentException.class, () -> ShardFormat.fromJsonName("NPY"));
    }

    @org.junit.jupiter.api.Test
    void verifyFindsWrongRecordCountsAndShardsTheManifestDoesNotList(@org.junit.jupiter.api.io.TempDir java.nio.file.Path d)
            throws java.io.IOException {
        dev.gdsloader.formats.npy.NpyWriter.write(d.resolve("a-00000.npy"), dev.gdsloader.formats.DType.UINT8, new long[] {4, 2},
                new byte[8]);
        DatasetManifest.builder(ShardFormat.NPY).column("a", dev.gdsloader.formats.DType.UINT8, 2).shard("a-00000.npy", "a", 5)
                .build(d).write(d);
        dev.gdsloader.formats.npy.NpyWriter.write(d.resolve("a-00001.npy"), dev.gdsloader.formats.DType.UINT8, new long[] {1, 2},
                new byte[2]);
        java.util.List<String> problems = DatasetManifest.read(d.resolve(DatasetManifest.FILE_NAME)).verify(d);
        org.junit.jupiter.api.Assertions.assertEquals(2, problems.size(), problems.toString());
        org.junit.jupiter.api.Assertions.assertTrue(problems.get(0).contains("holds 4 records") && problems.get(0).contains("lists 5"),
                problems.get(0));
        org.junit.jupiter.api.Assertions.assertTrue(problems.get(1).contains("a-00001.npy") && problems.get(1).contains("does not list"),
                problems.get(1));
    }

    @Test
    void anEmptyManifestIsOneLineWithOneFilePrefix() throws IOException {
        Path f = Files.writeString(dir.resolve(DatasetManifest.FILE_NAME), "");
        FormatException e = assertThrows(FormatException.class, () -> DatasetManifest.read(f));
        assertEquals(f + ": at byte offset 0: expected a dataset manifest (a JSON object), found no JSON value",
                e.getMessage());
    }

    @Test
    void malformedJsonSaysLineAndColumnWithoutJacksonsSourceDescription() throws IOException {
        Path f = Files.writeString(dir.resolve(DatasetManifest.FILE_NAME), "{\"format\": \"npy\", \"version\" 1}");
        FormatException e = assertThrows(FormatException.class, () -> DatasetManifest.read(f));
        assertTrue(e.getMessage().startsWith(f + ": at byte offset 28: malformed JSON (line 1, column 29): "
                + "Unexpected character"), e.getMessage());
        assertTrue(e.getMessage().contains("was expecting a colon"), e.getMessage());
        Path open = Files.writeString(dir.resolve("open.json"), "{\"format\": \"npy\", \"version\": 1,");
        FormatException eof = assertThrows(FormatException.class, () -> DatasetManifest.read(open));
        for (FormatException x : List.of(e, eof)) {
            assertFalse(x.getMessage().contains("Source") || x.getMessage().contains("REDACTED")
                    || x.getMessage().contains("\n") || x.getMessage().indexOf(f.getFileName().toString())
                    != x.getMessage().lastIndexOf(f.getFileName().toString()), x.getMessage());
        }
        assertTrue(eof.getMessage().contains("(line 1, column 32): Unexpected end-of-input"), eof.getMessage());
    }

    /**
     * A manifest listing an {@code .npz} (NumPy's) and an {@code .arrows} (pyarrow's) shard: verify used to call both
     * "unknown shard format" and not see unlisted ones; it now reads their records through the format registry.
     */
    @Test
    void verifyReadsNpzAndArrowStreamShardsAndSeesUnlistedOnes() throws IOException {
        Path fixtures = dev.gdsloader.formats.fixtures.RealWriterFixtures.directory();
        Files.copy(fixtures.resolve("npz-stored.npz"), dir.resolve("images-00000.npz"));
        Files.copy(fixtures.resolve("arrow-fixed-stream.arrows"), dir.resolve("table-00000.arrows"));
        DatasetManifest.Builder b = DatasetManifest.builder(ShardFormat.NPY).column("images", DType.UINT8, 28, 28)
                .column("label", DType.UINT8).shard("images-00000.npz", "images", 3).shard("table-00000.arrows", "label", 6);
        b.build(dir).write(dir);
        DatasetManifest m = DatasetManifest.read(dir.resolve(DatasetManifest.FILE_NAME));
        assertEquals(List.of(), m.verify(dir));
        Files.copy(fixtures.resolve("npz-deflated.npz"), dir.resolve("images-00001.npz"));
        Files.copy(fixtures.resolve("arrow-fixed-stream.arrows"), dir.resolve("table-00001.arrows"));
        assertEquals(List.of(dir.resolve("images-00001.npz") + ": a shard file the manifest does not list (it would be ignored "
                + "when loading)", dir.resolve("table-00001.arrows") + ": a shard file the manifest does not list (it would be "
                + "ignored when loading)"), m.verify(dir));
        DatasetManifest.builder(ShardFormat.NPY).column("images", DType.UINT8, 28, 28).column("label", DType.UINT16)
                .shard("images-00000.npz", "images", 4).shard("table-00000.arrows", "label", 6).build(dir).write(dir);
        List<String> problems = DatasetManifest.read(dir.resolve(DatasetManifest.FILE_NAME)).verify(dir);
        assertEquals(dir.resolve("images-00000.npz") + ": holds 3 records of column 'images', but the manifest lists 4",
                problems.get(0));
        assertEquals(dir.resolve("table-00000.arrows") + ": holds UINT8 records of shape [] in column 'label', but the "
                + "manifest lists UINT16 []", problems.get(1));
    }
}
