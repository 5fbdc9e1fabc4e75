package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.codegen.docgen.manpage.ManPageGenerator;

/**
 * The command reference in {@code docs/cli} (one AsciiDoc page per command, {@code gdsloader.adoc} listing them) is
 * generated from the commands by picocli's {@link ManPageGenerator}, never written by hand: this test generates it
 * again into a temporary directory and fails, naming each page that differs, is missing or is left over, and the
 * command that rewrites them ({@link #REGENERATE}), when the checked-in pages are not what the commands say now.
 * With {@code -Dgdsloader.docs.write=true} it writes the pages into {@code docs/cli} instead (and removes pages of
 * commands that are gone).
 */
class CommandReferenceTest {
    /** The command that rewrites docs/cli from the commands, run from the repository root. */
    static final String REGENERATE = "./mvnw -q -pl cli -am test -Dtest=CommandReferenceTest "
            + "-Dsurefire.failIfNoSpecifiedTests=false -Dgdsloader.docs.write=true";

    @TempDir
    Path tmp;

    @Test
    void docsCliIsWhatPicocliGeneratesFromTheCommands() throws IOException {
        Path docs = Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).resolve("../docs/cli")
                .toAbsolutePath().normalize();
        Map<String, String> generated = generate(tmp);
        assertTrue(generated.containsKey("gdsloader.adoc") && generated.containsKey("gdsloader-serve-bench.adoc"),
                "one page per command: " + generated.keySet());
        if (Boolean.getBoolean("gdsloader.docs.write")) {
            Files.createDirectories(docs);
            for (String gone : pages(docs).keySet()) {
                if (!generated.containsKey(gone)) {
                    Files.delete(docs.resolve(gone));
                }
            }
            for (Map.Entry<String, String> p : generated.entrySet()) {
                Files.writeString(docs.resolve(p.getKey()), p.getValue());
            }
        }
        Map<String, String> checkedIn = pages(docs);
        List<String> stale = new ArrayList<>();
        for (String name : new TreeSet<>(union(generated.keySet(), checkedIn.keySet()))) {
            if (!checkedIn.containsKey(name)) {
                stale.add(name + " is missing");
            } else if (!generated.containsKey(name)) {
                stale.add(name + " is of no command");
            } else if (!checkedIn.get(name).equals(generated.get(name))) {
                stale.add(name + " differs");
            }
        }
        assertEquals(List.of(), stale, docs + " is not what the commands say now: regenerate it from the repository root "
                + "with `" + REGENERATE + "` and commit it");
    }

    /** Generates every command's page into {@code dir}; returns them by file name. */
    private static Map<String, String> generate(Path dir) throws IOException {
        CommandLine cl = GdsLoaderMain.configure(new CommandLine(GdsLoaderMain.class));
        ManPageGenerator.generateManPage(dir.toFile(), null, new boolean[0], true, cl.getCommandSpec());
        return pages(dir);
    }

    /** The {@code .adoc} files of {@code dir} (none if it does not exist), by file name. */
    private static Map<String, String> pages(Path dir) throws IOException {
        Map<String, String> pages = new TreeMap<>();
        if (!Files.isDirectory(dir)) {
            return pages;
        }
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.filter(f -> f.getFileName().toString().endsWith(".adoc")).toList()) {
                pages.put(p.getFileName().toString(), Files.readString(p));
            }
        }
        return pages;
    }

    private static java.util.Set<String> union(java.util.Set<String> a, java.util.Set<String> b) {
        java.util.Set<String> u = new TreeSet<>(a);
        u.addAll(b);
        return u;
    }
}
