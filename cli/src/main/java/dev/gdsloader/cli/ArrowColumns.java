package dev.gdsloader.cli;

import dev.gdsloader.formats.manifest.DatasetManifest;
import dev.gdsloader.formats.registry.ShardFileFormat;
import dev.gdsloader.formats.registry.ShardFormats;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The columns a command loads from an Arrow dataset: all but the dictionary-encoded ones, which the loader cannot read
 * (the API loads a dataset's other columns when asked for them by name; the CLI does the same and says which column it
 * skipped, in one line). Stateless.
 */
final class ArrowColumns {
    private ArrowColumns() {
    }

    /**
     * @param data a dataset directory or one shard file
     * @param out where the one-line note per skipped column goes
     * @return the columns to load, in schema order, or an empty list for all (no Arrow shard, or no dictionary column)
     * @throws IOException if the first Arrow shard cannot be read (a {@link dev.gdsloader.formats.FormatException}
     *     naming file and offset)
     */
    static List<String> loadable(Path data, PrintStream out) throws IOException {
        Optional<Path> arrow = firstArrowShard(data);
        if (arrow.isEmpty()) {
            return List.of();
        }
        ShardFileFormat format = ShardFormats.of(arrow.get()).orElseThrow();
        List<String> skipped = format.unloadableColumns(arrow.get());
        if (skipped.isEmpty()) {
            return List.of();
        }
        List<String> keep = new ArrayList<>(format.columns(arrow.get(), ""));
        keep.removeAll(skipped);
        for (String s : skipped) {
            out.println("note: skipping column '" + s + "' of " + arrow.get() + ": dictionary-encoded Arrow columns are not "
                    + "loaded; loading the other columns " + keep);
        }
        return keep;
    }

    /** The first Arrow shard of a directory (by name, hidden files skipped) or the file itself, if it is one. */
    private static Optional<Path> firstArrowShard(Path data) throws IOException {
        if (!Files.isDirectory(data)) {
            return isArrow(data) ? Optional.of(data) : Optional.empty();
        }
        try (Stream<Path> s = Files.list(data)) {
            return s.filter(p -> !p.getFileName().toString().startsWith(".") && !p.getFileName().toString()
                    .equals(DatasetManifest.FILE_NAME)).filter(ArrowColumns::isArrow).sorted().findFirst();
        }
    }

    private static boolean isArrow(Path p) {
        return ShardFormats.of(p).map(f -> f.suffixes().contains(dev.gdsloader.formats.manifest.ShardFormat.ARROW.suffix()))
                .orElse(false);
    }
}
