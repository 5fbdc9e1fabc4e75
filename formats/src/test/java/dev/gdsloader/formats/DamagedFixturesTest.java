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
}
