package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What an interrupted {@code generate} removes: the generator's own shard files, nothing else in the directory. */
class GenerateCleanupTest {
    @TempDir
    Path dir;

    @Test
    void removesTheGeneratorsShardsAndSidecarsOnly() throws Exception {
        for (String f : new String[] {"data-00000.npy", "data-00001.bin", "data-00001.bin.json", "data-notes.txt", "other.npy"}) {
            Files.writeString(dir.resolve(f), f);
        }
        assertEquals(3, GenerateCommand.removeShards(dir));
        assertFalse(Files.exists(dir.resolve("data-00000.npy")));
        assertFalse(Files.exists(dir.resolve("data-00001.bin.json")));
        assertTrue(Files.exists(dir.resolve("data-notes.txt")));
        assertTrue(Files.exists(dir.resolve("other.npy")));
        assertEquals(0, GenerateCommand.removeShards(dir.resolve("missing")), "a missing directory: nothing removed");
    }

    @Test
    void anInterruptedRunRemovesTheOutputDirectoryItMadeWhenEmptyAndKeepsOneItFound() throws Exception {
        Path made = Files.createDirectories(dir.resolve("made"));
        Files.write(made.resolve("data-00000.npy"), new byte[8]);
        String line = GenerateCommand.cleanUp(made, true);
        assertFalse(Files.exists(made), line);
        assertEquals("removed 1 incomplete shard file(s) from " + made + ", and the directory, which this run had made", line);
        Path found = Files.createDirectories(dir.resolve("found"));
        Files.write(found.resolve("data-00000.npy"), new byte[8]);
        assertEquals("removed 1 incomplete shard file(s) from " + found, GenerateCommand.cleanUp(found, false));
        assertTrue(Files.isDirectory(found));
        Path busy = Files.createDirectories(dir.resolve("busy"));
        Files.write(busy.resolve("notes.txt"), new byte[1]);
        assertTrue(GenerateCommand.cleanUp(busy, true).endsWith("; the directory stays (DirectoryNotEmptyException)"));
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
