package dev.gdsloader.formats.npy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.RecordExtent;
import dev.gdsloader.formats.Shapes;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Writes every dtype in several shapes, reopens the file, and reads the bytes at the extents. */
class NpyRoundTripTest {

    @TempDir
    Path dir;

    static Stream<Arguments> cases() {
        long[][] shapes = {{0}, {5}, {3, 4}, {2, 3, 4}};
        return Arrays.stream(DType.values()).filter(DType::hasNumpyDescr)
                .flatMap(t -> Arrays.stream(shapes)
                .map(s -> Arguments.of(t, s)));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    @SuppressWarnings("EnumOrdinal") // the ordinal only seeds the test data
    void roundTrip(DType dtype, long[] shape) throws IOException {
        byte[] data = randomData(dtype, shape, Arrays.hashCode(shape) * 31 + dtype.ordinal());
        Path file = dir.resolve(dtype + "-" + shape.length + ".npy");
        NpyWriter.write(file, dtype, shape, data);

        NpyShard shard = NpyShard.open(file);
        assertEquals(dtype, shard.dtype());
        assertEquals(shape[0], shard.recordCount());
        assertArrayEquals(Arrays.copyOfRange(shape, 1, shape.length), shard.recordShape());
        assertEquals(0, shard.dataOffset() % 64, "data offset must be 64-aligned");
        assertEquals(128, shard.dataOffset());
        assertEquals(Files.size(file), shard.fileSize());
        assertEquals(shard.dataOffset() + data.length, shard.fileSize());
        long recordBytes = Shapes.byteSize(shard.recordShape(), dtype.itemSize());
        assertEquals(recordBytes, shard.recordBytes());
        assertArrayEquals(shape, shard.header().shape());
        assertEquals(1, shard.header().majorVersion());

        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            for (long i = 0; i < shard.recordCount(); i++) {
                RecordExtent x = shard.extent(i, 1);
                assertEquals(recordBytes, x.length());
                assertArrayEquals(slice(data, i * recordBytes, recordBytes), readAt(ch, x),
                        "record " + i);
            }
            RecordExtent all = shard.extent(0, shard.recordCount());
            assertEquals(shard.dataOffset(), all.offset());
            assertArrayEquals(data, readAt(ch, all));
            if (shard.recordCount() >= 2) {
                RecordExtent tail = shard.extent(1, shard.recordCount() - 1);
                assertArrayEquals(slice(data, recordBytes, data.length - recordBytes), readAt(ch, tail));
            }
            RecordExtent empty = shard.extent(shard.recordCount(), 0);
            assertEquals(shard.fileSize(), empty.offset());
            assertEquals(0, empty.length());
        }
    }

    static byte[] randomData(DType dtype, long[] shape, long seed) {
        byte[] data = new byte[(int) Shapes.byteSize(shape, dtype.itemSize())];
        Random r = new Random(seed);
        r.nextBytes(data);
        if (dtype == DType.BOOL) {
            for (int i = 0; i < data.length; i++) {
                data[i] = (byte) (data[i] & 1);
            }
        }
        return data;
    }

    static byte[] readAt(FileChannel ch, RecordExtent x) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate((int) x.length());
        while (buf.hasRemaining()) {
            if (ch.read(buf, x.offset() + buf.position()) < 0) {
                throw new IOException("unexpected end of file");
            }
        }
        return buf.array();
    }

    private static byte[] slice(byte[] data, long from, long length) {
        return Arrays.copyOfRange(data, (int) from, (int) (from + length));
    }
}
