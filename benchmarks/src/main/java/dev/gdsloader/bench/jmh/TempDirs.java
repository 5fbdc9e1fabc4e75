package dev.gdsloader.bench.jmh;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** The benchmarks' temporary dataset directories. Stateless. */
final class TempDirs {
    private TempDirs() {
    }

    /**
     * Deletes {@code dir} and everything below it, deepest first.
     *
     * @param dir a directory a benchmark made
     * @throws IOException if a file cannot be deleted
     */
    static void delete(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }
}
