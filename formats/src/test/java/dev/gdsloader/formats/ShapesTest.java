package dev.gdsloader.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class ShapesTest {

    @Test
    void byteSizes() throws FormatException {
        assertEquals(4, Shapes.byteSize(new long[0], 4));
        assertEquals(47040000, Shapes.byteSize(new long[] {60000, 28, 28}, 1));
        assertEquals(0, Shapes.byteSize(new long[] {0, 28, 28}, 8));
        assertEquals(96, Shapes.byteSize(new long[] {2, 3, 4}, 4, Path.of("f"), 0));
    }

    @Test
    void overflowIsReported() {
        long[] big = {Long.MAX_VALUE, 2};
        FormatException e = assertThrows(FormatException.class,
                () -> Shapes.byteSize(big, 1, Path.of("f"), 9));
        assertTrue(e.getMessage().contains("(9223372036854775807, 2)"), e.getMessage());
        assertEquals(9, e.offset());
        assertThrows(IllegalArgumentException.class, () -> Shapes.byteSize(big, 1));
        // A zero dimension does not hide an overflowing record size.
        assertThrows(IllegalArgumentException.class,
                () -> Shapes.byteSize(new long[] {0, 1L << 62, 4}, 4));
        assertThrows(IllegalArgumentException.class, () -> Shapes.byteSize(new long[] {3, -1}, 1));
        assertThrows(FormatException.class, () -> Shapes.byteSize(new long[] {-3}, 1, null, 0));
    }

    @Test
    void formatting() {
        assertEquals("()", Shapes.toPythonTuple(new long[0]));
        assertEquals("(5,)", Shapes.toPythonTuple(new long[] {5}));
        assertEquals("(3, 4)", Shapes.toPythonTuple(new long[] {3, 4}));
        assertEquals("60000 x 784 x 1", Shapes.toProduct(new long[] {60000, 784}, 1));
        assertEquals("4", Shapes.toProduct(new long[0], 4));
    }
}
