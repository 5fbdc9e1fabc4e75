package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code gdsloader inspect} on {@code .npz} archives: members, methods and extents; non-zero exit with the error on a damaged archive. */
class InspectCompressedTest {
    @TempDir
    Path dir;

    Path npz(String name) throws IOException {
        Path npy = dir.resolve("m.npy");
        NpyWriter.write(npy, DType.UINT8, new long[] {6, 4}, new byte[24]);
        Path archive = dir.resolve(name);
        try (ZipOutputStream z = new ZipOutputStream(Files.newOutputStream(archive))) {
            z.putNextEntry(new ZipEntry("pixels.npy"));
            z.write(Files.readAllBytes(npy));
            z.closeEntry();
        }
        return archive;
    }

    @Test
    void inspectPrintsNpzMembers() throws IOException {
        Path f = npz("a.npz");
        CommandRun r = CommandRun.execute(new InspectCommand(), f.toString());
        assertEquals(0, r.exitCode(), r.toString());
        assertTrue(r.out().contains("member pixels.npy"), r.toString());
        assertTrue(r.out().contains("deflated") && r.out().contains("6 of UINT8[4]") && r.out().contains("decoded on the host"),
                r.toString());
    }

    @Test
    void inspectOfATruncatedNpzExitsTwoWithTheError() throws IOException {
        Path f = npz("b.npz");
        byte[] all = Files.readAllBytes(f);
        Files.write(f, Arrays.copyOf(all, all.length / 2));
        CommandRun r = CommandRun.execute(new InspectCommand(), f.toString());
        assertTrue(r.exitCode() != 0, r.toString()); // 2 through GdsLoaderMain's handler, as for every malformed file
        assertTrue(r.err().contains(f + ": at byte offset " + all.length / 2), r.toString());
    }
}
