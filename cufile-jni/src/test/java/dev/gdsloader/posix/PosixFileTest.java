package dev.gdsloader.posix;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link PosixFile} against real files: O_DIRECT and buffered reads, errors, writes, close. */
class PosixFileTest {
    private static final int BLOCK = PosixFile.DIRECT_ALIGNMENT;
    /** 3 full blocks and a 100-byte tail: a short read at end of file. */
    private static final int FILE_BYTES = 3 * BLOCK + 100;

    @TempDir
    Path dir;

    private Path randomFile(String name, int bytes, long seed) throws IOException {
        byte[] data = new byte[bytes];
        new Random(seed).nextBytes(data);
        return Files.write(dir.resolve(name), data);
    }

    private static byte[] bytes(MemorySegment s, long n) {
        return s.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE);
    }

    @Test
    void directReadOfWholeFileReturnsExactlyTheBytesPresentAtEof() throws IOException {
        Path f = randomFile("a.bin", FILE_BYTES, 1);
        byte[] want = Files.readAllBytes(f);
        try (PosixFile pf = PosixFile.openForRead(f, true); AlignedMemory mem = new AlignedMemory(4L * BLOCK)) {
            assumeTrue(pf.isDirect(), () -> "the filesystem of " + dir + " refuses O_DIRECT: " + pf.openMode());
            assertEquals("O_DIRECT", pf.openMode());
            long n = pf.read(mem.segment(), 0);
            assertEquals(FILE_BYTES, n, "short read at end of file returns the bytes present");
            assertArrayEquals(want, bytes(mem.segment(), n));
        }
    }

    @Test
    void directReadsAtBlockOffsetsReturnTheBytesAtThoseOffsets() throws IOException {
        Path f = randomFile("b.bin", FILE_BYTES, 2);
        byte[] want = Files.readAllBytes(f);
        try (PosixFile pf = PosixFile.openForRead(f, true); AlignedMemory mem = new AlignedMemory(BLOCK)) {
            assumeTrue(pf.isDirect(), () -> "the filesystem of " + dir + " refuses O_DIRECT: " + pf.openMode());
            for (int block = 0; block < 3; block++) {
                long off = (long) block * BLOCK;
                assertEquals(BLOCK, pf.read(mem.segment(), off), "block " + block);
                assertArrayEquals(Arrays.copyOfRange(want, (int) off, (int) off + BLOCK), bytes(mem.segment(), BLOCK),
                        "block " + block);
            }
            assertEquals(100, pf.read(mem.segment(), 3L * BLOCK), "the last block holds the 100-byte tail");
            assertArrayEquals(Arrays.copyOfRange(want, 3 * BLOCK, FILE_BYTES), bytes(mem.segment(), 100));
            assertEquals(0, pf.read(mem.segment(), 4L * BLOCK), "a read wholly past end of file returns 0");
        }
    }

    @Test
    void bufferedReadsAtUnalignedOffsetsReturnTheBytesAtThoseOffsets() throws IOException {
        Path f = randomFile("c.bin", FILE_BYTES, 3);
        byte[] want = Files.readAllBytes(f);
        try (PosixFile pf = PosixFile.openForRead(f, false); AlignedMemory mem = new AlignedMemory(2 * BLOCK)) {
            assertFalse(pf.isDirect());
            assertTrue(pf.openMode().contains("buffered"), pf.openMode());
            for (long off : new long[] {0, 1, 777, BLOCK - 1, 2L * BLOCK + 13}) {
                MemorySegment dst = mem.segment().asSlice(3, 1000);
                assertEquals(1000, pf.read(dst, off), "offset " + off);
                assertArrayEquals(Arrays.copyOfRange(want, (int) off, (int) off + 1000),
                        dst.toArray(ValueLayout.JAVA_BYTE), "offset " + off);
            }
            MemorySegment dst = mem.segment().asSlice(0, 500);
            assertEquals(FILE_BYTES - (FILE_BYTES - 40), pf.read(dst, FILE_BYTES - 40), "40 bytes left before end of file");
        }
    }

    @Test
    void pathAndDescriptorAreReported() throws IOException {
        Path f = randomFile("d.bin", 10, 4);
        try (PosixFile pf = PosixFile.openForRead(f, false)) {
            assertEquals(f, pf.path());
            assertTrue(pf.fd() >= 0, "fd " + pf.fd());
        }
    }

    @Test
    void openingAMissingFileNamesThePathAndEnoent() {
        Path missing = dir.resolve("no-such-shard.npy");
        for (boolean direct : new boolean[] {true, false}) {
            IOException e = assertThrows(IOException.class, () -> PosixFile.openForRead(missing, direct));
            assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
            assertTrue(e.getMessage().contains("ENOENT"), e.getMessage());
            PosixFile.ErrnoException ee = assertInstanceOf(PosixFile.ErrnoException.class, e);
            assertEquals(2, ee.errno());
        }
    }

    @Test
    void directOpenOnTmpfsFallsBackToBufferedAndSaysWhy() throws IOException {
        Path shm = Path.of("/dev/shm");
        assumeTrue(Files.isDirectory(shm) && Files.isWritable(shm), "no writable /dev/shm");
        Path f = Files.createTempFile(shm, "gdsloader-posix-test-", ".bin");
        try {
            byte[] data = new byte[BLOCK + 10];
            new Random(5).nextBytes(data);
            Files.write(f, data);
            try (PosixFile pf = PosixFile.openForRead(f, true); AlignedMemory mem = new AlignedMemory(2 * BLOCK)) {
                assumeTrue(!pf.isDirect(), "/dev/shm took O_DIRECT here (not tmpfs?)");
                assertTrue(pf.openMode().contains("EINVAL"), pf.openMode());
                assertTrue(pf.openMode().contains("buffered"), pf.openMode());
                assertEquals(data.length, pf.read(mem.segment(), 0));
                assertArrayEquals(data, bytes(mem.segment(), data.length));
            }
        } finally {
            Files.deleteIfExists(f);
        }
    }

    @Test
    void unalignedDirectReadFailsNamingEinvalFileAndOffset() throws IOException {
        Path f = randomFile("e.bin", 2 * BLOCK, 6);
        try (PosixFile pf = PosixFile.openForRead(f, true); AlignedMemory mem = new AlignedMemory(BLOCK)) {
            assumeTrue(pf.isDirect(), () -> "the filesystem of " + dir + " refuses O_DIRECT: " + pf.openMode());
            IOException e = assertThrows(IOException.class, () -> pf.read(mem.segment(), 1));
            String m = e.getMessage();
            assertTrue(m.contains("EINVAL"), m);
            assertTrue(m.contains(f.toString()), m);
            assertTrue(m.contains("offset 1 "), m);
            assertTrue(m.contains("4096-byte aligned"), m);
            assertEquals(Errno.EINVAL, assertInstanceOf(PosixFile.ErrnoException.class, e).errno());
        }
    }

    @Test
    void negativeOffsetIsRejectedNamingTheFile() throws IOException {
        Path f = randomFile("neg.bin", 10, 7);
        try (PosixFile pf = PosixFile.openForRead(f, false); AlignedMemory mem = new AlignedMemory(BLOCK)) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> pf.read(mem.segment(), -1));
            assertTrue(e.getMessage().contains(f.toString()), e.getMessage());
        }
    }

    @Test
    void closingTwiceIsHarmlessAndReadAfterCloseFailsNamingTheFile() throws IOException {
        Path f = randomFile("close.bin", BLOCK, 11);
        PosixFile pf = PosixFile.openForRead(f, true);
        pf.close();
        assertDoesNotThrow(pf::close);
        try (AlignedMemory mem = new AlignedMemory(BLOCK)) {
            IOException e = assertThrows(IOException.class, () -> pf.read(mem.segment(), 0));
            assertTrue(e.getMessage().contains(f.toString()), e.getMessage());
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
        }
    }

    @Test
    void errnoNamesKnownValuesAndNumbersUnknownOnes() {
        assertEquals("EINVAL (22)", Errno.describe(Errno.EINVAL));
        assertEquals("ENOENT (2)", Errno.describe(2));
        assertEquals("EIO (5)", Errno.describe(Errno.EIO));
        assertEquals("errno 999", Errno.describe(999));
    }
}
