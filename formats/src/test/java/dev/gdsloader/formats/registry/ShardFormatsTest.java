package dev.gdsloader.formats.registry;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.manifest.ShardFormat;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The format registry itself: suffixes are unique, every manifest format has a writer whose files its reader reads back
 * byte-exact and its verifier accepts (and refuses with a wrong dtype, shape or count), and a writer's claim of a
 * directory sees every registered suffix and sidecar.
 */
class ShardFormatsTest {
    @TempDir
    Path dir;

    @Test
    void everySuffixBelongsToOneFormatAndIsFoundByName() {
        Set<String> seen = new HashSet<>();
        for (ShardFileFormat f : ShardFormats.all()) {
            assertTrue(!f.suffixes().isEmpty(), f.name());
            for (String s : f.suffixes()) {
                assertTrue(seen.add(s), s + " is registered twice");
                assertEquals(Optional.of(f), ShardFormats.of(Path.of("x-00000" + s)), s);
                assertEquals(Optional.of(s), ShardFormats.suffixOf(Path.of("x-00000" + s)));
            }
        }
        assertEquals(List.of(".npy", ".npz", ".bin", ".safetensors", ".arrow", ".arrows"), ShardFormats.suffixes());
        assertEquals(".npy, .npz, .bin, .safetensors, .arrow or .arrows", ShardFormats.suffixList());
        assertEquals(Optional.empty(), ShardFormats.of(Path.of("x.bin.json")), "a sidecar is not a shard");
        assertEquals(Optional.empty(), ShardFormats.of(Path.of("dataset.json")));
    }

    @Test
    void anUnknownFileOrADirectoryIsRefusedNamingTheSuffixes() throws IOException {
        IOException e = assertThrows(IOException.class, () -> ShardFormats.require(dir.resolve("x.csv")));
        assertEquals(dir.resolve("x.csv") + ": unknown shard format (expected .npy, .npz, .bin, .safetensors, .arrow or "
                + ".arrows)", e.getMessage());
        IOException d = assertThrows(IOException.class, () -> ShardFormats.require(dir));
        assertEquals(dir + ": is a directory, not a shard file", d.getMessage());
    }

    @Test
    void everyManifestFormatsWriterWritesWhatItsReaderReadsBackAndItsVerifierAccepts() throws IOException {
        byte[] data = new byte[5 * 6 * 2];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 7 + 3);
        }
        long[] recordShape = {2, 3};
        for (ShardFormat m : ShardFormat.values()) {
            ShardFileFormat f = m.fileFormat();
            Path file = dir.resolve("col-00000" + m.suffix());
            m.writer().write(file, "col", DType.INT16, recordShape, data, Map.of("source", "test"));
            assertEquals("col", f.columns(file, "col").get(0), m.toString());
            List<RecordLayout> runs = f.open(file, "col");
            long records = runs.stream().mapToLong(RecordLayout::recordCount).sum();
            assertEquals(5, records, m.toString());
            // an Arrow FixedSizeList holds a record flat
            long[] held = runs.get(0).recordShape();
            assertEquals(DType.INT16, runs.get(0).dtype(), m.toString());
            assertEquals(12, runs.get(0).recordBytes(), m.toString());
            assertArrayEquals(data, bytes(file, runs), m.toString());
            assertEquals(Optional.empty(), f.verify(file, "col", 5, DType.INT16, held), m.toString());
            assertEquals(Optional.of(file + ": holds 5 records of column 'col', but the manifest lists 6"),
                    f.verify(file, "col", 6, DType.INT16, held), m.toString());
            assertEquals(Optional.of(file + ": holds INT16 records of shape " + java.util.Arrays.toString(held)
                    + " in column 'col', but the manifest lists UINT16 " + java.util.Arrays.toString(held)),
                    f.verify(file, "col", 5, DType.UINT16, held), m.toString());
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            f.inspect(file, new PrintStream(out, true, StandardCharsets.UTF_8));
            assertTrue(out.toString(StandardCharsets.UTF_8).contains("INT16"), m + ": " + out);
        }
    }

    /** The runs' bytes, read from the file at their extents (the writers here write uncompressed data). */
    private static byte[] bytes(Path file, List<RecordLayout> runs) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        try (FileChannel ch = FileChannel.open(file)) {
            for (RecordLayout l : runs) {
                ByteBuffer b = ByteBuffer.allocate((int) (l.recordCount() * l.recordBytes()));
                while (b.hasRemaining() && ch.read(b, l.dataOffset() + b.position()) >= 0) {
                    // read on
                }
                all.writeBytes(b.array());
            }
        }
        return all.toByteArray();
    }

    @Test
    void aFileThatCannotBeReadIsAVerifyMismatchSayingWhy() throws IOException {
        Path bad = Files.writeString(dir.resolve("x-00000.npz"), "not a zip");
        Optional<String> problem = ShardFormats.NPZ.verify(bad, "x", 1, DType.UINT8, new long[] {1});
        assertTrue(problem.isPresent() && problem.get().startsWith(bad + ": cannot be read as a npz shard: " + bad),
                problem.toString());
    }

    @Test
    void claimSeesEveryRegisteredSuffixAndSidecar() throws IOException {
        List<String> names = new ArrayList<>();
        for (ShardFileFormat f : ShardFormats.all()) {
            f.suffixes().forEach(s -> names.add("col-00003" + s));
            f.sidecarSuffixes().forEach(s -> names.add("col-00003" + s));
        }
        names.add("col.npy");
        for (String n : names) {
            Path d = Files.createDirectories(dir.resolve("claim-" + n));
            Files.write(d.resolve(n), new byte[1]);
            Files.write(d.resolve("other-00000.npy"), new byte[1]);
            IOException e = assertThrows(IOException.class, () -> ShardFormats.claim(d, "col", false), n);
            assertTrue(e.getMessage().contains("already holds 1 shard(s) of column 'col' ([" + n + "])"), e.getMessage());
            ShardFormats.claim(d, "col", true);
            assertTrue(Files.notExists(d.resolve(n)) && Files.exists(d.resolve("other-00000.npy")), n);
        }
        ShardFormats.claim(dir.resolve("does-not-exist"), "col", false);
    }
}
