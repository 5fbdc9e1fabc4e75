package dev.gdsloader.loader.dataset;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.fixtures.RealWriterFixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A dataset opened from one shard file names that file in its messages, not the folder it is in. */
class DatasetOfOneFileMessagesTest {
    @TempDir
    Path dir;

    @Test
    void columnsOfDifferentLengthsInOneFileNameTheFile() throws IOException {
        Path f = RealWriterFixtures.directory().resolve("safetensors-mixed.safetensors");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Dataset.open(f));
        assertTrue(e.getMessage().startsWith(f + ": column '") && e.getMessage().contains(" records but column '"),
                e.getMessage());
        // the root stays the folder, for paths
        Path g = RealWriterFixtures.directory().resolve("arrow-fixed-file.arrow");
        assertEquals(g.toAbsolutePath().getParent(), Dataset.open(g).root());
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class, () -> Dataset.open(g).column("nope"));
        assertTrue(none.getMessage().startsWith(g + ": no column 'nope'"), none.getMessage());
    }

    @Test
    void anArrowStreamOfASchemaAndNoRecordBatchesSaysSo() throws IOException {
        // the fixture's schema message (its first 328 bytes), then the end-of-stream marker: a whole stream, no batches
        byte[] schema = Arrays.copyOf(Files.readAllBytes(RealWriterFixtures.directory().resolve("arrow-fixed-stream.arrows")),
                328 + 8);
        Arrays.fill(schema, 328, 332, (byte) 0xff);
        Arrays.fill(schema, 332, 336, (byte) 0);
        Path f = Files.write(dir.resolve("empty.arrows"), schema);
        IOException e = assertThrows(IOException.class, () -> Dataset.open(f));
        assertEquals(f + ": has a schema (columns [image, label, score, id]) but no record batches: no records to load",
                e.getMessage());
        // in a directory of such files, the directory is named
        IOException d = assertThrows(IOException.class, () -> Dataset.open(dir));
        assertEquals(dir + ": its Arrow files have a schema (columns [image, label, score, id]) but no record batches: no "
                + "records to load", d.getMessage());
    }
}
