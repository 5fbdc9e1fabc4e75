package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.fixtures.RealWriterFixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code inspect} and {@code checksum} on damaged copies of Arrow fixtures: exit 2 with the file, offset and what was
 * expected; a valid file with columns the loader does not support still exits 0, marking them "not loadable".
 */
class InspectDamagedArrowTest {
    @TempDir
    Path dir;

    private Path damaged(String name, int offset, int... bytes) throws IOException {
        byte[] d = Files.readAllBytes(RealWriterFixtures.directory().resolve(name));
        for (int i = 0; i < bytes.length; i++) {
            d[offset + i] = (byte) bytes[i];
        }
        return Files.write(dir.resolve(name), d);
    }

    @Test
    void aBatchWhoseColumnIsLongerThanTheBatchIsAnErrorNotNotLoadable() throws IOException {
        // column 'image''s field node in the 4-row record batch 0 says 2147483647 rows
        Path f = damaged("arrow-fixed-file.arrow", 576, 0xff, 0xff, 0xff, 0x7f);
        String message = f + ": at byte offset 336: expected column 'image': a field node of the record batch's 4 rows, "
                + "found 2147483647 rows";
        CommandRun r = CommandRun.execute(new InspectCommand(), f.toString());
        assertEquals(2, r.exitCode(), r.toString());
        assertTrue(r.err().contains(message), r.toString());
        assertFalse(r.out().contains("not loadable"), r.toString());
        CommandRun c = CommandRun.execute(new ChecksumCommand(), f.toString());
        assertEquals(2, c.exitCode(), c.toString());
        assertTrue(c.err().contains(message), c.toString());
    }

    @Test
    void aStreamCutAtAMessageBoundaryIsAnErrorForInspectAndChecksum() throws IOException {
        Path f = Files.write(dir.resolve("cut.arrows"), Arrays.copyOf(Files.readAllBytes(
                RealWriterFixtures.directory().resolve("arrow-fixed-stream.arrows")), 792));
        String message = f + ": at byte offset 792: expected the end-of-stream marker (continuation 0xFFFFFFFF and a "
                + "0x00000000 length), found the end of the file after 1 record batch (truncated? the writer did not finish)";
        for (Object command : new Object[] {new InspectCommand(), new ChecksumCommand()}) {
            CommandRun r = CommandRun.execute(command, f.toString());
            assertEquals(2, r.exitCode(), r.toString());
            assertTrue(r.err().contains(message), r.toString());
        }
    }

    @Test
    void aValidFileWithColumnsTheLoaderDoesNotReadStillExitsZero() {
        Path f = RealWriterFixtures.directory().resolve("arrow-nulls-file.arrow");
        CommandRun r = CommandRun.execute(new InspectCommand(), f.toString());
        assertEquals(0, r.exitCode(), r.toString());
        assertTrue(r.out().contains(" not loadable: " + f + ": at byte offset "), r.toString());
    }
}
