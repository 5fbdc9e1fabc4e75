package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code bin/jvm-flags} is the one source of the JVM flags: this JVM (surefire's argLine, or gpu-tests.sh's
 * java line) ran with every flag in it, and the launch scripts read the file instead of spelling flags out.
 */
class JvmFlagsTest {
    private static Path flagsFile() {
        return Path.of(Objects.requireNonNull(System.getProperty("gds.jvm.flags"),
                "system property gds.jvm.flags: bin/jvm-flags (the root pom sets it)"));
    }

    /** @return the flags of a java launcher argument file: whitespace-separated words, # to end of line a comment */
    private static List<String> flags(Path argFile) throws IOException {
        List<String> flags = new ArrayList<>();
        for (String line : Files.readAllLines(argFile, StandardCharsets.UTF_8)) {
            int hash = line.indexOf('#');
            String text = hash < 0 ? line : line.substring(0, hash);
            for (String word : text.strip().split("\\s+", -1)) {
                if (!word.isEmpty()) {
                    flags.add(word);
                }
            }
        }
        return flags;
    }

    /** @return the repository root: the nearest directory at or above the working directory holding ./gdsloader */
    static Path repositoryRoot() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve("gdsloader")) && Files.isDirectory(d.resolve("benchmarks/device"))) {
                return d;
            }
        }
        throw new AssertionError("no gdsloader script at or above " + Path.of("").toAbsolutePath());
    }

    @Test
    void thisJvmRunsWithEveryFlagOfTheFile() throws IOException {
        List<String> expected = flags(flagsFile());
        assertTrue(expected.contains("--enable-native-access=ALL-UNNAMED"), flagsFile() + ": " + expected);
        List<String> actual = ManagementFactory.getRuntimeMXBean().getInputArguments();
        for (String flag : expected) {
            assertTrue(actual.contains(flag), flag + " from " + flagsFile() + " missing in this JVM's " + actual);
        }
    }

    @Test
    void launchScriptsReadTheFileAndSpellOutNoFlagOfIt() throws IOException {
        Path root = repositoryRoot();
        List<String> flags = flags(flagsFile());
        List<Path> scripts = new ArrayList<>(List.of(root.resolve("gdsloader")));
        try (Stream<Path> device = Files.list(root.resolve("benchmarks/device"))) {
            device.filter(p -> p.toString().endsWith(".sh")).sorted().forEach(scripts::add);
        }
        for (Path script : scripts) {
            String text = Files.readString(script, StandardCharsets.UTF_8);
            for (String flag : flags) {
                assertFalse(text.contains(flag), script + " spells out " + flag + ": read it from bin/jvm-flags instead");
            }
            if (text.matches("(?s).*(^|\\s)java\\s.*")) {
                assertTrue(text.contains("jvm-flags") || text.contains("$jvm_flags"),
                        script + " runs java without bin/jvm-flags");
            }
        }
    }
}
