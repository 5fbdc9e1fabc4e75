package dev.gdsloader.loader.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Exact reads through the page cache by {@code pread}, and a file cut while it is open. */
class BufferedShardReaderTest {
    @TempDir
    Path dir;

    @Test
    void smallAndLargePiecesReadTheirExactBytesAndStopAtTheEnd() throws IOException {
        byte[] data = new byte[1 << 20];
        new Random(3).nextBytes(data);
        Path f = Files.write(dir.resolve("x.bin"), data);
        try (BufferedShardReader r = BufferedShardReader.open(f); Arena a = Arena.ofConfined()) {
            MemorySegment dst = a.allocate(data.length);
            for (long[] piece : new long[][] {{777, 784}, {1, (256 << 10) + 13}, {data.length - 100, 100}}) {
                int len = (int) piece[1];
                assertEquals(len, r.read(dst, 5, len, piece[0]));
                byte[] got = dst.asSlice(5, len).toArray(ValueLayout.JAVA_BYTE);
                assertArrayEquals(java.util.Arrays.copyOfRange(data, (int) piece[0], (int) piece[0] + len), got,
                        "piece at " + piece[0]);
            }
            assertEquals(40, r.read(dst, 0, 784, data.length - 40), "a read past the end stops there");
            assertEquals(0, r.read(dst, 0, 784, data.length + 4096));
            assertTrue(r.exact());
        }
    }

    /**
     * A file cut after it was opened gives short reads, never a fault: every read of the cut part returns 0 bytes, the
     * reader stays usable for what is left, and nothing kills the reading thread (issue 21, finding 8: copies out of
     * a mapping raised an asynchronous {@link InternalError} instead).
     */
    @Test
    void aFileCutAfterItWasOpenedGivesShortReadsNotAFault() throws IOException {
        byte[] data = new byte[64 << 10];
        new Random(5).nextBytes(data);
        Path f = Files.write(dir.resolve("cut.bin"), data);
        try (BufferedShardReader r = BufferedShardReader.open(f); Arena a = Arena.ofConfined()) {
            MemorySegment dst = a.allocate(data.length);
            assertEquals(784, r.read(dst, 0, 784, 32 << 10), "read before the cut");
            try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
                ch.truncate(1000);
            }
            for (int i = 0; i < 1000; i++) { // many small reads, as the hot path makes them: none faults
                assertEquals(0, r.read(dst, 0, 784, (32 << 10) + 784L * (i % 32)));
            }
            assertEquals(1000 - 600, r.read(dst, 0, 784, 600), "the part before the cut is still read");
            assertArrayEquals(java.util.Arrays.copyOfRange(data, 600, 1000), dst.asSlice(0, 400).toArray(ValueLayout.JAVA_BYTE));
        }
    }
}
