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
}
