package dev.gdsloader.loader.dataset;

import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.ShardFiles;
import dev.gdsloader.formats.manifest.ColumnEntry;
import dev.gdsloader.formats.manifest.DatasetManifest;
import dev.gdsloader.formats.manifest.ShardEntry;
import dev.gdsloader.formats.registry.ShardFileFormat;
import dev.gdsloader.formats.registry.ShardFormats;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A sharded dataset: one or more {@link Column}s with the same number of records, record {@code i} of
 * every column belonging to sample {@code i}.
 *
 * <p>Formats: NumPy {@code .npy} and {@code .npz} (each member a column; deflated members decoded on the host),
 * Arrow IPC (compressed bodies decoded on the host), raw records ({@code .bin} with a JSON sidecar) and safetensors, found by
 * name or listed in a {@code dataset.json} manifest ({@link #open(Path)}). Which suffixes are shards and how each is
 * read is the format registry's ({@link ShardFormats}). Immutable and thread-safe; holds no open files.
 */
public final class Dataset {
    /** {@code <column>-<NNNNN><suffix>}, for every registered suffix. */
    private static final Pattern SHARD_NAME = Pattern.compile("^(.*)-(\\d+)" + ShardFormats.suffixGroup() + "$");

    private final Path root;
    /** What messages name: the one shard file of a dataset that is one file, else {@link #root}. */
    private final Path where;
    private final List<Column> columns;

    private Dataset(Path root, List<Column> columns) {
        this(root, root, columns);
    }

    private Dataset(Path root, Path where, List<Column> columns) {
        this.root = root;
        this.where = where;
        this.columns = List.copyOf(columns);
        long n = columns.get(0).recordCount();
        for (Column c : columns) {
            if (c.recordCount() != n) {
                throw new IllegalArgumentException(where + ": column '" + c.name() + "' has " + c.recordCount()
                        + " records but column '" + columns.get(0).name() + "' has " + n);
            }
        }
    }

    /**
     * Opens a dataset directory, or a single shard file.
     *
     * <p>A directory with a {@code dataset.json} manifest is opened as the manifest says (format, columns, shard
     * files and record counts, each checked against the shard). Otherwise its shards are found by name:
     * {@code <column>-<NNNNN>.npy}, {@code <column>-<NNNNN>.bin} (raw records with a {@code .bin.json} sidecar),
     * or {@code <name>-<NNNNN>.safetensors}, where every tensor is a column and record {@code i} is row {@code i}
     * along the tensor's first axis. One format per directory; each column's shards numbered 0, 1, 2, ...
     * without gaps or duplicates; every shard entry a regular file (a FIFO, a directory or a dangling link is
     * an error, not skipped), so that no shard is silently lost or added.
     *
     * @param dirOrFile a directory of shards or one shard
     * @return the dataset
     * @throws IOException if the directory has no shards, mixes formats, or a shard or the manifest is malformed
     *     (a {@link dev.gdsloader.formats.FormatException} naming file and offset)
     * @throws IllegalArgumentException if columns disagree on record counts, or shards of one column on
     *     dtype or record shape
     */
    public static Dataset open(Path dirOrFile) throws IOException {
        return open(dirOrFile, List.of());
    }

    /**
     * Like {@link #open(Path)}, keeping only the named columns, in that order; only their shards' runs are opened and
     * checked, so a column the loader cannot read (an Arrow Utf8, dictionary or nullable column, say) does not stop the
     * others from loading. The directory's shard numbering and every file's structure are still checked.
     *
     * @param dirOrFile a directory of shards or one shard
     * @param columns columns to keep, in this order; empty keeps all
     * @return the dataset of those columns
     * @throws IOException as for {@link #open(Path)}
     * @throws IllegalArgumentException as for {@link #open(Path)}, or if a named column does not exist (naming the
     *     ones that do), or is named twice
     */
    public static Dataset open(Path dirOrFile, List<String> columns) throws IOException {
        if (columns.size() != new java.util.HashSet<>(columns).size()) {
            throw new IllegalArgumentException(dirOrFile + ": columns " + columns + " name a column twice");
        }
        if (!Files.exists(dirOrFile) && !Files.isSymbolicLink(dirOrFile)) {
            throw new java.nio.file.NoSuchFileException(dirOrFile.toString(), null, "no such file or directory");
        }
        if (Files.isDirectory(dirOrFile)) {
            Path manifest = dirOrFile.resolve(DatasetManifest.FILE_NAME);
            if (Files.exists(manifest)) {
                return fromManifest(dirOrFile, DatasetManifest.read(manifest), columns);
            }
            List<Path> files;
            try (Stream<Path> s = Files.list(dirOrFile)) {
                files = s.filter(Dataset::isShardName).sorted().toList();
            }
            if (files.isEmpty()) {
                throw new IOException(dirOrFile + ": no " + ShardFormats.suffixList()
                        + " shards (and no dataset.json) in this directory");
            }
            List<String> kinds = files.stream().map(Dataset::extension).distinct().toList();
            if (kinds.size() > 1) {
                throw new IOException(dirOrFile + ": mixes shard formats " + kinds + ": one format per dataset directory");
            }
            Map<String, List<RecordLayout>> all = group(dirOrFile, files, true, wanted(columns));
            return new Dataset(dirOrFile, kept(dirOrFile, false, files, all, columns));
        }
        return ofShards(dirOrFile.toAbsolutePath().getParent(), List.of(dirOrFile), columns);
    }

    /** A predicate of the columns to open: all, or the named ones. */
    private static Predicate<String> wanted(List<String> columns) {
        return columns.isEmpty() ? c -> true : columns::contains;
    }

    /**
     * The columns of {@link #group}'s map to keep (all, or the named ones in that order), each checked to exist and to
     * have record runs.
     */
    private static List<Column> kept(Path where, boolean oneFile, List<Path> files, Map<String, List<RecordLayout>> all,
                                     List<String> columns) throws IOException {
        List<String> names = columns.isEmpty() ? List.copyOf(all.keySet()) : columns;
        List<Column> kept = new ArrayList<>();
        for (String name : names) {
            if (!all.containsKey(name)) {
                throw new IllegalArgumentException(where + ": no column '" + name + "'; columns are " + List.copyOf(all.keySet()));
            }
            requireBatches(where, oneFile, files, all, name);
            kept.add(new Column(name, all.get(name)));
        }
        return kept;
    }

    /**
     * Groups shard files into columns by name ({@code <column>-<NNNNN>.npy|.bin}, ordered by NNNNN; the tensors
     * of {@code .safetensors} files).
     *
     * @param root directory to name in messages
     * @param files shard files
     * @return the dataset
     * @throws IOException if a shard is malformed
     * @throws IllegalArgumentException if the columns disagree on record counts
     */
    public static Dataset ofShards(Path root, List<Path> files) throws IOException {
        return ofShards(root, files, List.of());
    }

    /**
     * Like {@link #ofShards(Path, List)}, keeping only the named columns (in that order) before the columns'
     * record counts are compared: a safetensors file whose tensors differ in length along their first axis
     * (a checkpoint's weights, say) can still be loaded by the tensors that do agree. Only the named columns' runs
     * are opened, so an Arrow file whose other columns the device path refuses (strings, nulls) still loads by its
     * fixed-width ones.
     *
     * @param root directory to name in messages
     * @param files shard files
     * @param columns columns (tensors, Arrow columns) to keep; empty keeps all
     * @return the dataset
     * @throws IOException if a shard is malformed
     * @throws IllegalArgumentException if a named column does not exist, or the kept columns disagree on
     *     record counts
     */
    public static Dataset ofShards(Path root, List<Path> files, List<String> columns) throws IOException {
        // a dataset of one file: messages name that file, not the directory it is in
        Path where = files.size() == 1 ? files.get(0) : root;
        Map<String, List<RecordLayout>> all = group(root, files, false, wanted(columns));
        return new Dataset(root, where, kept(where, files.size() == 1, files, all, columns));
    }

    /**
     * A shard by its name: a known extension, and not hidden. Hidden files are never shards: the cuFile probe
     * ({@code .gdsloader-probe-*.bin}) and editors' and copy tools' temporary files live among the shards, and
     * another process's probe file must not become a raw shard or an "unlisted shard" warning.
     */
    private static boolean isShardName(Path p) {
        return extension(p) != null && !p.getFileName().toString().startsWith(".");
    }

    /** Arrow files of a schema and no record batches give a column no runs: say so, not "column 'x' has no shards". */
    private static void requireBatches(Path where, boolean oneFile, List<Path> files, Map<String, List<RecordLayout>> all,
                                       String column) throws IOException {
        if (all.get(column).isEmpty() && !files.isEmpty()
                && files.stream().allMatch(f -> ShardFormats.ARROW.equals(ShardFormats.of(f).orElse(null)))) {
            throw new IOException(where + ": " + (oneFile ? "has" : "its Arrow files have")
                    + " a schema (columns " + List.copyOf(all.keySet()) + ") but no record batches: no records to load");
        }
    }

    private static String extension(Path p) {
        return ShardFormats.suffixOf(p).orElse(null);
    }

    /** Opens the dataset a manifest describes (its named columns; all if none), checking each shard against its entry. */
    private static Dataset fromManifest(Path dir, DatasetManifest m, List<String> selected) throws IOException {
        List<Column> columns = new ArrayList<>();
        List<ColumnEntry> entries = new ArrayList<>();
        for (String name : selected) {
            try {
                entries.add(m.column(name));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(dir.resolve(DatasetManifest.FILE_NAME) + ": " + e.getMessage(), e);
            }
        }
        for (ColumnEntry c : selected.isEmpty() ? m.columns() : entries) {
            List<RecordLayout> shards = new ArrayList<>();
            if (m.shardsOf(c.name()).isEmpty()) {
                throw new IOException(dir.resolve(DatasetManifest.FILE_NAME) + ": column '" + c.name()
                        + "' has no shards: expected at least one entry with \"column\": \"" + c.name() + "\" in \"shards\"");
            }
            for (ShardEntry e : m.shardsOf(c.name())) {
                Path f = e.resolve(dir);
                if (!Files.isRegularFile(f)) {
                    throw new IOException(dir.resolve(DatasetManifest.FILE_NAME) + ": shard " + e.file() + " of column '"
                            + c.name() + "' cannot be read: " + ShardFiles.kind(f));
                }
                List<RecordLayout> parts = openShards(f, c.name());
                long records = parts.stream().mapToLong(RecordLayout::recordCount).sum();
                for (RecordLayout l : parts) {
                    if (records != e.records() || l.dtype() != c.dtype()
                            || !java.util.Arrays.equals(l.recordShape(), c.recordShape())) {
                        throw new IOException(f + ": holds " + records + " records of " + l.dtype()
                                + java.util.Arrays.toString(l.recordShape()) + " but dataset.json says " + e.records() + " of "
                                + c.dtype() + java.util.Arrays.toString(c.recordShape()));
                    }
                }
                shards.addAll(parts);
            }
            columns.add(new Column(c.name(), shards));
        }
        if (columns.isEmpty()) {
            throw new IOException(dir.resolve(DatasetManifest.FILE_NAME) + ": lists no columns");
        }
        java.util.Set<Path> listed = new java.util.HashSet<>();
        m.shards().forEach(e -> listed.add(e.resolve(dir).normalize()));
        try (Stream<Path> s = Files.list(dir)) {
            List<Path> unlisted = s.filter(p -> isShardName(p) && !listed.contains(p.normalize())).sorted().toList();
            if (!unlisted.isEmpty()) {
                java.util.logging.Logger.getLogger(Dataset.class.getName()).warning(() -> dir + ": " + unlisted.size()
                        + " shard file(s) that dataset.json does not list are not loaded: " + unlisted.stream().limit(5)
                        .map(p -> p.getFileName().toString()).toList());
            }
        }
        return new Dataset(dir, columns);
    }

    /**
     * Opens one shard file as runs of records of one column: one run, or for an Arrow file one per record batch (the
     * registry's reader for the file's suffix, {@link ShardFileFormat#open}).
     *
     * @param file a shard file
     * @param column the column (tensor, npz member, Arrow column) to read; ignored by one-column formats
     * @return its record runs, in order
     * @throws IOException if the file is malformed or of an unknown format
     */
    public static List<RecordLayout> openShards(Path file, String column) throws IOException {
        return ShardFormats.require(file).open(file, column);
    }

    /**
     * Opens one shard that is one run of records: any registered format but an Arrow file of several record batches.
     *
     * @param file a {@code .npy}, {@code .npz}, {@code .bin} (with its {@code .bin.json} sidecar), {@code .safetensors},
     *     or a one-batch Arrow file
     * @param column for {@code .safetensors}, the tensor to read as records; for {@code .npz}, the member
     *     ({@code column.npy}); for Arrow, the column; ignored otherwise
     * @return the shard's record layout
     * @throws IOException if the file is malformed, of an unknown format, or holds other than one run
     */
    public static RecordLayout openShard(Path file, String column) throws IOException {
        List<RecordLayout> runs = openShards(file, column);
        if (runs.size() != 1) {
            throw new IOException(file + ": holds " + runs.size() + " record batches, expected one run of records "
                    + "(open it with openShards)");
        }
        return runs.get(0);
    }

    /**
     * Groups shards into columns, by name; {@code wholeColumns}: the files are all a directory has, so numbering must be
     * complete. Only the {@code wanted} columns' runs are opened; the others are listed with no runs.
     */
    private static Map<String, List<RecordLayout>> group(Path root, List<Path> files, boolean wholeColumns,
                                                         Predicate<String> wanted) throws IOException {
        record Named(String column, long number, Path file) { }
        List<Named> named = new ArrayList<>();
        for (Path f : files) {
            if (!Files.isRegularFile(f)) {
                // a FIFO or device would block or never end; a directory is not a shard
                throw ShardFiles.notRegular(f);
            }
            String fn = f.getFileName().toString();
            Matcher m = SHARD_NAME.matcher(fn);
            String ext = extension(f);
            named.add(m.matches() ? new Named(m.group(1), parseShardNumber(f, m.group(2)), f)
                    : new Named(ext == null ? fn : fn.substring(0, fn.length() - ext.length()), 0, f));
        }
        named.sort(Comparator.comparing(Named::column).thenComparingLong(Named::number));
        Map<String, List<RecordLayout>> byColumn = new LinkedHashMap<>();
        Map<String, List<String>> stemColumns = new LinkedHashMap<>();
        Named previous = null;
        for (Named n : named) {
            if (wholeColumns) {
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
            }
            previous = n;
            add(byColumn, stemColumns, n.column(), n.file(), wanted);
        }
        return byColumn;
    }

    /**
     * Adds a shard file to its column(s): a file of named columns (npz, safetensors, Arrow) adds one shard (one per
     * record batch for Arrow) to each column it holds, a one-column file to the column of its name's stem; files of one
     * name stem must hold the same columns. Only the {@code wanted} columns' runs are opened.
     */
    private static void add(Map<String, List<RecordLayout>> byColumn, Map<String, List<String>> stemColumns, String stem,
                            Path file, Predicate<String> wanted) throws IOException {
        ShardFileFormat format = ShardFormats.require(file);
        Map<String, List<RecordLayout>> opened = format.openColumns(file, stem, wanted); // one parse of the file
        List<String> names = List.copyOf(opened.keySet());
        List<String> before = stemColumns.putIfAbsent(stem, names);
        if (before != null && !new java.util.HashSet<>(before).equals(new java.util.HashSet<>(names))) {
            throw new IOException(file + ": holds " + names + " but the other '" + stem + "' shards hold " + before
                    + ": every shard of one name must hold the same columns");
        }
        for (var c : opened.entrySet()) {
            byColumn.computeIfAbsent(c.getKey(), k -> new ArrayList<>()).addAll(c.getValue());
        }
    }

    private static long parseShardNumber(Path f, String digits) throws IOException {
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw new IOException(f + ": shard number " + digits + " is too large");
        }
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
                new IllegalArgumentException(where + ": no column '" + name + "'; columns are "
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
        return new Dataset(root, where, names.stream().map(this::column).toList());
    }
}
