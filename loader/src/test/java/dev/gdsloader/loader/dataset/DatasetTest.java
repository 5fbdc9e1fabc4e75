package dev.gdsloader.loader.dataset;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.npy.NpyWriter;
import dev.gdsloader.loader.TestShards;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link Dataset#open} and {@link Column} on real shard files. */
class DatasetTest {
    @TempDir
    Path dir;

    @Test
    void shardsAreGroupedIntoColumnsOrderedByName() throws IOException {
        TestShards.writeLabels(dir, 20, 20);
        TestShards.writeImages(dir, 7, 13, 0, 1, 19);
        Files.writeString(dir.resolve("README.txt"), "not a shard");
        Dataset d = Dataset.open(dir);
        assertEquals(dir, d.root());
        assertEquals(List.of("images", "labels"), d.columns().stream().map(Column::name).toList());
        assertEquals(40, d.recordCount());
        Column images = d.column("images");
        assertEquals(DType.UINT8, images.dtype());
        assertArrayEquals(new long[] {28, 28}, images.recordShape());
        assertEquals(784, images.recordBytes());
        assertEquals(5, images.shards().size());
        assertEquals(40L * 784, images.dataBytes());
        assertEquals(40L * 785, d.dataBytes());
        Column labels = d.column("labels");
        assertArrayEquals(new long[0], labels.recordShape());
        assertEquals(1, labels.recordBytes());
    }

    @Test
    void hiddenFilesAreNeverShardsLikeACuFileProbeFileOfAnotherProcess() throws IOException {
        TestShards.writeImages(dir, 7);
        // what CuFileProbe leaves for a moment in the data directory while another loader probes it
        Files.write(dir.resolve(".gdsloader-probe-123.bin"), new byte[4096]);
        Files.write(dir.resolve(".images-00001.npy"), new byte[10]); // an editor's or copy tool's temporary file
        Dataset d = Dataset.open(dir);
        assertEquals(List.of("images"), d.columns().stream().map(Column::name).toList());
        assertEquals(1, d.column("images").shards().size());
    }

    @Test
    void aMissingPathIsNoSuchFileNotANonRegularFile() {
        Path missing = dir.resolve("nonexistent");
        java.nio.file.NoSuchFileException e = assertThrows(java.nio.file.NoSuchFileException.class, () -> Dataset.open(missing));
        assertEquals(missing.toString(), e.getFile());
        assertEquals("no such file or directory", e.getReason());
    }

    @Test
    void globalRecordsMapToShardsSkippingEmptyOnes() throws IOException {
        TestShards.writeImages(dir, 7, 13, 0, 1, 19);
        Column c = Dataset.open(dir).column("images");
        assertEquals(0, c.shardOf(0));
        assertEquals(0, c.shardOf(6));
        assertEquals(1, c.shardOf(7));
        assertEquals(1, c.shardOf(19));
        assertEquals(3, c.shardOf(20), "record 20 is in shard 3; shard 2 is empty");
        assertEquals(4, c.shardOf(21));
        assertEquals(4, c.shardOf(39));
        assertEquals(20, c.firstRecordOf(2));
        assertEquals(20, c.firstRecordOf(3));
        assertEquals(21, c.firstRecordOf(4));
        IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, () -> c.shardOf(40));
        assertTrue(e.getMessage().contains("images"), e.getMessage());
        assertThrows(IndexOutOfBoundsException.class, () -> c.shardOf(-1));
    }

    @Test
    void shardNumbersOrderNumericallyNotAlphabetically() throws IOException {
        for (int i = 0; i <= 10; i++) {
            NpyWriter.write(dir.resolve("x-" + i + ".npy"), DType.UINT8, new long[] {1}, new byte[] {(byte) i});
        }
        Column x = Dataset.open(dir).column("x");
        assertEquals(dir.resolve("x-2.npy"), x.shards().get(2).file());
        assertEquals(dir.resolve("x-10.npy"), x.shards().get(10).file());
    }

    @Test
    void aGapOrADuplicateInShardNumbersIsRefusedNamingTheColumn() throws IOException {
        NpyWriter.write(dir.resolve("x-00000.npy"), DType.UINT8, new long[] {1}, new byte[] {0});
        NpyWriter.write(dir.resolve("x-00002.npy"), DType.UINT8, new long[] {1}, new byte[] {2});
        IOException gap = assertThrows(IOException.class, () -> Dataset.open(dir));
        assertTrue(gap.getMessage().contains("'x'") && gap.getMessage().contains("missing"), gap.getMessage());
        NpyWriter.write(dir.resolve("x-1.npy"), DType.UINT8, new long[] {1}, new byte[] {1});
        NpyWriter.write(dir.resolve("x-00001.npy"), DType.UINT8, new long[] {1}, new byte[] {1});
        IOException dup = assertThrows(IOException.class, () -> Dataset.open(dir));
        assertTrue(dup.getMessage().contains("both shard 1"), dup.getMessage());
    }

    @Test
    void aDanglingSymbolicLinkAmongTheShardsIsRefusedNotSkipped() throws IOException {
        NpyWriter.write(dir.resolve("x-00000.npy"), DType.UINT8, new long[] {1}, new byte[] {0});
        Files.createSymbolicLink(dir.resolve("x-00001.npy"), dir.resolve("gone.npy"));
        IOException e = assertThrows(IOException.class, () -> Dataset.open(dir));
        assertTrue(e.getMessage().contains("x-00001.npy") && e.getMessage().contains("symbolic link"), e.getMessage());
    }

    @Test
    void aSymbolicLinkLoopAmongTheShardsIsNamedALoop() throws IOException {
        NpyWriter.write(dir.resolve("x-00000.npy"), DType.UINT8, new long[] {1}, new byte[] {0});
        Files.createSymbolicLink(dir.resolve("x-00001.npy"), Path.of("x-00001.npy"));
        IOException e = assertThrows(IOException.class, () -> Dataset.open(dir));
        assertEquals(dir.resolve("x-00001.npy") + ": not a regular file (a symbolic link loop): shards must be regular files",
                e.getMessage());
        IOException single = assertThrows(IOException.class, () -> Dataset.open(dir.resolve("x-00001.npy")));
        assertTrue(single.getMessage().contains("a symbolic link loop"), single.getMessage());
    }

    @Test
    void aSingleFileIsAOneShardColumnNamedAfterIt() throws IOException {
        Path f = dir.resolve("train_labels.npy");
        NpyWriter.write(f, DType.INT64, new long[] {3}, new byte[24]);
        Dataset d = Dataset.open(f);
        assertEquals(List.of("train_labels"), d.columns().stream().map(Column::name).toList());
        assertEquals(3, d.recordCount());
        assertEquals(dir, d.root());
    }

    @Test
    void emptyDirectoryFailsNamingTheDirectory() {
        IOException e = assertThrows(IOException.class, () -> Dataset.open(dir));
        assertTrue(e.getMessage().contains(dir.toString()), e.getMessage());
        assertTrue(e.getMessage().contains(".npy"), e.getMessage());
    }

    @Test
    void columnsWithDifferentRecordCountsFailNamingDirectoryAndColumns() throws IOException {
        TestShards.writeImages(dir, 10, 5);
        TestShards.writeLabels(dir, 14);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Dataset.open(dir));
        String m = e.getMessage();
        assertTrue(m.contains(dir.toString()), m);
        assertTrue(m.contains("images") && m.contains("labels"), m);
        assertTrue(m.contains("15") && m.contains("14"), m);
    }

    @Test
    void garbageNpyFileFailsNamingTheFile() throws IOException {
        TestShards.writeImages(dir, 4);
        Path bad = Files.writeString(dir.resolve("labels-00000.npy"), "this is not a numpy file at all", StandardCharsets.US_ASCII);
        FormatException e = assertThrows(FormatException.class, () -> Dataset.open(dir));
        assertTrue(e.getMessage().contains(bad.toString()), e.getMessage());
        assertEquals(bad, e.file());
    }

    @Test
    void npyFileShorterThanItsHeaderSaysFailsNamingTheFileAndSizes() throws IOException {
        List<Path> shards = TestShards.writeImages(dir, 4, 4);
        Path bad = shards.get(1);
        long size = Files.size(bad);
        try (FileChannel ch = FileChannel.open(bad, StandardOpenOption.WRITE)) {
            ch.truncate(size - 1);
        }
        FormatException e = assertThrows(FormatException.class, () -> Dataset.open(dir));
        assertTrue(e.getMessage().contains(bad.toString()), e.getMessage());
        assertTrue(e.getMessage().contains(String.valueOf(size)) && e.getMessage().contains(String.valueOf(size - 1)),
                e.getMessage());
    }

    @Test
    void shardsOfOneColumnWithDifferentDtypesFailNamingBothFiles() throws IOException {
        Path a = dir.resolve("y-00000.npy");
        Path b = dir.resolve("y-00001.npy");
        NpyWriter.write(a, DType.UINT8, new long[] {2, 3}, new byte[6]);
        NpyWriter.write(b, DType.INT16, new long[] {2, 3}, new byte[12]);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Dataset.open(dir));
        assertTrue(e.getMessage().contains(a.toString()) && e.getMessage().contains(b.toString()), e.getMessage());
    }

    @Test
    void shardsOfOneColumnWithDifferentRecordShapesFailNamingBothFiles() throws IOException {
        Path a = dir.resolve("z-00000.npy");
        Path b = dir.resolve("z-00001.npy");
        NpyWriter.write(a, DType.UINT8, new long[] {2, 3}, new byte[6]);
        NpyWriter.write(b, DType.UINT8, new long[] {3, 2}, new byte[6]);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Dataset.open(dir));
        assertTrue(e.getMessage().contains(a.toString()) && e.getMessage().contains(b.toString()), e.getMessage());
    }

    @Test
    void selectKeepsTheGivenColumnsInOrderAndRejectsUnknownOnes() throws IOException {
        TestShards.writeImages(dir, 5);
        TestShards.writeLabels(dir, 5);
        TestShards.writeWeights(dir, 5);
        Dataset d = Dataset.open(dir);
        assertEquals(List.of("weights", "images"), d.select(List.of("weights", "images")).columns().stream()
                .map(Column::name).toList());
        assertEquals(d, d.select(List.of()));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> d.select(List.of("nope")));
        assertTrue(e.getMessage().contains("nope") && e.getMessage().contains("labels"), e.getMessage());
    }
}
