package dev.gdsloader.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The safetensors names of DType and the types NumPy does not have. */
class DTypeSafetensorsTest {

    private static final Path FILE = Path.of("m.safetensors");
    private static final Set<DType> NOT_NUMPY =
            EnumSet.of(DType.BFLOAT16, DType.FLOAT8_E4M3, DType.FLOAT8_E5M2);

    @Test
    void namesAndSizesMatchTheSafetensorsSpec() {
        String[][] expected = {
            {"FLOAT64", "F64", "8"}, {"FLOAT32", "F32", "4"}, {"FLOAT16", "F16", "2"},
            {"BFLOAT16", "BF16", "2"}, {"FLOAT8_E4M3", "F8_E4M3", "1"},
            {"FLOAT8_E5M2", "F8_E5M2", "1"}, {"INT64", "I64", "8"}, {"INT32", "I32", "4"},
            {"INT16", "I16", "2"}, {"INT8", "I8", "1"}, {"UINT64", "U64", "8"},
            {"UINT32", "U32", "4"}, {"UINT16", "U16", "2"}, {"UINT8", "U8", "1"},
            {"BOOL", "BOOL", "1"}};
        assertEquals(expected.length, DType.values().length);
        for (String[] row : expected) {
            DType t = DType.valueOf(row[0]);
            assertEquals(row[1], t.safetensorsName(), row[0]);
            assertEquals(Integer.parseInt(row[2]), t.itemSize(), row[0]);
        }
    }

    @ParameterizedTest
    @EnumSource(DType.class)
    void safetensorsNameRoundTrips(DType t) throws FormatException {
        assertEquals(t, DType.fromSafetensorsName(t.safetensorsName(), FILE, 0));
        assertEquals(!NOT_NUMPY.contains(t), t.hasNumpyDescr());
    }

    @ParameterizedTest
    @ValueSource(strings = {"f32", "F128", "C64", "F8_E8M0", "F4", "bf16", "", " F32", "float32"})
    void unknownSafetensorsNamesRefused(String name) {
        FormatException e = assertThrows(FormatException.class,
                () -> DType.fromSafetensorsName(name, FILE, 42));
        assertTrue(e.getMessage().contains("unknown dtype '" + name + "'"), e.getMessage());
        assertTrue(e.getMessage().contains("BF16, F8_E4M3, F8_E5M2"), e.getMessage());
        assertEquals(42, e.offset());
        assertEquals(FILE, e.file());
        assertThrows(FormatException.class, () -> DType.fromSafetensorsName(null, FILE, 0));
    }

    @ParameterizedTest
    @EnumSource(value = DType.class, names = {"BFLOAT16", "FLOAT8_E4M3", "FLOAT8_E5M2"})
    void typesWithoutNumpyDescrRefuseIt(DType t) {
        UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class,
                t::numpyDescr);
        assertTrue(e.getMessage().contains(t.name()), e.getMessage());
        assertFalse(t.hasNumpyDescr());
    }

    @Test
    @SuppressWarnings("LoopOverCharArray") // 4 x 13 characters: the plainer loop
    void fromNumpyDescrNeverReturnsTheNewTypes() {
        String orders = "<>|=";
        String kinds = "biufcVSUOMmx\0";
        for (char order : orders.toCharArray()) {
            for (char kind : kinds.toCharArray()) {
                for (int size = 0; size <= 16; size++) {
                    String descr = order + "" + kind + size;
                    try {
                        DType t = DType.fromNumpyDescr(descr, FILE, 0);
                        assertFalse(NOT_NUMPY.contains(t), descr + " gave " + t);
                        assertEquals(t.numpyDescr().substring(1), descr.substring(1));
                    } catch (FormatException expected) {
                        // refused: fine
                    }
                }
            }
        }
        for (String descr : new String[] {"bf16", "<bf2", "BF16", "F8_E4M3", "<f1", "|f1"}) {
            assertThrows(FormatException.class, () -> DType.fromNumpyDescr(descr, FILE, 0), descr);
        }
    }

    @Test
    void numpySupportedListOmitsTheNewTypes() {
        FormatException e = assertThrows(FormatException.class,
                () -> DType.fromNumpyDescr("<f16", FILE, 0));
        assertTrue(e.getMessage().contains("'<f8'"), e.getMessage());
        assertFalse(e.getMessage().contains("BFLOAT16"), e.getMessage());
        assertNotEquals(-1, e.getMessage().indexOf("'|b1'"));
    }
}
