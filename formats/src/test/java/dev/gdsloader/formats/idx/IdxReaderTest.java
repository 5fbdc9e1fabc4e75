package dev.gdsloader.formats.idx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IdxReaderTest {

    @TempDir
    Path dir;

    private Path write(String name, byte[] bytes) throws IOException {
        return Files.write(dir.resolve(name), bytes);
    }

    private FormatException refused(String name, byte[] bytes) throws IOException {
        Path f = write(name, bytes);
        return assertThrows(FormatException.class, () -> IdxReader.read(f));
    }

    private static void assertMessage(FormatException e, String... parts) {
        for (String p : parts) {
            assertTrue(e.getMessage().contains(p), () -> "'" + p + "' not in: " + e.getMessage());
        }
    }

    private static byte[] ubytes(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 7 + 1);
        }
        return b;
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void readsUnsignedBytesPlainAndGzip(boolean gz) throws IOException {
        byte[] data = ubytes(2 * 3 * 4);
        byte[] idx = IdxBytes.idx(0x08, new int[] {2, 3, 4}, data);
        IdxArray a = IdxReader.read(write("x", gz ? IdxBytes.gzip(idx) : idx));
        assertEquals(DType.UINT8, a.dtype());
        assertArrayEquals(new long[] {2, 3, 4}, a.shape());
        assertArrayEquals(data, a.littleEndianData());
        assertEquals(2, a.recordCount());
        assertEquals(12, a.recordBytes());
    }

    @Test
    void gzipDetectedByMagicNotByName() throws IOException {
        byte[] idx = IdxBytes.idx(0x09, new int[] {3}, new byte[] {-1, 0, 5});
        IdxArray plainNamedGz = IdxReader.read(write("plain.gz", idx));
        IdxArray gzNamedPlain = IdxReader.read(write("compressed-idx1-ubyte", IdxBytes.gzip(idx)));
        assertEquals(DType.INT8, plainNamedGz.dtype());
        assertArrayEquals(plainNamedGz.littleEndianData(), gzNamedPlain.littleEndianData());
        assertArrayEquals(new byte[] {-1, 0, 5}, gzNamedPlain.littleEndianData());
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void int32IsConvertedFromBigEndian(boolean gz) throws IOException {
        int[] values = {1, -2, 0x01020304, Integer.MIN_VALUE, Integer.MAX_VALUE, 60000};
        ByteBuffer be = ByteBuffer.allocate(values.length * 4).order(ByteOrder.BIG_ENDIAN);
        ByteBuffer le = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
        for (int v : values) {
            be.putInt(v);
            le.putInt(v);
        }
        byte[] idx = IdxBytes.idx(0x0C, new int[] {3, 2}, be.array());
        IdxArray a = IdxReader.read(write("i32", gz ? IdxBytes.gzip(idx) : idx));
        assertEquals(DType.INT32, a.dtype());
        assertArrayEquals(new long[] {3, 2}, a.shape());
        assertArrayEquals(le.array(), a.littleEndianData());
        assertEquals(0x04, a.littleEndianData()[8], "0x01020304 little-endian starts with 04");
    }

    @Test
    void shortFloatAndDoubleAreConverted() throws IOException {
        ByteBuffer s = ByteBuffer.allocate(4).putShort((short) -300).putShort((short) 0x0102);
        IdxArray shorts = IdxReader.read(write("s", IdxBytes.idx(0x0B, new int[] {2}, s.array())));
        assertEquals(DType.INT16, shorts.dtype());
        ByteBuffer sl = ByteBuffer.wrap(shorts.littleEndianData()).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(-300, sl.getShort());
        assertEquals(0x0102, sl.getShort());

        ByteBuffer f = ByteBuffer.allocate(8).putFloat(1.5f).putFloat(-0.25f);
        IdxArray floats = IdxReader.read(write("f", IdxBytes.idx(0x0D, new int[] {2}, f.array())));
        assertEquals(DType.FLOAT32, floats.dtype());
        ByteBuffer fl = ByteBuffer.wrap(floats.littleEndianData()).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(1.5f, fl.getFloat());
        assertEquals(-0.25f, fl.getFloat());

        ByteBuffer d = ByteBuffer.allocate(8).putDouble(Math.PI);
        IdxArray doubles = IdxReader.read(write("d", IdxBytes.idx(0x0E, new int[] {1, 1}, d.array())));
        assertEquals(DType.FLOAT64, doubles.dtype());
        assertEquals(Math.PI, ByteBuffer.wrap(doubles.littleEndianData()).order(ByteOrder.LITTLE_ENDIAN)
                .getDouble());
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void badMagicRefused(boolean gz) throws IOException {
        byte[] idx = IdxBytes.idx(0x08, new int[] {2}, new byte[2]);
        idx[0] = 1;
        FormatException e = refused("m", gz ? IdxBytes.gzip(idx) : idx);
        assertMessage(e, "two zero bytes", "01 00 08 01");
        assertEquals(0, e.offset());
        // A .npy file is no IDX file either.
        assertMessage(refused("n", new byte[] {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0}), "93 4e 55 4d");
    }

    @Test
    void unknownTypeCodeRefused() throws IOException {
        FormatException e = refused("t", IdxBytes.idx(0x0A, new int[] {2}, new byte[2]));
        assertMessage(e, "0x0A", "0x08, 0x09, 0x0B, 0x0C, 0x0D or 0x0E");
        assertEquals(2, e.offset());
        assertMessage(refused("z", IdxBytes.idx(0x08, new int[0], new byte[1])), "of 1 to 32", "found 0 (0x00)");
    }

    @Test
    void aDimensionCountAboveTheMaximumIsRefusedNamingItNotAsMissingDimensionSizes() throws IOException {
        // magic 00 00 09 99: type 0x09 (signed byte) is valid, but 0x99 = 153 dimensions is no IDX file; the
        // fresh user's file said "expected 153 big-endian 4-byte dimension sizes"
        Path f = write("bad-magic-idx1-ubyte", new byte[] {0, 0, 0x09, (byte) 0x99, 0, 0, 0, 2, 1, 2});
        FormatException e = assertThrows(FormatException.class, () -> IdxReader.read(f));
        assertEquals(f + ": at byte offset 3: expected a dimension count (the fourth magic byte) of 1 to 32, found 153"
                + " (0x99): is this an IDX file?", e.getMessage());
        // 32 dimensions of size 1 still read
        int[] dims = new int[32];
        java.util.Arrays.fill(dims, 1);
        assertEquals(32, IdxReader.read(write("d32", IdxBytes.idx(0x08, dims, new byte[1]))).shape().length);
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void truncatedDataRefused(boolean gz) throws IOException {
        byte[] idx = IdxBytes.idx(0x08, new int[] {3, 4}, ubytes(5)); // needs 12 data bytes
        FormatException e = refused("tr", gz ? IdxBytes.gzip(idx) : idx);
        assertMessage(e, "expected 12 data bytes, found 5");
        assertEquals(12 + 5, e.offset()); // 4-byte magic + 2 dims, then 5 data bytes
    }

    @Test
    void everyTruncationOfPlainAndGzipFilesRefused() throws IOException {
        byte[] idx = IdxBytes.idx(0x0C, new int[] {2, 3}, ubytes(24));
        byte[] gz = IdxBytes.gzip(idx);
        Path f = dir.resolve("cut");
        for (byte[] full : new byte[][] {idx, gz}) {
            for (int len = 0; len < full.length; len++) {
                Files.write(f, Arrays.copyOf(full, len));
                int n = len;
                assertThrows(FormatException.class, () -> IdxReader.read(f), "cut at " + n);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void trailingGarbageRefused(boolean gz) throws IOException {
        byte[] idx = IdxBytes.idx(0x08, new int[] {4}, ubytes(7)); // 3 bytes too many
        FormatException e = refused("tg", gz ? IdxBytes.gzip(idx) : idx);
        assertMessage(e, "3 trailing bytes");
        assertEquals(12, e.offset());
    }

    @Test
    void hugeDimensionsRefusedBeforeAllocating() throws IOException {
        FormatException e = refused("big", IdxBytes.idx(0x08, new int[] {65536, 65536}, new byte[0]));
        assertMessage(e, "at most 2147483639 data bytes", "4294967296");
        FormatException overflow = refused("ovf", IdxBytes.idx(0x0E, new int[] {-1, -1, -1}, new byte[0]));
        assertMessage(overflow, "fits in a signed 64-bit");
        // A gzip "bomb" header claiming ~2 GB in a tiny file is refused as truncated.
        FormatException bomb = refused("bomb", IdxBytes.gzip(
                IdxBytes.idx(0x08, new int[] {2_000_000_000}, new byte[10])));
        assertMessage(bomb, "expected 2000000000 data bytes, found 10");
    }

    @Test
    void corruptGzipRefused() throws IOException {
        byte[] gz = IdxBytes.gzip(IdxBytes.idx(0x08, new int[] {64}, ubytes(64)));
        byte[] badMethod = gz.clone();
        badMethod[2] = 7; // compression method other than deflate
        assertThrows(FormatException.class, () -> IdxReader.read(write("g1", badMethod)));
        byte[] badCrc = gz.clone();
        badCrc[gz.length - 6] ^= 0x55; // CRC-32 in the trailer
        FormatException e = refused("g2", badCrc);
        assertMessage(e, "gzip");
    }

    @Test
    void idxArrayValidatesAndShares() {
        byte[] data = new byte[6];
        IdxArray a = new IdxArray(Path.of("x"), DType.INT16, new long[] {3}, data);
        assertSame(data, a.littleEndianData(), "data is shared, not copied");
        assertEquals(new IdxArray(Path.of("x"), DType.INT16, new long[] {3}, new byte[6]), a);
        assertThrows(IllegalArgumentException.class,
                () -> new IdxArray(Path.of("x"), DType.INT16, new long[] {3}, new byte[5]));
    }
}
