package dev.gdsloader.loader.dataset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.TestShards;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a fresh user's bad directories and manifests are told: every format the loader reads, and the file at fault. */
class DatasetMessagesTest {
    @TempDir
    Path dir;

    @Test
    void anEmptyDirectoryListsEveryShardExtensionTheLoaderReads() {
        IOException e = assertThrows(IOException.class, () -> Dataset.open(dir));
        assertEquals(dir + ": no .npy, .npz, .bin, .safetensors, .arrow or .arrows shards (and no dataset.json) in this"
                + " directory", e.getMessage());
    }

    @Test
    void anUnknownExtensionListsEveryShardExtensionIncludingArrowStreams() throws IOException {
        Path f = Files.writeString(dir.resolve("x-00000.parquet"), "PAR1");
        IOException e = assertThrows(IOException.class, () -> Dataset.openShard(f, "x"));
        assertEquals(f + ": unknown shard format (expected .npy, .npz, .bin, .safetensors, .arrow or .arrows)",
                e.getMessage());
    }

    @Test
    void aManifestWithNoShardsForAColumnNamesDatasetJson() throws IOException {
        TestShards.writeImages(dir, 4);
        Path manifest = Files.writeString(dir.resolve("dataset.json"), "{\"format\": \"npy\", \"version\": 1,"
                + " \"columns\": [{\"name\": \"images\", \"dtype\": \"U8\", \"record_shape\": [28, 28]}], \"shards\": []}");
        IOException e = assertThrows(IOException.class, () -> Dataset.open(dir));
        assertEquals(manifest + ": column 'images' has no shards: expected at least one entry with \"column\":"
                + " \"images\" in \"shards\"", e.getMessage());
        assertTrue(e.getMessage().startsWith(dir.resolve("dataset.json").toString()), e.getMessage());
    }
}
