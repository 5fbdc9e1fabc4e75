package dev.gdsloader.service.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.io.IOException;
import java.io.UncheckedIOException;
import org.junit.jupiter.api.Test;



/** The server's console line for a failed stream: the failure and what its causes add, on one line. */
class ErrorsTest {
    @Test
    void aFailureAndItsCausesAreOneLineWithoutRepeats() {
        IOException io = new IOException("data-00003.npy: short read: 872 bytes at offset 128\nwhere 150528 were expected");
        UncheckedIOException u = new UncheckedIOException("batch 81 of epoch 0", io);
        String line = Errors.oneLine(u);
        assertEquals("java.io.UncheckedIOException: batch 81 of epoch 0: data-00003.npy: short read: 872 bytes at offset 128 "
                + "where 150528 were expected", line);
        assertFalse(line.contains("\n"));
        UncheckedIOException same = new UncheckedIOException(io); // its message is the cause's toString: not repeated
        assertEquals(same.toString().replace('\n', ' '), Errors.oneLine(same));
    }
}
