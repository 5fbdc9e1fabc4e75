package dev.gdsloader.samples;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.manifest.DatasetManifest;
import dev.gdsloader.formats.manifest.ShardFormat;
import dev.gdsloader.formats.npy.NpyWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21, finding 14: README.md's host-path example is {@link HostPathQuickstart} word for word, its JVM flags line is
 * {@code bin/jvm-flags}, and it runs (a child JVM, no GPU needed) over a real dataset, reading every byte.
 */
class HostPathQuickstartTest {
    @TempDir
    Path dir;

    private static Path repo() {
        return Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).resolve("..").toAbsolutePath().normalize();
    }

    /** The first {@code ```java} block of README.md's "## In Java" section. */
    private static String readmeExample() throws Exception {
        String readme = Files.readString(repo().resolve("README.md"), UTF_8);
        int section = readme.indexOf("\n## In Java\n");
        assertTrue(section >= 0, "README.md has an '## In Java' section");
        int from = readme.indexOf("```java\n", section) + "```java\n".length();
        return readme.substring(from, readme.indexOf("```", from));
    }

    @Test
    void theReadmeExampleIsTheSampleSource() throws Exception {
        String sample = Files.readString(repo().resolve("samples/src/main/java/dev/gdsloader/samples/HostPathQuickstart.java"),
                UTF_8);
        assertEquals(sample, readmeExample(), "README.md's example and HostPathQuickstart.java must be the same text");
    }

    @Test
    void theReadmeSpellsOutTheFlagsOfBinJvmFlags() throws Exception {
        List<String> flags = Files.readAllLines(Path.of(Objects.requireNonNull(System.getProperty("gds.jvm.flags"),
                "system property gds.jvm.flags: bin/jvm-flags (the root pom sets it)")), UTF_8).stream()
                .map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#")).toList();
        String readme = Files.readString(repo().resolve("README.md"), UTF_8);
        assertTrue(readme.contains("java " + String.join(" ", flags) + " \\\n"), "README.md's java line names " + flags);
    }

    @Test
    void theSampleReadsEveryRecordOfARealDatasetOnTheHost() throws Exception {
        Path data = Files.createDirectories(dir.resolve("train"));
        SplittableRandom rnd = new SplittableRandom(21);
        long sum = 0;
        int[] shardRecords = {300, 200}; // 500 records: two batches of the default 256 (256 + 244)
        DatasetManifest.Builder manifest = DatasetManifest.builder(ShardFormat.NPY).column("data", DType.UINT8, 16);
        for (int s = 0; s < shardRecords.length; s++) {
            byte[] bytes = new byte[shardRecords[s] * 16];
            rnd.nextBytes(bytes);
            for (byte b : bytes) {
                sum += Byte.toUnsignedLong(b);
            }
            String name = String.format("data-%05d.npy", s);
            NpyWriter.write(data.resolve(name), DType.UINT8, new long[] {shardRecords[s], 16}, bytes);
            manifest.shard(name, "data", shardRecords[s]);
        }
        manifest.build(data).write(data);
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "@" + System.getProperty("gds.jvm.flags"), "-cp", System.getProperty("java.class.path"),
                HostPathQuickstart.class.getName(), data.toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "a hang guard only");
        String out = new String(p.getInputStream().readAllBytes(), UTF_8);
        assertEquals(0, p.exitValue(), out);
        assertEquals("500 records, byte sum " + sum, out.strip(), "every byte, nothing else on stdout or stderr");
    }
}
