package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.fixtures.ArrowDictionaryFixture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 21, finding 14: the CLI loads an Arrow dataset's other columns when one is dictionary-encoded, and says so. */
class ArrowDictionaryColumnTest {
    @TempDir
    Path dir;

    @Test
    void benchSkipsTheDictionaryColumnInOneLineAndLoadsTheOthers() throws Exception {
        Path data = Files.createDirectories(dir.resolve("dict"));
        Path file = data.resolve("part-00000.arrow");
        ArrowDictionaryFixture.write(file, 4096);
        CommandRun r = CommandRun.execute(new BenchCommand(), data.toString(), "--threads", "2", "--batch-bytes", "4KiB",
                "--io-size", "4KiB");
        assertEquals(0, r.exitCode(), r.toString());
        List<String> notes = r.out().lines().filter(l -> l.startsWith("note: skipping column")).toList();
        assertEquals(List.of("note: skipping column 'animal' of " + file + ": dictionary-encoded Arrow columns are not "
                + "loaded; loading the other columns [x]"), notes, r.toString());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("HOST") && l.contains(" OK ")), r.toString());
    }
}
