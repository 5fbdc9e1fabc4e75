package dev.gdsloader.formats.npy;

import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.HostDecodedRecords;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code .npz} archives a new user (or an attacker) can make that numpy reads differently or that would inflate
 * without bound (issue 21, finding 10): two members of one name, a member whose deflate stream inflates far past its
 * declared size, a member declaring more than deflate can give. Real archives written with java.util.zip from real
 * {@code .npy} bytes, then patched where the ZIP format puts the names and sizes (PKWARE APPNOTE.TXT 4.3.7, 4.3.12).
 */
class NpzHostileArchivesTest {
    private static final int CD_SIGNATURE = 0x02014b50;

    @TempDir
    Path dir;

    private byte[] npy(long[] shape, byte[] data) throws IOException {
        Path f = Files.createTempFile(dir, "m", ".npy");
        NpyWriter.write(f, DType.UINT8, shape, data);
        return Files.readAllBytes(f);
    }

    @Test
    void twoMembersOfOneNameAreRefusedNamingTheMemberAndBothOffsets() throws IOException {
        Map<String, byte[]> m = new LinkedHashMap<>();
        m.put("x.npy", npy(new long[] {128, 2}, NpzArchiveTest.values(256, 1)));
        m.put("y.npy", npy(new long[] {64, 2}, NpzArchiveTest.values(128, 2)));
        for (boolean deflate : new boolean[] {false, true}) {
            Path f = NpzArchiveTest.zip(dir.resolve("dup-" + deflate + ".npz"), m, deflate);
            byte[] b = Files.readAllBytes(f);
            int renamed = replaceAll(b, "y.npy", "x.npy"); // the second member's local header and directory entry
            assertEquals(2, renamed);
            Files.write(f, b);
            long second = indexOf(b, "PK\u0003\u0004", 1);
            FormatException e = assertThrows(FormatException.class, () -> NpzArchive.open(f));
            assertEquals(second, e.offset());
            assertTrue(e.getMessage().contains(f.toString()) && e.getMessage().contains("member 'x.npy' twice: local headers "
                    + "at offsets 0 and " + second), e.getMessage());
        }
    }

    @Test
    void aMemberThatInflatesPastItsDeclaredSizeFailsAtTheFirstExtraByte() throws IOException {
        byte[] header = npy(new long[] {4, 4}, new byte[16]);
        byte[] bomb = new byte[header.length + (64 << 20)]; // 64 MiB of zeros after a header that declares 16 bytes
        System.arraycopy(header, 0, bomb, 0, header.length);
        Path f = NpzArchiveTest.zip(dir.resolve("bomb.npz"), Map.of("x.npy", bomb), true);
        byte[] b = Files.readAllBytes(f);
        // the directory says what the header says: 16 data bytes (so the archive opens as a small, honest member)
        ByteBuffer cd = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        int at = (int) indexOf(b, "PK\u0001\u0002", 0);
        assertEquals(CD_SIGNATURE, cd.getInt(at));
        cd.putInt(at + 24, header.length);
        Files.write(f, b);
        assertTrue(Files.size(f) < (1 << 20), "a small file: " + Files.size(f));
        NpzArchive a = NpzArchive.open(f);
        HostDecodedRecords r = assertInstanceOf(HostDecodedRecords.class, a.records("x"));
        // the decode fills one array of the declared 16 bytes and stops at the first byte past it
        FormatException e = assertThrows(FormatException.class, r::decode);
        assertTrue(e.getMessage().contains(f.toString()) && e.getMessage().contains("member 'x.npy'")
                && e.getMessage().contains("more bytes than the header's shape and the archive's size declare"), e.getMessage());
    }

    @Test
    void aMemberDeclaringMoreThanDeflateCanGiveIsRefusedBeforeInflating() throws IOException {
        long records = 1L << 30; // 1 GiB declared from a few hundred stored bytes
        byte[] header = NpyHeaderEncoder.encode(DType.UINT8, new long[] {records}); // the header alone, no data
        Path f = NpzArchiveTest.zip(dir.resolve("liar.npz"), Map.of("x.npy", header), true);
        byte[] b = Files.readAllBytes(f);
        ByteBuffer cd = ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN);
        int at = (int) indexOf(b, "PK\u0001\u0002", 0);
        long declared = header.length + records; // what the header's shape needs: the size check at open passes
        cd.putInt(at + 24, (int) declared);
        Files.write(f, b);
        FormatException e = assertThrows(FormatException.class, () -> NpzArchive.open(f));
        assertTrue(e.getMessage().contains(f.toString()) && e.getMessage().contains("member 'x.npy' (deflated): at most 1032 "
                + "inflated bytes per stored byte") && e.getMessage().contains("a declared size of " + declared), e.getMessage());
    }

    private static long indexOf(byte[] b, String s, int skip) {
        byte[] p = s.getBytes(US_ASCII);
        int found = 0;
        for (int i = 0; i + p.length <= b.length; i++) {
            if (java.util.Arrays.equals(b, i, i + p.length, p, 0, p.length) && found++ == skip) {
                return i;
            }
        }
        throw new AssertionError("'" + s + "' occurs fewer than " + (skip + 1) + " times");
    }

    private static int replaceAll(byte[] b, String from, String to) {
        byte[] f = from.getBytes(US_ASCII);
        byte[] t = to.getBytes(US_ASCII);
        int n = 0;
        for (int i = 0; i + f.length <= b.length; i++) {
            if (java.util.Arrays.equals(b, i, i + f.length, f, 0, f.length)) {
                System.arraycopy(t, 0, b, i, t.length);
                n++;
            }
        }
        return n;
    }
}
