package dev.gdsloader.formats;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The shard files of one column in a directory ({@code <column>-<NNNNN>.npy}, {@code .bin} with its
 * {@code .bin.json} sidecar, {@code .safetensors} or {@code .arrow}), checked before a writer
 * adds a new set: old and new shards of one column must never mix, or a later reader would silently load
 * both. Stateless and thread-safe.
 */
public final class ShardFiles {
    private ShardFiles() {
    }

    /**
     * Makes sure {@code dir} holds no shards of {@code column} before new ones are written.
     *
     * @param dir the output directory (may not exist yet)
     * @param column the column name
     * @param replace delete existing shards of the column instead of refusing
     * @throws IOException if shards exist and {@code replace} is false (naming the directory, the column and
     *     the first files), or deleting them fails
     */
    public static void claim(Path dir, String column, boolean replace) throws IOException {
        if (!Files.isDirectory(dir)) {
            return;
        }
        Pattern own = Pattern.compile(Pattern.quote(column) + "(-\\d+)?\\.(npy|bin|bin\\.json|safetensors|arrow)");
        List<Path> existing;
        try (Stream<Path> s = Files.list(dir)) {
            existing = s.filter(p -> own.matcher(p.getFileName().toString()).matches()).sorted().toList();
        }
        if (existing.isEmpty()) {
            return;
        }
        if (!replace) {
            throw new IOException(dir + " already holds " + existing.size() + " shard(s) of column '" + column + "' ("
                    + existing.stream().limit(3).map(p -> p.getFileName().toString()).toList()
                    + "): refusing to mix old and new shards; remove them or ask to replace them (gdsloader: --overwrite)");
        }
        for (Path p : existing) {
            Files.delete(p);
        }
    }
}
