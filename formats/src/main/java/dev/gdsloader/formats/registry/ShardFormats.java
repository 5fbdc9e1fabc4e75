package dev.gdsloader.formats.registry;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The registry of shard file formats: the one list every part of the project asks which formats exist, which file
 * suffixes mark them, and how each is read, written, inspected and verified ({@link ShardFileFormat}). The dataset
 * opener ({@code Dataset}), the manifest's {@code verify}, {@link #claim}, and the {@code inspect} and {@code verify}
 * commands all dispatch through it. To add a format: implement {@link ShardFileFormat} and add it to {@link #all()}.
 * Stateless and thread-safe.
 */
public final class ShardFormats {
    /** NumPy {@code .npy}. */
    public static final ShardFileFormat NPY = new NpyFormat();
    /** NumPy {@code .npz}. */
    public static final ShardFileFormat NPZ = new NpzFormat();
    /** Raw records, {@code .bin} with its {@code .bin.json} sidecar. */
    public static final ShardFileFormat RAW = new RawFormat();
    /** safetensors. */
    public static final ShardFileFormat SAFETENSORS = new SafetensorsFormat();
    /** Arrow IPC files {@code .arrow} and streams {@code .arrows}. */
    public static final ShardFileFormat ARROW = new ArrowFormat();

    private static final List<ShardFileFormat> ALL = List.of(NPY, NPZ, RAW, SAFETENSORS, ARROW);

    private ShardFormats() {
    }

    /** @return every registered format, in a fixed order (npy, npz, raw, safetensors, arrow) */
    public static List<ShardFileFormat> all() {
        return ALL;
    }

    /** @return every shard file suffix of every format, in {@link #all()}'s order (sidecars not included) */
    public static List<String> suffixes() {
        return ALL.stream().flatMap(f -> f.suffixes().stream()).toList();
    }

    /** @return {@link #suffixes()} for messages: {@code .npy, .npz, .bin, .safetensors, .arrow or .arrows} */
    public static String suffixList() {
        List<String> s = suffixes();
        return String.join(", ", s.subList(0, s.size() - 1)) + " or " + s.get(s.size() - 1);
    }

    /**
     * A regular expression alternation of every shard suffix, longest first, for building file-name patterns:
     * {@code (\Q.safetensors\E|...)}.
     *
     * @return the group, capturing
     */
    public static String suffixGroup() {
        return suffixes().stream().sorted(Comparator.comparingInt(String::length).reversed()).map(Pattern::quote)
                .collect(Collectors.joining("|", "(", ")"));
    }

    /**
     * The format of a file, by its name's suffix.
     *
     * @param file a path; only its file name is looked at
     * @return the format, or empty when no format's suffix matches
     */
    public static Optional<ShardFileFormat> of(Path file) {
        String n = file.getFileName().toString();
        return ALL.stream().filter(f -> f.suffixOf(n).isPresent()).findFirst();
    }

    /**
     * The suffix that marks a file as a shard.
     *
     * @param file a path; only its file name is looked at
     * @return the matching suffix (e.g. {@code ".arrows"}), or empty
     */
    public static Optional<String> suffixOf(Path file) {
        String n = file.getFileName().toString();
        return ALL.stream().map(f -> f.suffixOf(n)).flatMap(Optional::stream).findFirst();
    }

    /**
     * The format of a file that must be a shard.
     *
     * @param file a shard file
     * @return its format
     * @throws IOException {@code <file>: unknown shard format (expected .npy, ... or .arrows)}, or
     *     {@code <file>: is a directory, not a shard file}
     */
    public static ShardFileFormat require(Path file) throws IOException {
        Optional<ShardFileFormat> f = of(file);
        if (f.isEmpty()) {
            throw new IOException(file + (Files.isDirectory(file) ? ": is a directory, not a shard file"
                    : ": unknown shard format (expected " + suffixList() + ")"));
        }
        return f.get();
    }

    /**
     * Makes sure {@code dir} holds no shards of {@code column} ({@code <column>.<suffix>} or
     * {@code <column>-<NNNNN>.<suffix>} of any registered format, sidecars included) before new ones are written: old
     * and new shards of one column must never mix, or a later reader would silently load both.
     *
     * @param dir the output directory (may not exist yet)
     * @param column the column name
     * @param replace delete existing shards of the column instead of refusing
     * @throws IOException if shards exist and {@code replace} is false (naming the directory, the column and
     *     the first files), or deleting them fails
     */
    public static void claim(Path dir, String column, boolean replace) throws IOException {
        List<Path> existing = existing(dir, column);
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

    /**
     * The shard files (and sidecars) of one column in a directory, in any registered format: {@code <column>.<suffix>}
     * and {@code <column>-<digits>.<suffix>}. Reads the listing only.
     *
     * @param dir the directory (missing: no files)
     * @param column the column name
     * @return the files, sorted by name
     * @throws IOException if the directory cannot be listed
     */
    public static List<Path> existing(Path dir, String column) throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        List<String> all = new ArrayList<>();
        for (ShardFileFormat f : ALL) {
            all.addAll(f.suffixes());
            all.addAll(f.sidecarSuffixes());
        }
        Pattern own = Pattern.compile(Pattern.quote(column) + "(-\\d+)?" + all.stream().map(Pattern::quote)
                .collect(Collectors.joining("|", "(", ")")));
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(p -> own.matcher(p.getFileName().toString()).matches()).sorted().toList();
        }
    }
}
