package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Parse errors are one line naming the option plus a pointer to --help; every option is checked (and every input)
 * before any work; limits state the real bound.
 */
class UsageErrorsTest {
    @TempDir
    Path dir;

    private static void assertUsageError(CommandRun r, String command, String option, String... contains) {
        assertEquals(2, r.exitCode(), r.toString());
        List<String> lines = r.err().lines().toList();
        assertEquals(2, lines.size(), r.toString());
        assertTrue(lines.get(0).startsWith("gdsloader " + command + ": " + option + ": "), r.toString());
        assertEquals("(see gdsloader " + command + " --help)", lines.get(1), r.toString());
        assertFalse(r.err().contains("java."), r.toString());
        assertFalse(r.err().contains("Exception"), r.toString());
        for (String c : contains) {
            assertTrue(lines.get(0).contains(c), "wanted '" + c + "' in\n" + r);
        }
        assertEquals("", r.out(), r.toString());
    }

    @Test
    void parseErrorsAreOneLineNamingTheOptionNotTheUsageText() {
        assertUsageError(CommandRun.execute(new BenchCommand(), "--io-size", "-4KiB"), "bench", "--io-size", "'-4KiB' is negative", "64KiB");
        assertUsageError(CommandRun.execute(new BenchCommand(), "--batch-bytes", "99999999999999999999"), "bench", "--batch-bytes",
                "too large");
        assertUsageError(CommandRun.execute(new BenchCommand(), "--paths", "FOO"), "bench", "--paths", "'FOO'", "GDS, BOUNCE, HOST");
        assertUsageError(CommandRun.execute(new BenchCommand(), "--threads", "abc"), "bench", "--threads", "'abc'", "whole number");
        assertUsageError(CommandRun.execute(new RanksCommand()), "ranks", "<data>", "missing");
        assertUsageError(CommandRun.execute(new BenchCommand(), "--work-dir"), "bench", "--work-dir", "needs a value");
        assertUsageError(CommandRun.execute(new BenchCommand(), "--nope"), "bench", "--nope", "unknown option");
    }

    /**
     * Values picocli's own converters refuse (a path with a NUL, a double) are said with the type in words, the values
     * an option's own converter refuses in its words, and a number past an option's Java type without a declared range
     * with that type's range; none with a Java class name.
     */
    @Test
    void refusalsOfEveryConverterAreSaidInWordsNotClassNames() {
        assertUsageError(CommandRun.execute(new BenchCommand(), "--work-dir", "a\u0000b"), "bench", "--work-dir",
                "'a\u0000b' is not a path");
        assertUsageError(CommandRun.execute(new OverlapCommand(), "--factors", "1,x"), "overlap", "--factors", "'x' is not a double");
        assertUsageError(CommandRun.execute(new GenerateCommand(), "--format", "FOO"), "generate", "--format",
                "'FOO' is not npy, raw, safetensors or arrow");
        assertUsageError(CommandRun.execute(new OverlapCommand(), "--depth", "1.5"), "overlap", "--depth",
                "'1.5' is not a whole number in -2147483648..2147483647");
        assertUsageError(CommandRun.execute(new GenerateCommand(), "--seed", "x"), "generate", "--seed",
                "'x' is not a whole number in -9223372036854775808..9223372036854775807");
        assertUsageError(CommandRun.execute(new BenchCommand(), "--size", "-1GiB"), "bench", "--size", "'-1GiB' is negative");
    }

    @Test
    void benchQuickValidatesAndHonoursRounds() {
        OptionChecksTest.assertOneLineError(CommandRun.execute(new BenchCommand(), "--rounds", "1000000000", "--quick", "--paths", "HOST",
                "--work-dir", dir.toString()), "gdsloader bench", "--rounds must be 1..1000");
        CommandRun r = CommandRun.execute(new BenchCommand(), "--rounds", "2", "--quick", "--size", "4MiB", "--batch-bytes", "1MiB",
                "--paths", "HOST", "--work-dir", dir.toString());
        assertEquals(0, r.exitCode(), r.toString());
        assertTrue(r.out().contains("2 rounds"), r.toString());
    }

    @Test
    void limitsStateTheRealMaximum() {
        OptionChecksTest.assertOneLineError(CommandRun.execute(new GenerateCommand(), "--out", dir.resolve("g").toString(), "--record-bytes", "2GiB"),
                "gdsloader generate", "--record-bytes must be 1..2147483647, got 2147483648");
    }

    @Test
    void randomCapsAHugeBatchSizeBeforeAnyWork() {
        Path d = dir.resolve("ds");
        assertEquals(0, CommandRun.execute(new GenerateCommand(), "--out", d.toString(), "--size", "256KiB", "--shards", "2",
                "--record-bytes", "4096", "--align", "4096").exitCode());
        CommandRun r = CommandRun.execute(new RandomCommand(), "--batch-size", "2147483647", "--paths", "HOST", "--threads", "2",
                d.toString());
        assertEquals(0, r.exitCode(), r.toString());
        assertTrue(r.out().startsWith("note: a batch of 2147483647 records is more than the dataset's 64 records"), r.toString());
    }

    @Test
    void ranksRefusesHostBeforeAnyWork() {
        CommandRun r = CommandRun.execute(new RanksCommand(), dir.toString(), "--world", "2", "--path", "HOST");
        OptionChecksTest.assertOneLineError(r, "gdsloader ranks", "--path HOST", "GPU r");
        assertEquals("", r.out(), r.toString());
    }

    @Test
    void convertIdxChecksEveryInputForCollisionsBeforeWritingAnything() throws IOException {
        Path labels = Files.write(dir.resolve("train-labels-idx1-ubyte.gz"), CommandsTest.idxUbyte(new int[] {3}, new byte[] {1, 2, 3}));
        Files.createDirectories(dir.resolve("other"));
        Path plain = Files.write(dir.resolve("other").resolve("train-labels-idx1-ubyte"), CommandsTest.idxUbyte(new int[] {3}, new byte[] {1, 2, 3}));
        Path out = dir.resolve("out");
        CommandRun twice = CommandRun.execute(new ConvertCommand(), "idx", "--out", out.toString(), labels.toString(), labels.toString());
        OptionChecksTest.assertOneLineError(twice, "gdsloader convert idx", "given twice");
        assertFalse(Files.exists(out), twice.toString());
        CommandRun same = CommandRun.execute(new ConvertCommand(), "idx", "--out", out.toString(), labels.toString(), plain.toString());
        OptionChecksTest.assertOneLineError(same, "gdsloader convert idx", "both convert to", "train");
        assertFalse(Files.exists(out), same.toString());
    }
}
