package dev.gdsloader.loader.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.posix.MappedFaults;
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
     * A file cut under its mapping: a copy of the cut part faults, and the {@link InternalError} HotSpot makes of it
     * is raised no later than {@link MappedFaults#settle()} (inside the copy when interpreted; at the thread's next
     * poll or native return when the copy is JIT-compiled), so a {@code try} that ends with it catches it;
     * {@link BufferedShardReader#sizeNow()} then says the file shrank (what {@link StagedReads} names in its
     * {@link IOException}; issue 21, finding 8).
     */
    @Test
    void aFileCutUnderItsMappingFaultsNoLaterThanSettleAndTellsItsSizeNow() throws IOException {
        byte[] data = new byte[64 << 10];
        new Random(5).nextBytes(data);
        Path f = Files.write(dir.resolve("cut.bin"), data);
        try (BufferedShardReader r = BufferedShardReader.open(f); Arena a = Arena.ofConfined()) {
            MemorySegment dst = a.allocate(data.length);
            assertEquals(784, r.read(dst, 0, 784, 32 << 10), "read before the cut");
            assertEquals(data.length, r.sizeNow());
            try (FileChannel ch = FileChannel.open(f, StandardOpenOption.WRITE)) {
                ch.truncate(1000);
            }
            InternalError fault = null;
            try {
                r.read(dst, 0, 784, 32 << 10);
                MappedFaults.settle();
            } catch (InternalError e) {
                fault = e;
            }
            assertTrue(fault != null && fault.getMessage().contains("unsafe memory access"), String.valueOf(fault));
            assertEquals(1000, r.sizeNow());
            assertEquals(400, r.read(dst, 0, 400, 600), "the part before the cut is still read");
            assertArrayEquals(java.util.Arrays.copyOfRange(data, 600, 1000), dst.asSlice(0, 400).toArray(ValueLayout.JAVA_BYTE));
        }
    }
}
