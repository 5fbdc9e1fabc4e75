package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import dev.gdsloader.loader.path.ReadPath;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.zip.ZipOutputStream;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.compression.CompressionUtil.CodecType;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The host-decode path on the host engine: compressed Arrow bodies (written by Arrow Java) and deflated {@code .npz}
 * members load through the loader with the reason reported, each batch byte-identical to the uncompressed values.
 */
class HostDecodePathTest {
    @TempDir
    Path dir;

    /** Loads every record of column {@code column} through the HOST path, in order, with batches of 7. */
    static byte[] load(Path data, String column, String reasonStart) throws IOException {
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        try (GdsLoader loader = GdsLoader.builder(data).batchSize(7).path(ReadPath.HOST).maxIoBytes(4096).ioThreads(3)
                .build()) {
            assertTrue(loader.pathReason().startsWith(reasonStart), loader.pathReason());
            for (Batch b : loader) {
                try (b) {
                    all.writeBytes(b.column(column).hostSegment().toArray(ValueLayout.JAVA_BYTE));
                }
            }
        }
        return all.toByteArray();
    }

    @ParameterizedTest
    @ValueSource(strings = {"LZ4_FRAME", "ZSTD"})
    void compressedArrowBatchesLoadByteIdentical(String codecName) throws IOException {
        CodecType codec = CodecType.valueOf(codecName);
        Path data = Files.createDirectories(dir.resolve("arrow"));
        Path file = data.resolve("part-00000.arrow");
        Schema schema = new Schema(List.of(new Field("x", FieldType.notNullable(new ArrowType.Int(32, true)), null)));
        int[] rows = {3000, 0, 1500};
        ByteBuffer expected = ByteBuffer.allocate(4 * 4500).order(ByteOrder.LITTLE_ENDIAN);
        try (RootAllocator alloc = new RootAllocator(); VectorSchemaRoot root = VectorSchemaRoot.create(schema, alloc);
             FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             ArrowFileWriter w = new ArrowFileWriter(root, null, ch, null, IpcOption.DEFAULT, CommonsCompressionFactory.INSTANCE,
                     codec)) {
            w.start();
            int row = 0;
            for (int n : rows) {
                root.allocateNew();
                IntVector x = (IntVector) root.getVector("x");
                for (int i = 0; i < n; i++, row++) {
                    x.setSafe(i, row / 3);
                    expected.putInt(row / 3);
                }
                root.setRowCount(n);
                w.writeBatch();
            }
            w.end();
        }
        assertArrayEquals(expected.array(), load(data, "x", "HOST-DECODE: " + file + " record batch 0 is " + codec
                + "-compressed; decoded on the host (and 2 more host-decoded shard runs); HOST: requested"));
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void npzMembersLoadStoredOrDeflated(boolean deflate) throws IOException {
        Path data = Files.createDirectories(dir.resolve("npz"));
        Path npy = dir.resolve("x.npy");
        NpyWriter.write(npy, DType.UINT8, new long[] {50, 28, 28}, TestShards.images(0, 50));
        byte[] member = Files.readAllBytes(npy);
        Path archive = data.resolve("train-00000.npz");
        try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(archive))) {
            TestShards.zipMember(z, "images.npy", member, deflate);
        }
        assertArrayEquals(TestShards.images(0, 50), load(data, "images", deflate ? "HOST-DECODE: " + archive
                + " member 'images.npy' is deflated; decoded on the host" : "HOST: requested"));
    }
}
