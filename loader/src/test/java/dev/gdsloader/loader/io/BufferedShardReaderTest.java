package dev.gdsloader.loader.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
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

/** Exact reads through the page cache: mapped small pieces, pread large ones, and a file cut under the mapping. */
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
            for (long[] piece : new long[][] {{777, 784}, {1, BufferedShardReader.MAP_BELOW + 13}, {data.length - 100, 100}}) {
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
     * A file cut under its mapping fails the read loudly, and the JVM lives on. HotSpot raises the SIGBUS of a copy
     * out of the mapping as an {@link InternalError}: where it is delivered inside the copy, the reader names the file
     * and offset ({@link IOException}); where the VM delivers it after the copy has returned (it does so from
     * intrinsic copies, at its next safepoint poll; seen on a clean CI clone), it arrives as the JVM's own
     * {@code InternalError} right after the read. Either way nothing is read from the wrong place and nothing hangs.
     */
    @Test
    void aFileCutAfterItWasMappedFailsTheReadLoudly() throws IOException {
        Path f = Files.write(dir.resolve("cut.bin"), new byte[64 << 10]);
        try (BufferedShardReader r = BufferedShardReader.open(f); Arena a = Arena.ofConfined()) {
            try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
                ch.truncate(0);
            }
            Throwable t = assertThrows(Throwable.class, () -> r.read(a.allocate(784), 0, 784, 32 << 10));
            if (t instanceof IOException e) {
                assertTrue(e.getMessage().startsWith(f + ": 784 bytes at offset 32768 are gone"), e.getMessage());
            } else {
                assertTrue(t instanceof InternalError && t.getMessage().contains("unsafe memory access"), t.toString());
            }
        }
    }
}
