package dev.gdsloader.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class FormatExceptionTest {

    @Test
    void expectedFoundMessage() {
        Path file = Path.of("/data/a.npy");
        FormatException e = new FormatException(file, 42, "\\x93NUMPY magic", "'PK\\x03\\x04'");
        assertEquals("/data/a.npy: at byte offset 42: expected \\x93NUMPY magic, found 'PK\\x03\\x04'",
                e.getMessage());
        assertEquals(file, e.file());
        assertEquals(42, e.offset());
        assertInstanceOf(IOException.class, e);
    }

    @Test
    void freeFormMessageAndCause() {
        Throwable cause = new IOException("boom");
        FormatException e = new FormatException(null, 7, "something odd", cause);
        assertEquals("<unknown file>: at byte offset 7: something odd", e.getMessage());
        assertNull(e.file());
        assertSame(cause, e.getCause());
        FormatException e2 = new FormatException(Path.of("f"), 1, "a", "b", cause);
        assertEquals("f: at byte offset 1: expected a, found b", e2.getMessage());
        assertSame(cause, e2.getCause());
    }

    @Test
    void recordExtentValidates() {
        RecordExtent x = new RecordExtent(10, 5);
        assertEquals(15, x.end());
        new RecordExtent(0, 0);
        assertThrows(IllegalArgumentException.class, () -> new RecordExtent(-1, 5));
        assertThrows(IllegalArgumentException.class, () -> new RecordExtent(0, -5));
        assertThrows(IllegalArgumentException.class, () -> new RecordExtent(Long.MAX_VALUE, 1));
    }
}
