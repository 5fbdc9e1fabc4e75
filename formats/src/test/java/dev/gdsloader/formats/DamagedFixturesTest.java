package dev.gdsloader.formats;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.fixtures.RealWriterFixtures;
import dev.gdsloader.formats.npy.NpzArchive;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Copies of the real-writer fixtures (numpy, pyarrow), damaged the way a fresh user's fuzzing damaged them (one bit
 * flipped, the file cut short), and what the readers say about them: one line naming the file, the offset and what
 * was expected.
 */
class DamagedFixturesTest {
    @TempDir
    Path dir;

    private Path fixture(String name) {
        return RealWriterFixtures.directory().resolve(name);
    }

    /** A copy of a fixture with bit 0 of byte {@code at} flipped. */
    private Path flipped(String name, int at) throws IOException {
        byte[] b = Files.readAllBytes(fixture(name));
        b[at] ^= 1;
        Path f = dir.resolve("flip" + at + "-" + name);
        Files.write(f, b);
        return f;
    }

    /** A copy of a fixture's first {@code n} bytes. */
    private Path truncated(String name, int n) throws IOException {
        byte[] b = Files.readAllBytes(fixture(name));
        Path f = dir.resolve("trunc" + n + "-" + name);
        Files.write(f, Arrays.copyOf(b, n));
        return f;
    }

    @Test
    void aDeflatedNpzMemberWhoseCrcDoesNotMatchIsRefusedNamingBothCrcs() throws IOException {
        // byte 230 lies in the deflate stream of images.npy (local header at 0, 359 compressed bytes); the stream
        // still inflates, to the wrong bytes: numpy says "BadZipFile: Bad CRC-32 for file 'images.npy'"
        Path f = flipped("npz-deflated.npz", 230);
        RecordLayout images = NpzArchive.open(f).records("images");
        HostDecodedRecords h = assertInstanceOf(HostDecodedRecords.class, images);
        FormatException e = assertThrows(FormatException.class, h::decode);
        assertEquals(f, e.file());
        assertTrue(e.getMessage().contains("member 'images.npy'") && e.getMessage().contains("CRC-32 0x5fc422d1")
                && e.getMessage().contains("found CRC-32 0x"), e.getMessage());
        // the undamaged fixture still decodes
        assertEquals(2480 - 128, ((HostDecodedRecords) NpzArchive.open(fixture("npz-deflated.npz")).records("images"))
                .decode().length);
    }

    @Test
    void aTruncatedNpzSaysNoEndOfCentralDirectoryRecordAtTheEndOfTheFileNotTheLibrarysWording() throws IOException {
        Path f = truncated("npz-deflated.npz", 342);
        FormatException e = assertThrows(FormatException.class, () -> NpzArchive.open(f));
        assertEquals(f + ": at byte offset 342: expected a ZIP archive of .npy members (.npz): an end-of-central-directory"
                + " record (PK\\x05\\x06) in its last 342 bytes, found none in a file of 342 bytes: not a ZIP archive, or"
                + " cut short", e.getMessage());
    }

    @Test
    void anEmptyNpzSaysNoEndOfCentralDirectoryRecord() throws IOException {
        Path f = truncated("npz-stored.npz", 0);
        FormatException e = assertThrows(FormatException.class, () -> NpzArchive.open(f));
        assertTrue(e.getMessage().startsWith(f + ": at byte offset 0: expected a ZIP archive of .npy members (.npz): an"
                + " end-of-central-directory record"), e.getMessage());
        assertTrue(!e.getMessage().contains("Archive is not a ZIP archive"), e.getMessage());
    }

    @Test
    void aDamagedCentralDirectoryNamesItsOffsetNotTheLibrarysErrorReadingZipContent() throws IOException {
        // byte 583 lies in the central directory entry of images.npy (central directory at 550, 112 bytes;
        // end-of-central-directory record at 662): commons-compress said "Error reading Zip content from <file>"
        byte[] b = Files.readAllBytes(fixture("npz-deflated.npz"));
        b[583] = (byte) 0x80; // high byte of the entry's file comment length: 32768 bytes, past the end
        Path f = dir.resolve("cd584-npz-deflated.npz");
        Files.write(f, b);
        FormatException e = assertThrows(FormatException.class, () -> NpzArchive.open(f));
        assertEquals(550, e.offset());
        assertEquals(f + ": at byte offset 550: expected a ZIP archive of .npy members (.npz): a central directory of 112"
                + " bytes at offset 550 (as the end-of-central-directory record at offset 662 says), found one that does"
                + " not parse (it runs past its end)", e.getMessage());
    }
}
