package dev.gdsloader.formats.npy;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.RecordExtent;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Headers built by hand, byte by byte, covering what other writers and versions produce. */
class NpyHeaderTest {

    private static final String DICT_3x4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";

    @TempDir
    Path dir;

    private Path file(String name, byte[] bytes) throws IOException {
        return NpyBytes.write(dir, name, bytes);
    }

    private FormatException refused(byte[] bytes) throws IOException {
        Path f = file("bad.npy", bytes);
        return assertThrows(FormatException.class, () -> NpyShard.open(f));
    }

    private static void assertMessage(FormatException e, String... parts) {
        for (String p : parts) {
            assertTrue(e.getMessage().contains(p), () -> "'" + p + "' not in: " + e.getMessage());
        }
    }

    @Test
    void v1WithSixteenByteAlignedHeader() throws IOException {
        byte[] data = new byte[48];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 3);
        }
        Path f = file("v1-80.npy", NpyBytes.file(1, 0, NpyBytes.padded(DICT_3x4, 10, 80, false), data));
        NpyShard shard = NpyShard.open(f);
        assertEquals(80, shard.dataOffset());
        assertEquals(3, shard.recordCount());
        assertEquals(16, shard.recordBytes());
        assertArrayEquals(new long[] {4}, shard.recordShape());
        assertEquals(new RecordExtent(96, 32), shard.extent(1, 2));
        assertEquals(128, shard.fileSize());
        assertFalse(shard.header().fortranOrder());
    }

    @Test
    void v1WithSpacesKeysInAnyOrderAndTrailingCommas() throws IOException {
        String dict = "{ 'shape' : ( 3 ,   4 , ) ,\t'fortran_order'  :  False ,   \"descr\" : '<f4' ,   }";
        byte[] header = NpyBytes.padded(dict + " ".repeat(200), 10, 320, false);
        assertTrue(header.length > 300);
        NpyShard shard = NpyShard.open(file("v1-320.npy", NpyBytes.file(1, 0, header, new byte[48])));
        assertEquals(320, shard.dataOffset());
        assertEquals(DType.FLOAT32, shard.dtype());
        assertEquals(3, shard.recordCount());
    }

    @Test
    void v2WithSeventyThousandByteHeader() throws IOException {
        String dict = "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 5), }";
        byte[] header = NpyBytes.padded(dict, 12, 70_016, false);
        NpyShard shard = NpyShard.open(file("v2.npy", NpyBytes.file(2, 0, header, new byte[20])));
        assertEquals(2, shard.header().majorVersion());
        assertEquals(70_016, shard.dataOffset());
        assertEquals(new RecordExtent(70_026, 10), shard.extent(1, 1));
    }

    @Test
    void v3HeaderIsUtf8() throws IOException {
        Path ok = file("v3.npy", NpyBytes.file(3, 0, NpyBytes.padded(DICT_3x4, 12, 128, true), new byte[48]));
        assertEquals(3, NpyShard.open(ok).header().majorVersion());

        String dict = "{'descr': '<f\u00e9', 'fortran_order': False, 'shape': (3, 4), }";
        byte[] header = NpyBytes.padded(dict, 12, 128, true);
        FormatException e = refused(NpyBytes.file(3, 0, header, new byte[48]));
        assertMessage(e, "unknown dtype '<f\u00e9'");
        assertEquals(12 + dict.indexOf("'<f"), e.offset());
    }

    @Test
    void v1HeaderIsLatin1NotUtf8() throws IOException {
        // The same bytes in a 1.0 file decode as ISO-8859-1: two characters, not one.
        String dict = "{'descr': '<f\u00e9', 'fortran_order': False, 'shape': (3, 4), }";
        byte[] utf8 = dict.getBytes(StandardCharsets.UTF_8);
        byte[] header = NpyBytes.padded(new String(utf8, StandardCharsets.ISO_8859_1), 10, 128, false);
        FormatException e = refused(NpyBytes.file(1, 0, header, new byte[48]));
        assertMessage(e, "unknown dtype '<f\u00c3\u00a9'");
    }

    @Test
    void v3InvalidUtf8IsRefused() throws IOException {
        byte[] header = NpyBytes.padded(DICT_3x4, 12, 128, false);
        header[12] = (byte) 0xFF; // inside 'descr'
        FormatException e = refused(NpyBytes.file(3, 0, header, new byte[48]));
        assertMessage(e, "UTF-8");
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 4, 255})
    void unknownMajorVersionRefusedByNumber(int major) throws IOException {
        FormatException e = refused(NpyBytes.file(major, 0, NpyBytes.padded(DICT_3x4, 12, 128, false),
                new byte[48]));
        assertMessage(e, "version " + major + ".0", "1.0, 2.0 or 3.0");
        assertEquals(6, e.offset());
    }

    @Test
    void unknownMinorVersionRefused() throws IOException {
        FormatException e = refused(NpyBytes.file(1, 1, NpyBytes.padded(DICT_3x4, 10, 128, false),
                new byte[48]));
        assertMessage(e, "version 1.1");
    }

    @Test
    void badMagicRefused() throws IOException {
        byte[] bytes = NpyBytes.v1(DICT_3x4, new byte[48]);
        bytes[1] = 'n';
        FormatException e = refused(bytes);
        assertMessage(e, "expected \\x93NUMPY magic", "'\\x93nUMPY'");
        assertEquals(0, e.offset());
        FormatException zip = refused(new byte[] {'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0, 0, 0});
        assertMessage(zip, "expected \\x93NUMPY magic, found 'PK\\x03\\x04\\x00\\x00'");
        assertMessage(refused(new byte[0]), "\\x93NUMPY magic", "after 0 bytes");
    }

    @Test
    void bigEndianRefusedByName() throws IOException {
        FormatException e = refused(NpyBytes.v1(DICT_3x4.replace("<f4", ">f4"), new byte[48]));
        assertMessage(e, "big-endian dtype '>f4' is not supported: convert with arr.astype('<f4')");
        assertEquals(10 + DICT_3x4.indexOf("'<f4'"), e.offset());
    }

    @Test
    void fortranOrderRefusedForTwoOrMoreDims() throws IOException {
        String fortran2d = DICT_3x4.replace("False", "True");
        FormatException e = refused(NpyBytes.v1(fortran2d, new byte[48]));
        assertMessage(e, "fortran_order True", "2-d", "(3, 4)");
        // Its header is still readable as such.
        Path f = file("f2.npy", NpyBytes.v1(fortran2d, new byte[48]));
        assertTrue(NpyHeader.parse(f).fortranOrder());

        String fortran1d = "{'descr': '<f4', 'fortran_order': True, 'shape': (12,), }";
        NpyShard shard = NpyShard.open(file("f1.npy", NpyBytes.v1(fortran1d, new byte[48])));
        assertEquals(12, shard.recordCount());
        assertEquals(4, shard.recordBytes());
    }

    @Test
    void wrongFileSizeGivesBothNumbers() throws IOException {
        FormatException shortFile = refused(NpyBytes.v1(DICT_3x4, new byte[47]));
        assertMessage(shortFile, "expected 176 bytes (header 128 + 3 x 4 x 4), found 175");
        assertEquals(175, shortFile.offset());
        FormatException longFile = refused(NpyBytes.v1(DICT_3x4, new byte[49]));
        assertMessage(longFile, "expected 176 bytes (header 128 + 3 x 4 x 4), found 177");
        assertEquals(176, longFile.offset());
    }

    @Test
    void mnistSizedMismatchMessage() throws IOException {
        String dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (60000, 784), }";
        byte[] bytes = NpyBytes.v1(dict, new byte[0]);
        Path f = file("mnist.npy", bytes);
        try (var ch = java.nio.channels.FileChannel.open(f, java.nio.file.StandardOpenOption.WRITE)) {
            ch.truncate(47_040_000); // does not grow
            ch.write(java.nio.ByteBuffer.wrap(new byte[] {0}), 47_040_000 - 1);
        }
        FormatException e = assertThrows(FormatException.class, () -> NpyShard.open(f));
        assertMessage(e, "expected 47040128 bytes (header 128 + 60000 x 784 x 1), found 47040000");
    }

    @Test
    void shapeOverflowRefused() throws IOException {
        FormatException e = refused(NpyBytes.v1(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775807, 2), }",
                new byte[0]));
        assertMessage(e, "(9223372036854775807, 2)");
        FormatException e2 = refused(NpyBytes.v1(
                "{'descr': '|u1', 'fortran_order': False, 'shape': (99999999999999999999,), }",
                new byte[0]));
        assertMessage(e2, "an integer that fits in 64 bits", "99999999999999999999");
        FormatException e3 = refused(NpyBytes.v1(
                "{'descr': '|u1', 'fortran_order': False, 'shape': (4, -1), }", new byte[0]));
        assertMessage(e3, "non-negative");
    }

    @Test
    void emptyShapesHaveNoRecords() throws IOException {
        NpyShard a = NpyShard.open(file("a.npy", NpyBytes.v1(
                "{'descr': '|u1', 'fortran_order': False, 'shape': (0,), }", new byte[0])));
        assertEquals(0, a.recordCount());
        assertEquals(1, a.recordBytes());
        NpyShard b = NpyShard.open(file("b.npy", NpyBytes.v1(
                "{'descr': '|u1', 'fortran_order': False, 'shape': (0, 28, 28), }", new byte[0])));
        assertEquals(0, b.recordCount());
        assertEquals(784, b.recordBytes());
        assertEquals(new RecordExtent(128, 0), b.extent(0, 0));
        IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, () -> b.extent(0, 1));
        assertTrue(e.getMessage().contains(b.file().toString()), e.getMessage());
    }

    @Test
    void extentBoundsChecked() throws IOException {
        NpyShard s = NpyShard.open(file("s.npy", NpyBytes.v1(DICT_3x4, new byte[48])));
        assertEquals(new RecordExtent(128 + 32, 16), s.extent(2, 1));
        for (long[] bad : new long[][] {{-1, 1}, {0, 4}, {3, 1}, {4, 0}, {1, -1}, {1, Long.MAX_VALUE},
            {Long.MAX_VALUE, 1}}) {
            IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class,
                    () -> s.extent(bad[0], bad[1]));
            assertTrue(e.getMessage().contains(s.file().toString()), e.getMessage());
            assertTrue(e.getMessage().contains("count " + bad[1]), e.getMessage());
        }
    }

    @Test
    void zeroDimensionalRefusedAsShard() throws IOException {
        FormatException e = refused(NpyBytes.v1(
                "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", new byte[8]));
        assertMessage(e, "0-d array");
    }

    @Test
    void python2LongSuffixAcceptedInVersion1Only() throws IOException {
        String dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (3L, 4L), }";
        assertEquals(3, NpyShard.open(file("py2.npy", NpyBytes.v1(dict, new byte[48]))).recordCount());
        FormatException e = refused(NpyBytes.file(3, 0, NpyBytes.padded(dict, 12, 128, true), new byte[48]));
        assertMessage(e, "'L'");
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), } garbage",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4) 'x': 1}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4),, }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3,, 4), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3 4), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4.0), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 0x4), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 04), }",
        "{'descr': '<f4', 'fortran_order': false, 'shape': (3, 4), }",
        "{'descr': '<f4', 'fortran_order': 0, 'shape': (3, 4), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': [3, 4], }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (12), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': ('3', 4), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, None), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, True), }",
        "{'descr': '<f4', 'fortran_order': False}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), 'extra': 1}",
        "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3, 4)}",
        "{'descr': <f4, 'fortran_order': False, 'shape': (3, 4), }",
        "{'descr': '<f4, 'fortran_order': False, 'shape': (3, 4), }",
        "{'descr': '<f4\\q', 'fortran_order': False, 'shape': (3, 4), }",
        "{descr: '<f4', 'fortran_order': False, 'shape': (3, 4), }",
        "{'descr' '<f4', 'fortran_order': False, 'shape': (3, 4), }",
        "{3: '<f4', 'fortran_order': False, 'shape': (3, 4), }",
        "('descr', '<f4')",
        "",
        "{'descr': 7, 'fortran_order': False, 'shape': (3, 4), }",
        "{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': False, 'shape': (3, 4), }",
        "{'descr': '|O', 'fortran_order': False, 'shape': (3, 4), }",
        "{'descr': '<U8', 'fortran_order': False, 'shape': (3, 4), }",
    })
    void malformedDictsRefused(String dict) throws IOException {
        FormatException e = refused(NpyBytes.v1(dict, new byte[48]));
        assertTrue(e.offset() >= 10 && e.offset() < 128 + 48, e.getMessage());
    }

    @Test
    void refusalsNameTheProblem() throws IOException {
        assertMessage(refused(NpyBytes.v1(
                "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }", new byte[12])),
                "structured dtype");
        assertMessage(refused(NpyBytes.v1(
                "{'descr': '|O', 'fortran_order': False, 'shape': (3,), }", new byte[24])),
                "object dtype '|O'");
        assertMessage(refused(NpyBytes.v1(
                "{'descr': '<f4', 'fortran_order': False}", new byte[0])), "no key [shape]");
        assertMessage(refused(NpyBytes.v1(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), 'extra': 1}", new byte[48])),
                "key 'extra'");
        assertMessage(refused(NpyBytes.v1(
                "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3, 4)}", new byte[48])),
                "key 'descr' twice");
        assertMessage(refused(NpyBytes.v1(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (12), }", new byte[48])),
                "expected a shape tuple, found int 12");
    }

    @Test
    void escapesInStringsAreDecoded() throws IOException {
        String dict = "{'d\\x65scr': \"<f\\u0034\", 'fortran_order': False, 'shape': (3, 4), }";
        assertEquals(DType.FLOAT32, NpyShard.open(file("esc.npy", NpyBytes.v1(dict, new byte[48]))).dtype());
    }

    @Test
    void headerMustEndWithNewline() throws IOException {
        byte[] bytes = NpyBytes.v1(DICT_3x4, new byte[48]);
        bytes[127] = ' ';
        FormatException e = refused(bytes);
        assertMessage(e, "'\\n' ending the header");
        assertEquals(127, e.offset());
    }

    @Test
    void deepNestingRefusedWithoutStackOverflow() throws IOException {
        String dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + "(".repeat(60_000) + "}";
        byte[] header = NpyBytes.padded(dict, 12, 60_160, false);
        FormatException e = refused(NpyBytes.file(2, 0, header, new byte[0]));
        assertMessage(e, "nested at most");
    }

    @Test
    void headerLengthPastEndOfFileRefused() throws IOException {
        byte[] bytes = NpyBytes.v1(DICT_3x4, new byte[0]);
        bytes[8] = (byte) 0xFF;
        bytes[9] = (byte) 0xFF;
        FormatException e = refused(bytes);
        assertMessage(e, "a header of 65535 bytes", "only 128 bytes");
        byte[] v2 = NpyBytes.file(2, 0, NpyBytes.padded(DICT_3x4, 12, 128, false), new byte[48]);
        v2[11] = (byte) 0x7F; // header length ~2 GiB: refused before allocating
        assertMessage(refused(v2), "header length of at most");
    }

    @Test
    void headerEqualityAndCopies() throws IOException {
        Path f = file("eq.npy", NpyBytes.v1(DICT_3x4, new byte[48]));
        NpyHeader a = NpyHeader.parse(f);
        NpyHeader b = new NpyHeader(1, 0, DType.FLOAT32, false, new long[] {3, 4}, 128);
        assertEquals(b, a);
        assertEquals(b.hashCode(), a.hashCode());
        assertEquals(48, a.dataBytes());
        long[] s = a.shape();
        s[0] = 99;
        assertEquals(3, a.shape()[0], "shape is copied");
        assertThrows(IllegalArgumentException.class,
                () -> new NpyHeader(4, 0, DType.FLOAT32, false, new long[] {1}, 128));
        assertTrue(Files.exists(f));
    }
}
