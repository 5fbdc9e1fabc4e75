package dev.gdsloader.loader.dataset;

import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.npy.NpyShard;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A sharded dataset: one or more {@link Column}s with the same number of records, record {@code i} of
 * every column belonging to sample {@code i}.
 *
 * <p>Shard files are named {@code <column>-<NNNNN>.npy} (what {@code gdsloader generate} and
 * {@code gdsloader convert idx} write); a {@code .npy} file without the numeric suffix is a one-shard
 * column named after the file. Immutable and thread-safe; holds no open files.
 */
public final class Dataset {
    private static final Pattern SHARD_NAME = Pattern.compile("^(.*)-(\\d+)\\.npy$");

    private final Path root;
    private final List<Column> columns;

    private Dataset(Path root, List<Column> columns) {
        this.root = root;
        this.columns = List.copyOf(columns);
        long n = columns.get(0).recordCount();
        for (Column c : columns) {
            if (c.recordCount() != n) {
                throw new IllegalArgumentException(root + ": column '" + c.name() + "' has " + c.recordCount()
                        + " records but column '" + columns.get(0).name() + "' has " + n);
            }
        }
    }

    /**
     * Opens every {@code .npy} shard in a directory (not recursive), or a single {@code .npy} file. In a
     * directory, each column's shards must be numbered 0, 1, 2, ... without gaps or duplicates, and every
     * {@code .npy} entry must be a regular file (a FIFO, a directory or a dangling link is an error, not
     * skipped), so that no shard is silently lost or added.
     *
     * @param dirOrFile a directory of shards or one shard
     * @return the dataset
     * @throws IOException if the directory has no {@code .npy} files or a shard is malformed (a
     *     {@link dev.gdsloader.formats.FormatException} naming file and offset)
     * @throws IllegalArgumentException if columns disagree on record counts, or shards of one column on
     *     dtype or record shape
     */
    public static Dataset open(Path dirOrFile) throws IOException {
        if (Files.isDirectory(dirOrFile)) {
            List<Path> files;
            try (Stream<Path> s = Files.list(dirOrFile)) {
                files = s.filter(p -> p.getFileName().toString().endsWith(".npy")).sorted().toList();
            }
            if (files.isEmpty()) {
                throw new IOException(dirOrFile + ": no .npy shards in this directory");
            }
            return group(dirOrFile, files, true);
        }
        return ofShards(dirOrFile.toAbsolutePath().getParent(), List.of(dirOrFile));
    }

    /**
     * Groups shard files into columns by name ({@code <column>-<NNNNN>.npy}, ordered by NNNNN).
     *
     * @param root directory to name in messages
     * @param files shard files
     * @return the dataset
     * @throws IOException if a shard is malformed
     */
    public static Dataset ofShards(Path root, List<Path> files) throws IOException {
        return group(root, files, false);
    }

    /** Groups shards into columns; {@code wholeColumns}: the files are all a directory has, so numbering must be complete. */
    private static Dataset group(Path root, List<Path> files, boolean wholeColumns) throws IOException {
        record Named(String column, long number, Path file) { }
        List<Named> named = new ArrayList<>();
        for (Path f : files) {
            if (!Files.isRegularFile(f)) {
                // a FIFO or device would block or never end; a directory is not a shard
                throw new IOException(f + ": not a regular file (" + kind(f) + "): shards must be regular files");
            }
            String fn = f.getFileName().toString();
            Matcher m = SHARD_NAME.matcher(fn);
            named.add(m.matches() ? new Named(m.group(1), parseShardNumber(f, m.group(2)), f)
                    : new Named(fn.endsWith(".npy") ? fn.substring(0, fn.length() - 4) : fn, 0, f));
        }
        named.sort(Comparator.comparing(Named::column).thenComparingLong(Named::number));
        Map<String, List<RecordLayout>> byColumn = new LinkedHashMap<>();
        Named previous = null;
        for (Named n : named) {
            if (!wholeColumns) {
                byColumn.computeIfAbsent(n.column(), k -> new ArrayList<>()).add(NpyShard.open(n.file()));
                continue;
            }
            if (previous != null && previous.column().equals(n.column())) {
                // shards NNNNN of a column must be numbered 0, 1, 2, ... once each: a gap is a lost shard
                if (n.number() == previous.number()) {
                    throw new IOException(root + ": " + previous.file().getFileName() + " and " + n.file().getFileName()
                            + " are both shard " + n.number() + " of column '" + n.column() + "'");
                }
                if (n.number() != previous.number() + 1) {
                    throw new IOException(root + ": column '" + n.column() + "' has shards " + previous.number() + " and "
                            + n.number() + " but none numbered in between: is a shard missing?");
                }
            } else if (n.number() != 0) {
                throw new IOException(root + ": column '" + n.column() + "' starts at shard " + n.number()
                        + " (" + n.file().getFileName() + "), expected 0: is a shard missing?");
            }
            previous = n;
            byColumn.computeIfAbsent(n.column(), k -> new ArrayList<>()).add(NpyShard.open(n.file()));
        }
        List<Column> columns = new ArrayList<>();
        byColumn.forEach((name, shards) -> columns.add(new Column(name, shards)));
        return new Dataset(root, columns);
    }

    private static long parseShardNumber(Path f, String digits) throws IOException {
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw new IOException(f + ": shard number " + digits + " is too large");
        }
    }

    private static String kind(Path f) {
        if (!Files.exists(f)) {
            return Files.isSymbolicLink(f) ? "a symbolic link to nothing" : "does not exist";
        }
        if (Files.isDirectory(f)) {
            return "a directory";
        }
        return "a FIFO, socket or device";
    }

    /** @return the directory the dataset came from */
    public Path root() {
        return root;
    }

    /** @return the columns, ordered by name */
    public List<Column> columns() {
        return columns;
    }

    /**
     * @param name column name
     * @return the column
     * @throws IllegalArgumentException naming the columns that exist, if there is none of that name
     */
    public Column column(String name) {
        return columns.stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow(() ->
                new IllegalArgumentException(root + ": no column '" + name + "'; columns are "
                        + columns.stream().map(Column::name).toList()));
    }

    /** @return records per column (the number of samples) */
    public long recordCount() {
        return columns.get(0).recordCount();
    }

    /** @return data bytes over all columns (records only) */
    public long dataBytes() {
        return columns.stream().mapToLong(Column::dataBytes).sum();
    }

    /**
     * @param names columns to keep, in the order given
     * @return a dataset with only those columns
     * @throws IllegalArgumentException if a name does not exist
     */
    public Dataset select(List<String> names) {
        if (names.isEmpty()) {
            return this;
        }
        return new Dataset(root, names.stream().map(this::column).toList());
    }
}
