package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link GdsLoaderMain#main} in a child JVM on the test class path: its exit codes and error lines (main
 * calls System.exit, so it cannot run in this JVM).
 */
class GdsLoaderMainProcessTest {
    @TempDir
    Path dir;

    private record Result(int exit, String out, String err) {
    }

    @SuppressWarnings("IncorrectMainMethod") // runs the CLI's main in a child JVM: no entry point
    private Result main(String... args) throws IOException, InterruptedException {
        return mainWith(List.of(), args);
    }

    private Result mainWith(List<String> jvmOptions, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "@" + Objects.requireNonNull(System.getProperty("gds.jvm.flags"),
                        "system property gds.jvm.flags: bin/jvm-flags (the root pom sets it)")));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), GdsLoaderMain.class.getName()));
        cmd.addAll(List.of(args));
        Path out = dir.resolve("stdout.txt");
        Path err = dir.resolve("stderr.txt");
        Process p = new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) { // a hang guard only
            p.destroyForcibly();
            throw new AssertionError("gdsloader " + String.join(" ", args) + " did not exit");
        }
        return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    }

    /** Issue 21: no INFO lines unless asked for ({@code -Dgdsloader.log=INFO}); a bad level is one line, exit 2. */
    @Test
    void infoLinesAreOffByDefaultAndTheLogPropertyRaisesThem() throws Exception {
        Path data = dir.resolve("data");
        assertEquals(0, CommandRun.execute(new GenerateCommand(), "--out", data.toString(), "--size", "1MiB", "--shards", "2",
                "--record-bytes", "4096").exitCode());
        // latency builds loaders with path AUTO, whose INFO line says which path it chose
        String[] bench = {"latency", data.toString(), "--batch-size", "16", "--epochs", "1", "--no-direct"};
        Result quiet = main(bench);
        assertEquals(0, quiet.exit(), quiet.toString());
        assertTrue(quiet.err().lines().noneMatch(l -> l.startsWith("INFO: ")), "no INFO lines by default: " + quiet);
        Result verbose = mainWith(List.of("-Dgdsloader.log=INFO"), bench);
        assertEquals(0, verbose.exit(), verbose.toString());
        assertTrue(verbose.err().lines().anyMatch(l -> l.startsWith("INFO: gdsloader path ")), verbose.toString());
        Result bad = mainWith(List.of("-Dgdsloader.log=loud"), bench);
        assertEquals(2, bad.exit(), bad.toString());
        assertEquals("gdsloader: gdsloader.log must be a java.util.logging level (SEVERE, WARNING, INFO, CONFIG, FINE, FINER, "
                + "FINEST, OFF, ALL), got 'loud'", bad.err().strip(), bad.toString());
    }

    /** Issue 21: without {@code --add-opens java.base/java.nio}, the loader names the flag at build (not later, elsewhere). */
    @Test
    void aMissingAddOpensIsNamedAtTheStart() throws Exception {
        Path data = dir.resolve("flags");
        assertEquals(0, CommandRun.execute(new GenerateCommand(), "--out", data.toString(), "--size", "1MiB", "--shards", "2",
                "--record-bytes", "4096").exitCode());
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"), GdsLoaderMain.class.getName(),
                "bench", data.toString(), "--threads", "2", "--batch-bytes", "256KiB", "--io-size", "64KiB"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "a hang guard only");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(2, p.exitValue(), out);
        assertTrue(out.contains("needs the JVM flag --add-opens=java.base/java.nio=ALL-UNNAMED"), out);
        assertTrue(out.contains("@bin/jvm-flags"), out);
    }

    @Test
    void benchOnADirectoryWithoutShardsExitsTwoWithOneLineNamingIt() throws Exception {
        Path empty = Files.createDirectories(dir.resolve("no-shards"));
        Result r = main("bench", empty.toString());
        assertEquals(2, r.exit(), r.toString());
        List<String> lines = r.err().lines().filter(l -> l.startsWith("gdsloader bench: ")).toList();
        assertEquals(1, lines.size(), r.toString());
        assertTrue(lines.get(0).contains(empty.toString()), r.toString());
        assertTrue(r.err().lines().noneMatch(l -> l.trim().startsWith("at ")), "no stack trace without -Dgdsloader.debug: " + r);
    }

    /** {@code serve --cluster @FILE} (with a space, as documented) reaches serve's cluster file reader, not picocli's @-files. */
    @Test
    void serveClusterAtFileIsReadAsTheClusterFile() throws Exception {
        Path root = Files.createDirectories(dir.resolve("root"));
        Path members = Files.writeString(dir.resolve("cluster.txt"), "127.0.0.1:9001\n127.0.0.1:9002\n");
        Result r = main("serve", root.toString(), "--cluster", "@" + members, "--cluster-index", "2");
        assertEquals(2, r.exit(), r.toString());
        assertEquals("gdsloader serve: --cluster-index must be 0..1, got 2 (this server's position in --cluster @" + members
                + ": [127.0.0.1:9001, 127.0.0.1:9002])", r.err().strip(), r.toString());
        Result d = main("serve", root.toString(), "--cluster", "@" + dir, "--cluster-index", "0");
        assertEquals(2, d.exit(), d.toString());
        assertTrue(d.err().lines().noneMatch(l -> l.trim().startsWith("at ")), "no stack trace: " + d);
    }

    @Test
    void aBadMemoryBudgetPropertyIsOneLineAndExitTwoAndUnitsAreTaken() throws Exception {
        Result bad = mainWith(List.of("-Dgdsloader.memory.hostLimit=abc"), "doctor"); // doctor prints the root's budget
        assertEquals(2, bad.exit(), bad.toString());
        assertTrue(bad.err().contains("gdsloader.memory.hostLimit must be a byte count >= 0 (e.g. 68719476736 or 64GiB), "
                + "got 'abc'"), bad.toString());
        assertTrue(bad.err().lines().noneMatch(l -> l.trim().startsWith("at ") || l.contains("Exception in thread")),
                "no stack trace: " + bad);
        Result units = mainWith(List.of("-Dgdsloader.memory.hostLimit=1GiB"), "doctor");
        assertTrue(units.out().contains("1.0 GiB") || units.out().contains("1073741824"), units.toString());
    }

    @Test
    void versionAndHelpExitZeroAndListTheSubcommands() throws Exception {
        Result v = main("--version");
        assertEquals(0, v.exit(), v.toString());
        assertTrue(v.out().contains("gdsloader 0.1.0"), v.toString());
        Result h = main("--help");
        assertEquals(0, h.exit(), h.toString());
        for (String sub : new String[] {"doctor", "generate", "convert", "bench", "checksum"}) {
            assertTrue(h.out().contains(sub), sub + " missing from help: " + h);
        }
    }

    @Test
    void anUnknownSubcommandIsAUsageErrorWithExitTwo() throws Exception {
        Result r = main("frobnicate");
        assertEquals(2, r.exit(), r.toString());
        assertTrue(r.err().contains("frobnicate"), r.toString());
    }
}
