package dev.gdsloader.loader.dataset;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.manifest.DatasetManifest;
import dev.gdsloader.formats.manifest.ShardFormat;
import dev.gdsloader.formats.npy.NpyWriter;
import dev.gdsloader.formats.raw.RawWriter;
import dev.gdsloader.formats.safetensors.SafetensorsWriter;
import dev.gdsloader.formats.safetensors.TensorData;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.TestShards;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The same records in .npy, raw and safetensors shards load identically; manifests are checked. */
class DatasetFormatsTest {
    @TempDir
    Path dir;

    private static final int[] SHARDS = {13, 0, 40, 7};

    private byte[] allBytes(Path d) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GdsLoader loader = GdsLoader.builder(d).batchSize(9).path(ReadPath.HOST).maxIoBytes(8192).build()) {
            for (Batch b : loader) {
                try (b) {
                    out.write(b.column("images").hostSegment().toArray(ValueLayout.JAVA_BYTE));
                    out.write(b.column("labels").hostSegment().toArray(ValueLayout.JAVA_BYTE));
                }
            }
        }
        return out.toByteArray();
    }

    @Test
    void theSameRecordsInEveryFormatLoadByteIdentically() throws IOException {
        Path npy = Files.createDirectories(dir.resolve("npy"));
        Path raw = Files.createDirectories(dir.resolve("raw"));
        Path st = Files.createDirectories(dir.resolve("st"));
        long first = 0;
        for (int s = 0; s < SHARDS.length; s++) {
            int n = SHARDS[s];
            byte[] images = TestShards.images(first, n);
            byte[] labels = TestShards.labels(first, n);
            String id = String.format("%05d", s);
            NpyWriter.write(npy.resolve("images-" + id + ".npy"), DType.UINT8, new long[] {n, 28, 28}, images);
            NpyWriter.write(npy.resolve("labels-" + id + ".npy"), DType.UINT8, new long[] {n}, labels);
            RawWriter.write(raw.resolve("images-" + id + ".bin"), DType.UINT8, new long[] {28, 28}, images);
            RawWriter.write(raw.resolve("labels-" + id + ".bin"), DType.UINT8, new long[] {}, labels);
            Map<String, TensorData> tensors = new LinkedHashMap<>();
            tensors.put("images", new TensorData(DType.UINT8, new long[] {n, 28, 28}, images));
            tensors.put("labels", new TensorData(DType.UINT8, new long[] {n}, labels));
            SafetensorsWriter.write(st.resolve("part-" + id + ".safetensors"), tensors, Map.of("source", "test"));
            first += n;
        }
        byte[] expected = allBytes(npy);
        assertTrue(expected.length > 0);
        assertArrayEquals(expected, allBytes(raw), "raw records");
        assertArrayEquals(expected, allBytes(st), "safetensors tensors");
        assertEquals(2, Dataset.open(st).columns().size());
    }

    @Test
    void anArrowFileLoadsTheSameRecordsAsNpyShards() throws Exception {
        Path npy = Files.createDirectories(dir.resolve("npy2"));
        Path arrow = Files.createDirectories(dir.resolve("arrow"));
        int[] batches = {13, 0, 40, 7};
        long total = 60;
        NpyWriter.write(npy.resolve("images-00000.npy"), DType.UINT8, new long[] {total, 28, 28}, TestShards.images(0, 60));
        NpyWriter.write(npy.resolve("labels-00000.npy"), DType.UINT8, new long[] {total}, TestShards.labels(0, 60));
        var schema = new org.apache.arrow.vector.types.pojo.Schema(java.util.List.of(
                new org.apache.arrow.vector.types.pojo.Field("images",
                        org.apache.arrow.vector.types.pojo.FieldType.notNullable(new org.apache.arrow.vector.types.pojo.ArrowType.FixedSizeList(784)),
                        java.util.List.of(new org.apache.arrow.vector.types.pojo.Field("px",
                                org.apache.arrow.vector.types.pojo.FieldType.notNullable(new org.apache.arrow.vector.types.pojo.ArrowType.Int(8, false)), null))),
                new org.apache.arrow.vector.types.pojo.Field("labels",
                        org.apache.arrow.vector.types.pojo.FieldType.notNullable(new org.apache.arrow.vector.types.pojo.ArrowType.Int(8, false)), null)));
        try (var alloc = new org.apache.arrow.memory.RootAllocator();
             var root = org.apache.arrow.vector.VectorSchemaRoot.create(schema, alloc);
             var ch = java.nio.channels.FileChannel.open(arrow.resolve("part-00000.arrow"),
                     java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.WRITE);
             var w = new org.apache.arrow.vector.ipc.ArrowFileWriter(root, null, ch)) {
            w.start();
            long row = 0;
            for (int n : batches) {
                root.allocateNew();
                var images = (org.apache.arrow.vector.complex.FixedSizeListVector) root.getVector("images");
                var px = (org.apache.arrow.vector.UInt1Vector) images.getDataVector();
                var labels = (org.apache.arrow.vector.UInt1Vector) root.getVector("labels");
                byte[] img = TestShards.images(row, n);
                byte[] lab = TestShards.labels(row, n);
                for (int i = 0; i < n; i++) {
                    images.setNotNull(i);
                    for (int k = 0; k < 784; k++) {
                        px.setSafe(i * 784 + k, img[i * 784 + k]);
                    }
                    labels.setSafe(i, lab[i]);
                }
                root.setRowCount(n);
                w.writeBatch();
                row += n;
            }
            w.end();
        }
        assertArrayEquals(allBytes(npy), allBytes(arrow), "Arrow record batches deliver the same bytes");
        assertEquals(4, Dataset.open(arrow).column("images").shards().size(), "one shard per record batch");
    }

    @Test
    void anArrowFileLoadsByItsFixedWidthColumnsWhenTheDevicePathRefusesAnother() throws IOException {
        Path file = dir.resolve("captions.arrow");
        Schema schema = new Schema(List.of(new Field("caption", FieldType.notNullable(new ArrowType.Utf8()), null),
                new Field("label", FieldType.notNullable(new ArrowType.Int(32, true)), null)));
        try (RootAllocator alloc = new RootAllocator(); VectorSchemaRoot root = VectorSchemaRoot.create(schema, alloc);
             FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             ArrowFileWriter w = new ArrowFileWriter(root, null, ch)) {
            w.start();
            root.allocateNew();
            for (int i = 0; i < 5; i++) {
                ((VarCharVector) root.getVector("caption")).setSafe(i, ("caption " + i).getBytes(StandardCharsets.UTF_8));
                ((IntVector) root.getVector("label")).setSafe(i, 10 * i);
            }
            root.setRowCount(5);
            w.writeBatch();
            w.end();
        }
        Dataset labels = Dataset.ofShards(dir, List.of(file), List.of("label")); // the string column is not opened
        assertEquals(5, labels.recordCount());
        assertEquals(DType.INT32, labels.column("label").dtype());
        FormatException x = assertThrows(FormatException.class, () -> Dataset.ofShards(dir, List.of(file), List.of("caption")));
        assertEquals("column 'caption' of record batch 0: type Utf8 is not a fixed-width column; the device path reads "
                + "integers, floats, FixedSizeBinary and FixedSizeList of those", x.detail());
    }

    @Test
    void aManifestIsFollowedAndALyingManifestIsRefusedNamingTheShard() throws IOException {
        NpyWriter.write(dir.resolve("a-00000.npy"), DType.UINT8, new long[] {5, 4}, new byte[20]);
        NpyWriter.write(dir.resolve("a-00001.npy"), DType.UINT8, new long[] {3, 4}, new byte[12]);
        DatasetManifest.builder(ShardFormat.NPY).column("a", DType.UINT8, 4).shard("a-00000.npy", "a", 5)
                .shard("a-00001.npy", "a", 3).build(dir).write(dir);
        assertEquals(8, Dataset.open(dir).recordCount());
        DatasetManifest.builder(ShardFormat.NPY).column("a", DType.UINT8, 4).shard("a-00000.npy", "a", 6)
                .build(dir).write(dir);
        IOException e = assertThrows(IOException.class, () -> Dataset.open(dir));
        assertTrue(e.getMessage().contains("a-00000.npy") && e.getMessage().contains("dataset.json says 6"), e.getMessage());
    }

    @Test
    void aDirectoryMixingFormatsIsRefused() throws IOException {
        NpyWriter.write(dir.resolve("a-00000.npy"), DType.UINT8, new long[] {2}, new byte[2]);
        RawWriter.write(dir.resolve("b-00000.bin"), DType.UINT8, new long[] {}, new byte[2]);
        IOException e = assertThrows(IOException.class, () -> Dataset.open(dir));
        assertTrue(e.getMessage().contains("mixes shard formats"), e.getMessage());
    }

    @Test
    void aFloat32TensorAtAnOddOffsetArrivesAlignedAndExact() throws IOException {
        // a u8 tensor of 5 bytes first, so the f32 tensor's data starts at an odd file offset; its 5 records
        // disagree with the 3 of 'values', so only a dataset of 'values' alone can be built
        ByteBuffer f = ByteBuffer.allocate(6 * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 6; i++) {
            f.putFloat(i * 1.5f);
        }
        Map<String, TensorData> tensors = new LinkedHashMap<>();
        tensors.put("odd", new TensorData(DType.UINT8, new long[] {5}, new byte[] {1, 2, 3, 4, 5}));
        tensors.put("values", new TensorData(DType.FLOAT32, new long[] {3, 2}, f.array()));
        Path file = dir.resolve("t-00000.safetensors");
        SafetensorsWriter.write(file, tensors, Map.of());
        IllegalArgumentException all = assertThrows(IllegalArgumentException.class,
                () -> Dataset.ofShards(dir, java.util.List.of(file)));
        assertTrue(all.getMessage().contains("'values' has 3 records but column 'odd' has 5")
                || all.getMessage().contains("'odd' has 5 records but column 'values' has 3"), all.getMessage());
        Dataset d = Dataset.ofShards(dir, java.util.List.of(file), java.util.List.of("values"));
        try (GdsLoader loader = GdsLoader.builder(d).batchSize(3).path(ReadPath.HOST).build()) {
            for (Batch b : loader) {
                try (b) {
                    var seg = b.column("values").hostSegment();
                    assertEquals(0, seg.address() % 16, "view aligned");
                    assertArrayEquals(f.array(), seg.toArray(ValueLayout.JAVA_BYTE));
                }
            }
        }
    }
}
