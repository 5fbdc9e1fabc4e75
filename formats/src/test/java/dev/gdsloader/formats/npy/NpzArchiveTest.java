package dev.gdsloader.formats.npy;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.HostDecodedRecords;
import dev.gdsloader.formats.RecordExtent;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.Records;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code .npz} archives written with java.util.zip from real {@code .npy} bytes (NpyWriter), stored and deflated. */
class NpzArchiveTest {
    @TempDir
    Path dir;

    static byte[] values(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * 31 + seed);
        }
        return b;
    }

    /** The bytes of a {@code .npy} file of shape {@code shape}, written by {@link NpyWriter}. */
    byte[] npy(DType dtype, long[] shape, byte[] data) throws IOException {
        Path f = Files.createTempFile(dir, "m", ".npy");
        NpyWriter.write(f, dtype, shape, data);
        return Files.readAllBytes(f);
    }

    /** Writes a zip of the members, each stored (method 0) or deflated (8) as {@code deflate} says. */
    static Path zip(Path file, Map<String, byte[]> members, boolean deflate) throws IOException {
        try (OutputStream out = Files.newOutputStream(file); ZipOutputStream z = new ZipOutputStream(out)) {
            for (var m : members.entrySet()) {
                ZipEntry e = new ZipEntry(m.getKey());
                if (!deflate) {
                    CRC32 crc = new CRC32();
                    crc.update(m.getValue());
                    e.setMethod(ZipEntry.STORED);
                    e.setSize(m.getValue().length);
                    e.setCompressedSize(m.getValue().length);
                    e.setCrc(crc.getValue());
                }
                z.putNextEntry(e);
                z.write(m.getValue());
                z.closeEntry();
            }
        }
        return file;
    }

    Map<String, byte[]> twoMembers() throws IOException {
        Map<String, byte[]> m = new LinkedHashMap<>();
        m.put("images.npy", npy(DType.UINT8, new long[] {10, 4, 3}, values(120, 1)));
        m.put("labels.npy", npy(DType.INT32, new long[] {10}, values(40, 2)));
        return m;
    }

    static byte[] read(Path file, RecordExtent e) throws IOException {
        ByteBuffer b = ByteBuffer.allocate((int) e.length());
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            while (b.hasRemaining() && ch.read(b, e.offset() + b.position()) >= 0) {
                // read on
            }
        }
        return b.array();
    }

    @Test
    void storedMembersAreReadInPlace() throws IOException {
        Path f = zip(dir.resolve("a.npz"), twoMembers(), false);
        NpzArchive a = NpzArchive.open(f);
        assertEquals(java.util.List.of("images", "labels"), a.columns());
        RecordLayout images = assertInstanceOf(Records.class, a.records("images"));
        assertEquals(10, images.recordCount());
        assertArrayEquals(new long[] {4, 3}, images.recordShape());
        assertEquals(DType.UINT8, images.dtype());
        assertArrayEquals(values(120, 1), read(f, images.extent(0, 10)));
        assertArrayEquals(Arrays.copyOfRange(values(120, 1), 36, 60), read(f, images.extent(3, 2)));
        RecordLayout labels = a.records("labels");
        assertEquals(DType.INT32, labels.dtype());
        assertArrayEquals(values(40, 2), read(f, labels.extent(0, 10)));
        NpzArchive.Member m = a.members().get(0);
        assertEquals(0, m.method());
        assertEquals(m.dataOffset() + m.header().dataOffset(), images.dataOffset());
    }

    @Test
    void deflatedMembersAreDecodedOnTheHost() throws IOException {
        Path f = zip(dir.resolve("a.npz"), twoMembers(), true);
        NpzArchive a = NpzArchive.open(f);
        HostDecodedRecords images = assertInstanceOf(HostDecodedRecords.class, a.records("images"));
        assertEquals(8, a.members().get(0).method());
        assertArrayEquals(new long[] {4, 3}, images.recordShape());
        assertArrayEquals(values(120, 1), images.decode());
        assertArrayEquals(values(40, 2), ((HostDecodedRecords) a.records("labels")).decode());
        assertEquals("HOST-DECODE: " + f + " member 'images.npy' is deflated; decoded on the host", images.decodeReason());
    }

    @Test
    void aTruncatedArchiveIsAFormatError() throws IOException {
        Path f = zip(dir.resolve("a.npz"), twoMembers(), false);
        byte[] all = Files.readAllBytes(f);
        Files.write(f, Arrays.copyOf(all, all.length - 30));
        FormatException e = assertThrows(FormatException.class, () -> NpzArchive.open(f));
        assertEquals(f, e.file());
        assertEquals(all.length - 30, e.offset());
        assertTrue(e.getMessage().contains("a ZIP archive of .npy members (.npz)"), e.getMessage());
    }

    @Test
    void aMemberThatIsNotNpyIsRefusedByName() throws IOException {
        Map<String, byte[]> m = twoMembers();
        m.put("notes.txt", "hello".getBytes(UTF_8));
        Path f = zip(dir.resolve("a.npz"), m, false);
        FormatException e = assertThrows(FormatException.class, () -> NpzArchive.open(f));
        assertTrue(e.getMessage().contains("expected members named <column>.npy, found member 'notes.txt'"), e.getMessage());
    }

    @Test
    void aNpyMemberWithBadBytesNamesMemberAndAbsoluteOffset() throws IOException {
        Map<String, byte[]> m = new LinkedHashMap<>();
        m.put("x.npy", "not a numpy file at all".getBytes(UTF_8));
        Path f = zip(dir.resolve("a.npz"), m, false);
        FormatException e = assertThrows(FormatException.class, () -> NpzArchive.open(f));
        assertTrue(e.getMessage().contains("member 'x.npy'") && e.getMessage().contains("NUMPY magic"), e.getMessage());
        assertEquals(30 + "x.npy".length(), e.offset()); // the member's data, right after its local file header
    }

    @Test
    void aHeaderThatLiesAboutSizeIsRefusedStoredOrDeflated() throws IOException {
        for (boolean deflate : new boolean[] {false, true}) {
            byte[] good = npy(DType.FLOAT32, new long[] {10, 2}, values(80, 3));
            Map<String, byte[]> m = new LinkedHashMap<>();
            m.put("x.npy", Arrays.copyOf(good, good.length - 8)); // the header says 80 data bytes, the member has 72
            Path f = zip(dir.resolve("lie" + deflate + ".npz"), m, deflate);
            FormatException e = assertThrows(FormatException.class, () -> NpzArchive.open(f));
            assertTrue(e.getMessage().contains("member 'x.npy': " + good.length + " bytes (header "), e.getMessage());
            assertTrue(e.getMessage().endsWith("found a member of " + (good.length - 8) + " bytes"), e.getMessage());
        }
    }
}
