package dev.gdsloader.formats.registry;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.RecordLayout;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * One shard file format, everything the project knows about it in one place: the file-name suffixes that mark it, its
 * reader (a file's columns and their record runs), its writer where one exists, its inspector (what
 * {@code gdsloader inspect} prints) and its verifier (what {@code gdsloader verify} checks against
 * {@code dataset.json}). The formats are listed in {@link ShardFormats}; the dataset opener, the manifest's verify, the
 * writers' claim of a directory and the {@code inspect} and {@code verify} commands dispatch through it, so adding a
 * format is one new implementation and one line in {@link ShardFormats#all()}.
 *
 * <p>Implementations are stateless and thread-safe; every method opens and closes what it reads (no file stays open).
 */
public interface ShardFileFormat {

    /**
     * @return a short name for messages, e.g. {@code "npy"}, {@code "raw"}
     */
    String name();

    /**
     * @return the suffixes of this format's shard files, with their dot (e.g. {@code [".npy"]}); at least one, none
     *     shared with another format
     */
    List<String> suffixes();

    /**
     * The columns of a shard file that the loader cannot read at all in this format (Arrow's dictionary-encoded columns),
     * for a caller that loads the others by name, as the API does when given columns. Reads the file's header only.
     *
     * @param file a shard file of this format
     * @return those columns' names, in file order; empty for most formats and files
     * @throws IOException if the header cannot be read (a {@link FormatException} naming file and offset)
     */
    default List<String> unloadableColumns(Path file) throws IOException {
        return List.of();
    }

    /**
     * @return suffixes of the files that belong beside a shard (the raw format's {@code .bin.json} sidecar), empty for
     *     most formats; a writer that claims a directory treats them as part of the shard
     */
    default List<String> sidecarSuffixes() {
        return List.of();
    }

    /**
     * @return true when a file holds named columns (npz members, safetensors tensors, Arrow columns): {@link #columns}
     *     reads their names; false (the default) when a file is one column named by its file name's stem
     *     ({@code <column>-NNNNN})
     */
    default boolean namedColumns() {
        return false;
    }

    /**
     * The columns a file holds, in the file's order.
     *
     * @param file a shard file of this format
     * @param stem the file's name without its suffix and shard number, the column's name for a one-column format
     * @return the column names; {@code [stem]} (the default) for a format without {@link #namedColumns()}
     * @throws IOException if the file is malformed (a {@link dev.gdsloader.formats.FormatException} naming file and
     *     offset) or cannot be read
     */
    default List<String> columns(Path file, String stem) throws IOException {
        return List.of(stem);
    }

    /**
     * The reader: one column of a file as runs of records whose bytes lie at known extents (or are decoded on the
     * host: {@link dev.gdsloader.formats.HostDecodedRecords}). No record data is read.
     *
     * @param file a shard file of this format
     * @param column the column (npz member, tensor, Arrow column); ignored by one-column formats
     * @return its runs in record order: one run, or one per Arrow record batch
     * @throws IOException if the file is malformed, or the column is missing or cannot be read as fixed-width records
     *     (naming the file, the offset and what was expected)
     */
    List<RecordLayout> open(Path file, String column) throws IOException;

    /**
     * The reader for a whole file: its columns, in the file's order, each with its runs where {@code wanted} accepts it
     * (an empty list where it does not; those are not opened). The default reads {@link #columns} and then
     * {@link #open} per wanted column; a format whose {@code open} parses the whole file (Arrow's footer and schema)
     * overrides it to parse once, so that a file's cost is linear in its columns.
     *
     * @param file a shard file of this format
     * @param stem as in {@link #columns}
     * @param wanted which columns to open
     * @return per column name, in the file's order (a name held twice appears once): its runs, or an empty list
     * @throws IOException as {@link #columns} and {@link #open}
     */
    default Map<String, List<RecordLayout>> openColumns(Path file, String stem, Predicate<String> wanted) throws IOException {
        Map<String, List<RecordLayout>> out = new LinkedHashMap<>();
        for (String c : columns(file, stem)) {
            if (!out.containsKey(c)) {
                out.put(c, wanted.test(c) ? open(file, c) : List.of());
            }
        }
        return out;
    }

    /**
     * @return the writer of this format's shards, or empty where the project writes none (npz)
     */
    default Optional<ShardWriter> writer() {
        return Optional.empty();
    }

    /**
     * The inspector: prints a file's structure, read from its header or metadata (what {@code gdsloader inspect}
     * prints under the file's name): records, dtype, shapes, byte extents, alignment.
     *
     * @param file a shard file of this format
     * @param out where the lines go
     * @throws IOException if the file is malformed or cannot be read
     */
    void inspect(Path file, PrintStream out) throws IOException;

    /**
     * The verifier: compares what a file holds of one column with what {@code dataset.json} lists for it: the number
     * of records, the dtype and the record shape (sizes and checksums are compared by the manifest itself).
     *
     * @param file a shard file of this format, present and regular
     * @param column the column the manifest lists the file under
     * @param records the records the manifest lists
     * @param dtype the column's dtype in the manifest
     * @param recordShape the column's record shape in the manifest
     * @return the first mismatch as one line starting with the file's path, or empty when it matches; a file that cannot
     *     be read is a mismatch too (its line says why)
     */
    default Optional<String> verify(Path file, String column, long records, DType dtype, long[] recordShape) {
        List<RecordLayout> runs;
        try {
            runs = open(file, column);
        } catch (IOException | IllegalArgumentException e) {
            return Optional.of(file + ": cannot be read as a " + name() + " shard: " + e.getMessage());
        }
        long held = runs.stream().mapToLong(RecordLayout::recordCount).sum();
        if (held != records) {
            return Optional.of(file + ": holds " + held + " records of column '" + column + "', but the manifest lists "
                    + records);
        }
        for (RecordLayout l : runs) {
            if (l.dtype() != dtype || !Arrays.equals(l.recordShape(), recordShape)) {
                return Optional.of(file + ": holds " + l.dtype().name() + " records of shape "
                        + Arrays.toString(l.recordShape()) + " in column '" + column + "', but the manifest lists "
                        + dtype.name() + " " + Arrays.toString(recordShape));
            }
        }
        return Optional.empty();
    }

    /**
     * Whether a file name carries one of this format's suffixes.
     *
     * @param fileName a file name (not a path)
     * @return the suffix it ends with, or empty
     */
    default Optional<String> suffixOf(String fileName) {
        List<String> matching = new ArrayList<>();
        for (String s : suffixes()) {
            if (fileName.endsWith(s)) {
                matching.add(s);
            }
        }
        return matching.stream().max(java.util.Comparator.comparingInt(String::length));
    }
}
