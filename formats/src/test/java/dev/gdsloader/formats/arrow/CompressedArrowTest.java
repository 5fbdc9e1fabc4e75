package dev.gdsloader.formats.arrow;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.HostDecodedRecords;
import dev.gdsloader.formats.RecordExtent;
import dev.gdsloader.formats.RecordLayout;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Random;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.compression.CompressionUtil.CodecType;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Arrow IPC files compressed by Arrow Java's own writer (LZ4_FRAME, ZSTD): each batch's values, decoded on the host,
 * are byte-identical to the same table written uncompressed and equal to what Arrow Java's reader gives.
 */
class CompressedArrowTest {
    @TempDir
    Path dir;

    static final int IMAGE = 16;
    static final Schema SCHEMA = new Schema(List.of(
            new Field("id", FieldType.notNullable(new ArrowType.Int(32, true)), null),
            new Field("image", FieldType.notNullable(new ArrowType.FixedSizeList(IMAGE)),
                    List.of(new Field("pixel", FieldType.notNullable(new ArrowType.Int(8, false)), null)))));

    /**
     * Writes batches of the given rows with Arrow Java's {@link ArrowFileWriter}: {@code id} is row / 10 (compresses
     * well), {@code image} is seeded random bytes (does not compress: Arrow stores such buffers with length -1).
     *
     * @param codec NO_COMPRESSION, LZ4_FRAME or ZSTD
     */
    static Path write(Path file, CodecType codec, int... batchRows) throws IOException {
        Random random = new Random(42);
        try (BufferAllocator alloc = new RootAllocator();
             VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, alloc);
             FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             ArrowFileWriter writer = new ArrowFileWriter(root, null, ch, null, IpcOption.DEFAULT,
                     codec == CodecType.NO_COMPRESSION ? NoCompressionCodec.Factory.INSTANCE
                             : CommonsCompressionFactory.INSTANCE, codec)) {
            writer.start();
            int row = 0;
            for (int n : batchRows) {
                root.allocateNew();
                IntVector id = (IntVector) root.getVector("id");
                FixedSizeListVector image = (FixedSizeListVector) root.getVector("image");
                UInt1Vector pixels = (UInt1Vector) image.getDataVector();
                for (int i = 0; i < n; i++, row++) {
                    id.setSafe(i, row / 10);
                    image.setNotNull(i);
                    for (int k = 0; k < IMAGE; k++) {
                        pixels.setSafe(i * IMAGE + k, (byte) random.nextInt());
                    }
                }
                root.setRowCount(n);
                writer.writeBatch();
            }
            writer.end();
        }
        return file;
    }

    static byte[] readExtent(RecordLayout l) throws IOException {
        RecordExtent e = l.extent(0, l.recordCount());
        ByteBuffer b = ByteBuffer.allocate((int) e.length());
        try (FileChannel ch = FileChannel.open(l.file(), StandardOpenOption.READ)) {
            while (b.hasRemaining() && ch.read(b, e.offset() + b.position()) >= 0) {
                // read on
            }
        }
        return b.array();
    }

    @ParameterizedTest
    @EnumSource(value = CodecType.class, names = {"LZ4_FRAME", "ZSTD"})
    void compressedBatchesDecodeToTheUncompressedBytes(CodecType codec) throws IOException {
        ArrowIpcFile plain = ArrowIpcFile.open(write(dir.resolve("plain.arrow"), CodecType.NO_COMPRESSION, 100, 0, 37));
        ArrowIpcFile packed = ArrowIpcFile.open(write(dir.resolve("packed.arrow"), codec, 100, 0, 37));
        assertEquals(3, packed.batchCount());
        for (int b = 0; b < packed.batchCount(); b++) {
            assertEquals(codec, packed.compression(b));
            assertEquals(CodecType.NO_COMPRESSION, plain.compression(b));
            for (String c : List.of("id", "image")) {
                RecordLayout expected = plain.records(c, b);
                HostDecodedRecords got = assertInstanceOf(HostDecodedRecords.class, packed.records(c, b));
                assertEquals(expected.recordCount(), got.recordCount());
                assertEquals(expected.dtype(), got.dtype());
                assertArrayEquals(expected.recordShape(), got.recordShape());
                assertArrayEquals(readExtent(expected), got.decode(), c + " of batch " + b);
                assertEquals("HOST-DECODE: " + packed.file() + " record batch " + b + " is " + codec
                        + "-compressed; decoded on the host", got.decodeReason());
                if (c.equals("image") && got.recordCount() > 0) { // random bytes: stored with length -1, uncompressed
                    assertEquals(-1L, ByteBuffer.wrap(readAt(got.file(), got.storedOffset(), 8)).order(ByteOrder.LITTLE_ENDIAN)
                            .getLong());
                }
            }
        }
    }

    @ParameterizedTest
    @EnumSource(value = CodecType.class, names = {"LZ4_FRAME", "ZSTD"})
    void decodedValuesEqualArrowJavasReader(CodecType codec) throws IOException {
        Path file = write(dir.resolve("packed.arrow"), codec, 50, 20);
        ArrowIpcFile packed = ArrowIpcFile.open(file);
        try (BufferAllocator alloc = new RootAllocator();
             FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
             ArrowFileReader reader = new ArrowFileReader(ch, alloc, CommonsCompressionFactory.INSTANCE)) {
            for (int b = 0; reader.loadNextBatch(); b++) {
                IntVector id = (IntVector) reader.getVectorSchemaRoot().getVector("id");
                ByteBuffer ids = ByteBuffer.wrap(((HostDecodedRecords) packed.records("id", b)).decode())
                        .order(ByteOrder.LITTLE_ENDIAN);
                assertEquals(id.getValueCount() * 4L, ids.capacity());
                for (int i = 0; i < id.getValueCount(); i++) {
                    assertEquals(id.get(i), ids.getInt(i * 4));
                }
                FixedSizeListVector image = (FixedSizeListVector) reader.getVectorSchemaRoot().getVector("image");
                UInt1Vector pixels = (UInt1Vector) image.getDataVector();
                byte[] decoded = ((HostDecodedRecords) packed.records("image", b)).decode();
                for (int i = 0; i < image.getValueCount() * IMAGE; i++) {
                    assertEquals(pixels.get(i), decoded[i]);
                }
            }
        }
    }

    static byte[] readAt(Path file, long offset, int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ch.read(b, offset);
        }
        return b.array();
    }

    /** Overwrites bytes of a file at an offset. */
    static void patch(Path file, long offset, byte[] bytes) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.write(ByteBuffer.wrap(bytes), offset);
        }
    }

    @ParameterizedTest
    @EnumSource(value = CodecType.class, names = {"LZ4_FRAME", "ZSTD"})
    void anAbsurdDeclaredLengthIsAFormatErrorNotAnAllocation(CodecType codec) throws IOException {
        Path file = write(dir.resolve("packed.arrow"), codec, 100);
        CompressedArrowRecords ids = (CompressedArrowRecords) ArrowIpcFile.open(file).records("id", 0);
        patch(file, ids.storedOffset(), ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(0, 1L << 60).array());
        FormatException e = assertThrows(FormatException.class, ids::decode);
        assertEquals(file, e.file());
        assertEquals(ids.storedOffset(), e.offset());
        assertTrue(e.getMessage().contains("buffer " + ids.buffer() + " of record batch 0: an uncompressed length of 400 to 464"),
                e.getMessage());
        assertTrue(e.getMessage().contains("found " + (1L << 60)), e.getMessage());
    }

    @ParameterizedTest
    @EnumSource(value = CodecType.class, names = {"LZ4_FRAME", "ZSTD"})
    void corruptCompressedBytesAreAFormatError(CodecType codec) throws IOException {
        Path file = write(dir.resolve("packed.arrow"), codec, 1000);
        CompressedArrowRecords ids = (CompressedArrowRecords) ArrowIpcFile.open(file).records("id", 0);
        assertTrue(ids.storedBytes() > 16 && ids.storedBytes() < 4000, "id compresses: " + ids.storedBytes());
        byte[] junk = new byte[(int) ids.storedBytes() - 8];
        new Random(7).nextBytes(junk);
        patch(file, ids.storedOffset() + 8, junk);
        FormatException e = assertThrows(FormatException.class, ids::decode);
        assertEquals(ids.storedOffset(), e.offset());
        assertTrue(e.getMessage().startsWith(file + ": at byte offset " + ids.storedOffset() + ": expected buffer "
                + ids.buffer() + " of record batch 0: "), e.getMessage());
        assertTrue(e.getMessage().contains(codec.toString()), e.getMessage());
    }

    @Test
    void aTruncatedFileIsAFormatError() throws IOException {
        Path file = write(dir.resolve("packed.arrow"), CodecType.LZ4_FRAME, 100);
        CompressedArrowRecords ids = (CompressedArrowRecords) ArrowIpcFile.open(file).records("id", 0);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.WRITE)) {
            ch.truncate(ids.storedOffset() + 4);
        }
        FormatException e = assertThrows(FormatException.class, ids::decode);
        assertEquals(ids.storedOffset() + 4, e.offset());
    }
}
