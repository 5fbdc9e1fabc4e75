package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What an interrupted {@code generate} or {@code convert} removes: its staged files, nothing else in the directory. */
class GenerateCleanupTest {
    @TempDir
    Path dir;

    @Test
    void stoppingAbortsTheStagedFilesOnlyAndKeepsThePreviousDataset() throws Exception {
        Path out = Files.createDirectories(dir.resolve("found"));
        Files.writeString(out.resolve("data-00000.npy"), "previous");
        Files.writeString(out.resolve("notes.txt"), "mine");
        dev.gdsloader.formats.StagedFiles staged = dev.gdsloader.formats.StagedFiles.in(out);
        Files.writeString(staged.stage("data-00000.npy"), "new, unfinished");
        Files.writeString(staged.stage("data-00001.npy"), "new, unfinished");
        assertEquals("removed 2 staged file(s) of the unfinished dataset; " + out + " keeps its previous files",
                StagedRun.stop(out, false));
        try (var files = Files.list(out)) {
            assertEquals(java.util.List.of("data-00000.npy", "notes.txt"),
                    files.map(p -> p.getFileName().toString()).sorted().toList());
        }
        assertEquals("previous", Files.readString(out.resolve("data-00000.npy")));
        assertThrows(IllegalStateException.class, () -> staged.commit(java.util.List.of(), null, null),
                "an aborted staging cannot be committed afterwards");
    }

    @Test
    void anInterruptedRunRemovesTheEmptyDirectoriesItMadeAndKeepsOneHoldingFiles() throws Exception {
        Path made = dir.resolve("made");
        dev.gdsloader.formats.StagedFiles staged = dev.gdsloader.formats.StagedFiles.in(made.resolve("train"));
        Files.write(staged.stage("images-00000.npy"), new byte[8]);
        String line = StagedRun.stop(made, true);
        assertFalse(Files.exists(made), line);
        assertTrue(line.endsWith(", and the directory, which this run had made and left empty, is removed"), line);
        Path busy = Files.createDirectories(dir.resolve("busy"));
        Files.write(busy.resolve("notes.txt"), new byte[1]);
        assertEquals("the new files in " + busy + " were complete and are kept; the directory holds other files and stays",
                StagedRun.stop(busy, true));
        assertTrue(Files.exists(busy.resolve("notes.txt")));
    }

    @Test
    void aSizeThatIsNotWholeRecordsPerShardSaysItWasRoundedDown() {
        CommandRun r = CommandRun.execute(new GenerateCommand(), "--out", dir.resolve("r").toString(), "--size", "1MiB",
                "--shards", "3", "--record-bytes", "100000");
        assertEquals(0, r.exitCode(), r.toString());
        assertTrue(r.out().contains("(--size 1.0 MiB rounded down to whole 100000-byte records per shard)"), r.out());
        CommandRun whole = CommandRun.execute(new GenerateCommand(), "--out", dir.resolve("w").toString(), "--size", "1MiB",
                "--shards", "4", "--record-bytes", "1024");
        assertEquals(0, whole.exitCode(), whole.toString());
        assertFalse(whole.out().contains("rounded down"), whole.out());
    }
}
