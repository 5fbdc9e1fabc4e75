package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code bin/serve-memory.sh}, which the {@code gdsloader} launcher sources: {@code serve} runs with
 * {@code -Xmx = 256 MiB + budget/16} (at most 4 GiB) and {@code -XX:MaxDirectMemorySize = 128 MiB + budget/32} (at most
 * 2 GiB) from its {@code --memory-budget} (4 GiB if absent), and MALLOC_ARENA_MAX=2 and MALLOC_MMAP_THRESHOLD_=1048576
 * unless set; other commands, and a
 * size it cannot read, get no caps; the launcher puts the caps before GDSLOADER_JAVA_OPTS. The script runs in a real
 * bash, and a real JVM started with its flags reports the heap and direct-memory limits asked for.
 */
@Timeout(60)
class ServeMemoryFlagsTest {
    private static final Path ROOT = JvmFlagsTest.repositoryRoot();

    /** @return {flags, MALLOC_ARENA_MAX, MALLOC_MMAP_THRESHOLD_} the script gives for {@code args}, with {@code env} added to the environment */
    private static List<String> derive(Map<String, String> env, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("bash", "-c", "set -euo pipefail; source bin/serve-memory.sh; gds_serve_memory \"$@\"; "
                + "printf '%s\\n%s\\n%s\\n' \"$gds_serve_flags\" \"${MALLOC_ARENA_MAX:-unset}\" \"${MALLOC_MMAP_THRESHOLD_:-unset}\"", "test"));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(ROOT.toFile()).redirectErrorStream(true);
        pb.environment().remove("MALLOC_ARENA_MAX");
        pb.environment().remove("MALLOC_MMAP_THRESHOLD_");
        pb.environment().putAll(env);
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "bash did not finish");
        assertEquals(0, p.exitValue(), out);
        List<String> lines = out.lines().toList();
        assertEquals(3, lines.size(), out);
        return lines;
    }

    @Test
    void serveGetsCapsFromItsMemoryBudget() throws Exception {
        assertEquals(List.of("-Xmx320m -XX:MaxDirectMemorySize=160m", "2", "1048576"), derive(Map.of(), "serve", "/data", "--memory-budget", "1GiB"));
        assertEquals(List.of("-Xmx1280m -XX:MaxDirectMemorySize=640m", "2", "1048576"), derive(Map.of(), "serve", "--memory-budget=16GiB", "/data"));
        assertEquals(List.of("-Xmx375m -XX:MaxDirectMemorySize=187m", "2", "1048576"), derive(Map.of(), "serve", "--memory-budget", "2 GB", "/d"));
        assertEquals(List.of("-Xmx512m -XX:MaxDirectMemorySize=256m", "2", "1048576"), derive(Map.of(), "serve", "/data"), "the 4 GiB default");
        assertEquals(List.of("-Xmx4096m -XX:MaxDirectMemorySize=2048m", "2", "1048576"), derive(Map.of(), "serve", "--memory-budget", "1TiB"));
        assertEquals(List.of("", "2", "1048576"), derive(Map.of(), "serve", "--memory-budget", "lots"), "left to the CLI to refuse");
        assertEquals(List.of("", "unset", "unset"), derive(Map.of(), "latency", "/data", "--memory-budget", "1GiB"));
        assertEquals(List.of("-Xmx320m -XX:MaxDirectMemorySize=160m", "8", "65536"),
                derive(Map.of("MALLOC_ARENA_MAX", "8", "MALLOC_MMAP_THRESHOLD_", "65536"), "serve", "--memory-budget", "1g"),
                "the caller's malloc settings stay");
    }

    @Test
    void theFlagsAreTheJvmsAndComeBeforeTheUsersOptions() throws Exception {
        String flags = derive(Map.of(), "serve", "--memory-budget", "1GiB").getFirst();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java));
        cmd.addAll(List.of(flags.split(" ")));
        cmd.addAll(List.of("-XX:+PrintFlagsFinal", "-version"));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), "java did not finish");
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.matches("(?s).*\\bMaxHeapSize\\s+=\\s+" + (320L << 20) + "\\b.*"), out);
        assertTrue(out.matches("(?s).*\\bMaxDirectMemorySize\\s+=\\s+" + (160L << 20) + "\\b.*"), out);
        String launcher = Files.readString(ROOT.resolve("gdsloader"), StandardCharsets.UTF_8);
        assertTrue(launcher.contains("gds_serve_memory \"$@\""), "the launcher derives the caps");
        assertTrue(launcher.contains("\"@$root/bin/jvm-flags\" $gds_serve_flags ${GDSLOADER_JAVA_OPTS:-}"),
                "the caps go before the user's options, which win");
    }
}
