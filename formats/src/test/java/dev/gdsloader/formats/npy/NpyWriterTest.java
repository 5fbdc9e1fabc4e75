package dev.gdsloader.formats.npy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class NpyWriterTest {

    @TempDir
    Path dir;

    /**
     * Headers produced by NumPy 2.4 ({@code numpy.lib.format._write_array_header}): the dict text
     * and the number of spaces before the final newline.
     */
    static Stream<Arguments> numpyHeaders() {
        long[] ones20 = new long[20];
        Arrays.fill(ones20, 1);
        long[] alignedExactly = new long[11];
        Arrays.fill(alignedExactly, 1);
        alignedExactly[10] = 100_000_000_000L;
        return Stream.of(
                Arguments.of(DType.FLOAT32, new long[] {3, 4},
                        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", 58, 128),
                Arguments.of(DType.UINT8, new long[] {0},
                        "{'descr': '|u1', 'fortran_order': False, 'shape': (0,), }", 60, 128),
                Arguments.of(DType.INT64, new long[0],
                        "{'descr': '<i8', 'fortran_order': False, 'shape': (), }", 62, 128),
                Arguments.of(DType.BOOL, new long[] {5},
                        "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }", 60, 128),
                Arguments.of(DType.FLOAT16, new long[] {2, 3, 4},
                        "{'descr': '<f2', 'fortran_order': False, 'shape': (2, 3, 4), }", 55, 128),
                Arguments.of(DType.UINT16, new long[] {60000, 28, 28},
                        "{'descr': '<u2', 'fortran_order': False, 'shape': (60000, 28, 28), }", 49, 128),
                Arguments.of(DType.FLOAT64, new long[] {12345678901234567L},
                        "{'descr': '<f8', 'fortran_order': False, 'shape': (12345678901234567,), }", 44, 128),
                Arguments.of(DType.INT8, ones20,
                        "{'descr': '|i1', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1, 1,"
                                + " 1, 1, 1, 1, 1, 1, 1, 1, 1, 1), }", 68, 192),
                // Already aligned before padding: NumPy still pads a full 64 bytes (20 growth + 64).
                Arguments.of(DType.FLOAT32, alignedExactly,
                        "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1, 1,"
                                + " 100000000000), }", 84, 192));
    }

    @ParameterizedTest
    @MethodSource("numpyHeaders")
    void headerIsByteForByteNumpys(DType dtype, long[] shape, String dict, int spaces, int total) {
        byte[] header = NpyHeaderEncoder.encode(dtype, shape);
        assertEquals(total, header.length);
        byte[] expected = NpyBytes.file(1, 0,
                (dict + " ".repeat(spaces) + "\n").getBytes(StandardCharsets.ISO_8859_1), new byte[0]);
        assertEquals(new String(expected, StandardCharsets.ISO_8859_1),
                new String(header, StandardCharsets.ISO_8859_1));
    }

    @Test
    void hugeHeaderSwitchesToVersion2(@TempDir Path tmp) throws IOException {
        long[] shape = new long[23000]; // "1, " x 23000 > 65535 bytes
        Arrays.fill(shape, 1);
        Path file = tmp.resolve("v2.npy");
        NpyWriter.write(file, DType.FLOAT32, shape, new byte[] {1, 2, 3, 4});
        byte[] bytes = Files.readAllBytes(file);
        assertEquals(2, bytes[6]);
        assertEquals(0, bytes[7]);
        long headerLength = ByteBuffer.wrap(bytes, 8, 4).order(ByteOrder.LITTLE_ENDIAN).getInt();
        assertTrue(headerLength > 65535);
        assertEquals(0, (12 + headerLength) % 64);
        NpyShard shard = NpyShard.open(file);
        assertEquals(2, shard.header().majorVersion());
        assertEquals(12 + headerLength, shard.dataOffset());
        assertEquals(1, shard.recordCount());
        assertEquals(4, shard.recordBytes());
        assertEquals(22999, shard.recordShape().length);
    }

    @Test
    void chunkedWritesAndAccessors() throws IOException {
        Path file = dir.resolve("a.npy");
        byte[] data = new byte[3 * 4 * 4];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) i;
        }
        try (NpyWriter w = NpyWriter.create(file, DType.FLOAT32, new long[] {3, 4})) {
            assertEquals(128, w.dataOffset());
            assertEquals(48, w.expectedDataBytes());
            ByteBuffer src = ByteBuffer.wrap(data);
            w.write(src.slice(0, 10));
            w.write(src.slice(10, 38));
            assertEquals(48, w.bytesWritten());
        }
        byte[] bytes = Files.readAllBytes(file);
        assertEquals(176, bytes.length);
        assertArrayEquals(data, Arrays.copyOfRange(bytes, 128, 176));
    }

    @Test
    void shortWriteFailsOnCloseAndDeletesTheFile() throws IOException {
        Path file = dir.resolve("short.npy");
        NpyWriter w = NpyWriter.create(file, DType.INT32, new long[] {2, 2});
        w.write(ByteBuffer.allocate(12));
        IOException e = assertThrows(IOException.class, w::close);
        assertTrue(e.getMessage().contains("wrote 12 data bytes but the array needs 16"), e.getMessage());
        assertFalse(Files.exists(file));
        assertDoesNotThrow(w::close, "close is idempotent");
        assertThrows(IOException.class, () -> w.write(ByteBuffer.allocate(1)));
    }

    @Test
    void overlongWriteIsRefusedAndTheFileDeleted() throws IOException {
        Path file = dir.resolve("long.npy");
        NpyWriter w = NpyWriter.create(file, DType.UINT8, new long[] {4});
        w.write(ByteBuffer.allocate(3));
        ByteBuffer extra = ByteBuffer.allocate(2);
        assertThrows(IOException.class, () -> w.write(extra));
        assertEquals(2, extra.remaining(), "nothing consumed from a refused buffer");
        assertEquals(3, w.bytesWritten());
        assertThrows(IOException.class, w::close);
        assertFalse(Files.exists(file));
    }

    @Test
    void convenienceWriteChecksLengthFirst() throws IOException {
        Path file = dir.resolve("c.npy");
        assertThrows(IllegalArgumentException.class,
                () -> NpyWriter.write(file, DType.FLOAT64, new long[] {2}, new byte[15]));
        assertFalse(Files.exists(file));
        assertThrows(IllegalArgumentException.class,
                () -> NpyWriter.create(file, DType.FLOAT64, new long[] {2, -1}));
        assertFalse(Files.exists(file));
    }

    @Test
    void replacesExistingFile() throws IOException {
        Path file = dir.resolve("r.npy");
        Files.write(file, new byte[10_000]);
        NpyWriter.write(file, DType.UINT8, new long[] {2}, new byte[] {7, 9});
        assertEquals(130, Files.size(file));
        assertEquals(2, NpyShard.open(file).recordCount());
    }

    @Test
    void zeroDimensionalArrayIsWrittenButIsNotAShard() throws IOException {
        Path file = dir.resolve("scalar.npy");
        NpyWriter.write(file, DType.INT64, new long[0], new byte[8]);
        NpyHeader h = NpyHeader.parse(file);
        assertEquals(0, h.shape().length);
        assertEquals(8, h.dataBytes());
        assertThrows(dev.gdsloader.formats.FormatException.class, () -> NpyShard.open(file));
    }
}
