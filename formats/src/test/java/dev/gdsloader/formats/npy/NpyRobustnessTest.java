package dev.gdsloader.formats.npy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Damaged files must give a FormatException (or a valid layout), never any other exception. */
class NpyRobustnessTest {

    @TempDir
    Path dir;

    private byte[] validFile(int major) throws IOException {
        byte[] data = new byte[3 * 4 * 4];
        Arrays.fill(data, (byte) 0x5A);
        if (major == 1) {
            Path f = dir.resolve("valid.npy");
            NpyWriter.write(f, DType.FLOAT32, new long[] {3, 4}, data);
            return Files.readAllBytes(f);
        }
        return NpyBytes.file(major, 0, NpyBytes.padded(
                "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }", 12, 128, major == 3), data);
    }

    @Test
    void everyTruncationIsAFormatException() throws IOException {
        for (int major = 1; major <= 3; major++) {
            byte[] full = validFile(major);
            assertEquals(176, full.length);
            Path f = dir.resolve("t" + major + ".npy");
            for (int len = 0; len < full.length; len++) {
                Files.write(f, Arrays.copyOf(full, len));
                int n = len;
                FormatException e = assertThrows(FormatException.class, () -> NpyShard.open(f),
                        "truncated to " + n + " bytes (version " + major + ")");
                assertTrue(e.offset() >= 0 && e.offset() <= Math.max(len, 12),
                        "offset " + e.offset() + " for length " + len + ": " + e.getMessage());
                if (len < 128) {
                    assertThrows(FormatException.class, () -> NpyHeader.parse(f));
                }
            }
            Files.write(f, full);
            assertEquals(3, NpyShard.open(f).recordCount());
        }
    }

    @Test
    void randomHeaderByteFlipsNeverThrowAnythingElse() throws IOException {
        Random random = new Random(20240611L);
        Path f = dir.resolve("flip.npy");
        int refused = 0;
        int accepted = 0;
        byte[][] bases = {validFile(1), validFile(2), validFile(3)};
        for (int iteration = 0; iteration < 2000; iteration++) {
            byte[] bytes = bases[iteration % bases.length].clone();
            int flips = 1 + random.nextInt(3);
            for (int k = 0; k < flips; k++) {
                int at = random.nextInt(128); // anywhere in the header, magic and length included
                bytes[at] = switch (random.nextInt(4)) {
                    case 0 -> (byte) random.nextInt(256);
                    case 1 -> (byte) (bytes[at] ^ (1 << random.nextInt(8)));
                    case 2 -> (byte) "{}()[],:'\" 0123456789-LTrueFalse\n\\".charAt(random.nextInt(34));
                    default -> (byte) (bytes[at] + 1);
                };
            }
            Files.write(f, bytes);
            try {
                NpyShard shard = NpyShard.open(f);
                accepted++;
                // Whatever was accepted must be self-consistent.
                assertEquals(Files.size(f), shard.dataOffset()
                        + shard.recordCount() * shard.recordBytes());
            } catch (FormatException e) {
                refused++;
                assertTrue(e.getMessage().startsWith(f + ": at byte offset "), e.getMessage());
            } catch (Throwable t) {
                fail("iteration " + iteration + ": " + t.getClass().getName() + " instead of "
                        + "FormatException", t);
            }
        }
        assertEquals(2000, refused + accepted);
        assertTrue(refused > 500, "most flips must be refused, got " + refused);
        assertTrue(accepted > 10, "flips in padding must be harmless, got " + accepted);
    }
}
