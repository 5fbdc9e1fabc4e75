package dev.gdsloader.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

class DTypeTest {

    private static final Path FILE = Path.of("x.npy");

    @Test
    void itemSizesAndDescrsMatchNumpy() {
        String[] descrs = {"|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2",
            "<f4", "<f8"};
        int[] sizes = {1, 1, 1, 2, 2, 4, 4, 8, 8, 2, 4, 8};
        DType[] all = java.util.Arrays.stream(DType.values()).filter(DType::hasNumpyDescr)
                .toArray(DType[]::new);
        assertEquals(12, all.length);
        for (int i = 0; i < all.length; i++) {
            assertEquals(descrs[i], all[i].numpyDescr(), all[i].name());
            assertEquals(sizes[i], all[i].itemSize(), all[i].name());
        }
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, mode = EnumSource.Mode.EXCLUDE,
            names = {"BFLOAT16", "FLOAT8_E4M3", "FLOAT8_E5M2"})
    void descrRoundTrips(DType t) throws FormatException {
        assertEquals(t, DType.fromNumpyDescr(t.numpyDescr(), FILE, 0));
        String body = t.numpyDescr().substring(1);
        assertEquals(t, DType.fromNumpyDescr("=" + body, FILE, 0), "native '=' is little-endian");
        assertEquals(t, DType.fromNumpyDescr("<" + body, FILE, 0));
        assertEquals(t, DType.fromNumpyDescr("|" + body, FILE, 0));
    }

    @ParameterizedTest
    @CsvSource({">u1,UINT8", ">i1,INT8", ">b1,BOOL", "<u1,UINT8", "=b1,BOOL"})
    void singleByteTypesAcceptAnyByteOrder(String descr, DType expected) throws FormatException {
        assertEquals(expected, DType.fromNumpyDescr(descr, FILE, 0));
    }

    @Test
    void bigEndianRefusedByName() {
        FormatException e = assertThrows(FormatException.class,
                () -> DType.fromNumpyDescr(">f4", FILE, 17));
        assertTrue(e.getMessage().contains(
                "big-endian dtype '>f4' is not supported: convert with arr.astype('<f4')"),
                e.getMessage());
        assertEquals(17, e.offset());
        assertEquals(FILE, e.file());
        FormatException e2 = assertThrows(FormatException.class,
                () -> DType.fromNumpyDescr(">i8", FILE, 0));
        assertTrue(e2.getMessage().contains("arr.astype('<i8')"), e2.getMessage());
    }

    @ParameterizedTest
    @CsvSource(delimiter = ';', quoteCharacter = '"', value = {
        "|O;object dtype",
        "|O8;object dtype",
        "|S10;byte-string dtype",
        "<U5;unicode string dtype",
        ">U5;unicode string dtype",
        "|V16;void",
        "<c8;complex dtype",
        "<M8[ns];datetime64 dtype",
        "<m8[s];timedelta64 dtype",
        "[('a', '<f4')];structured dtype",
        "<f16;unknown dtype '<f16'",
        "<i3;unknown dtype '<i3'",
        "float32;unknown dtype 'float32'",
        "\"\";unknown dtype ''"})
    void unsupportedKindsRefusedByName(String descr, String expectedText) {
        FormatException e = assertThrows(FormatException.class,
                () -> DType.fromNumpyDescr(descr, FILE, 0));
        assertTrue(e.getMessage().contains(expectedText), e.getMessage());
        assertTrue(e.getMessage().contains("'" + descr + "'"), e.getMessage());
    }

    @Test
    void nullDescrRefused() {
        assertThrows(FormatException.class, () -> DType.fromNumpyDescr(null, FILE, 0));
    }
}
