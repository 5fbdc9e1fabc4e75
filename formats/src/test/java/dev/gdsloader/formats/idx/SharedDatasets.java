package dev.gdsloader.formats.idx;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Finds the shared dataset directory: {@code <gds.shared.dir>/datasets/<name>} if the system
 * property {@code gds.shared.dir} is set, else the first {@code <ancestor>/shared/datasets/<name>}
 * walking up from the working directory (the repository sits beside {@code shared/}).
 */
final class SharedDatasets {

    private SharedDatasets() {
    }

    static Optional<Path> find(String name) {
        String configured = System.getProperty("gds.shared.dir");
        if (configured != null && !configured.isBlank()) {
            Path p = Path.of(configured).resolve("datasets").resolve(name);
            return Files.isDirectory(p) ? Optional.of(p) : Optional.empty();
        }
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path p = d.resolve("shared").resolve("datasets").resolve(name);
            if (Files.isDirectory(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }
}
