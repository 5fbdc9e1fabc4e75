package dev.gdsloader.formats.idx;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import dev.gdsloader.formats.manifest.ColumnEntry;
import dev.gdsloader.formats.manifest.DatasetManifest;
import dev.gdsloader.formats.manifest.ShardEntry;
import dev.gdsloader.formats.manifest.ShardFormat;

/**
 * Converts an IDX file (MNIST, Fashion-MNIST) into {@code .npy} shards split along axis 0.
 *
 * <p>The output goes to {@code <outDir>/<split>/<column>-00000.npy}, {@code -00001.npy}, ...,
 * where split and column come from the IDX file name: {@code train-images-idx3-ubyte.gz} gives
 * {@code train/images-00000.npy}; {@code t10k-labels-idx1-ubyte.gz} gives
 * {@code test/labels-00000.npy}; a name without {@code '-'} gives split = the name, column
 * {@code data}. Each shard keeps the IDX element type and the per-record shape, e.g. MNIST images
 * become uint8 {@code [n, 28, 28]} shards and labels uint8 {@code [n]} shards.
 *
 * <p>Stateless and thread-safe, except that concurrent conversions to the same output files
 * overwrite each other.
 */
public final class IdxToNpy {

    private IdxToNpy() {
    }

    /**
     * Reads {@code idxFile} and writes it as {@code .npy} shards of at most
     * {@code recordsPerShard} records each, the last one possibly shorter. An IDX array with 0
     * records gives one shard with 0 records. Existing shards of the same column are refused
     * ({@link dev.gdsloader.formats.registry.ShardFormats#claim}).
     *
     * @param idxFile a plain or gzip-compressed IDX file (see {@link IdxReader})
     * @param outDir the output root; {@code <outDir>/<split>} is created if missing
     * @param recordsPerShard most records per shard, {@code >= 1}
     * @return the written shard paths, in record order
     * @throws IllegalArgumentException if {@code recordsPerShard < 1} or the file name gives no
     *     split or column
     * @throws dev.gdsloader.formats.FormatException if the IDX file is malformed
     * @throws IOException if reading or writing fails
     */
    public static List<Path> convert(Path idxFile, Path outDir, long recordsPerShard)
            throws IOException {
        return convert(idxFile, outDir, recordsPerShard, false);
    }

    /**
     * As {@link #convert(Path, Path, long)}, optionally replacing existing shards of the same column.
     *
     * @param idxFile a plain or gzip-compressed IDX file
     * @param outDir the output root
     * @param recordsPerShard most records per shard, {@code >= 1}
     * @param replace delete existing shards of the column first instead of refusing
     * @return the written shard paths, in record order
     * @throws IOException if reading or writing fails, or shards exist and {@code replace} is false
     */
    public static List<Path> convert(Path idxFile, Path outDir, long recordsPerShard, boolean replace)
            throws IOException {
        if (recordsPerShard < 1) {
            throw new IllegalArgumentException("recordsPerShard must be >= 1, got " + recordsPerShard);
        }
        return convert(idxFile, outDir, recordsPerShard, replace, ShardFormat.NPY);
    }

    /**
     * Where {@link #convert(Path, Path, long, boolean, ShardFormat)} would put an IDX file's shards, so a caller
     * converting several files can refuse two that map to the same split and column before writing anything.
     *
     * @param idxFile the IDX file
     * @return {@code <split>/<column>}, e.g. {@code train/images}
     * @throws IllegalArgumentException if the file name gives no split and column
     */
    public static String target(Path idxFile) {
        IdxFileName name = IdxFileName.parse(idxFile.getFileName().toString());
        return name.split() + "/" + name.column();
    }

    /**
     * Checks, without writing or deleting anything, what {@link #convert(Path, Path, long, boolean, ShardFormat)}
     * checks about the output: the manifest's format, and (unless {@code replace}) no shards of the column yet.
     *
     * @param idxFile the IDX file
     * @param outDir the output root
     * @param replace existing shards of the column would be replaced
     * @param format the shard format
     * @throws IOException naming the conflict
     */
    public static void checkOutput(Path idxFile, Path outDir, boolean replace, ShardFormat format) throws IOException {
        IdxFileName name = IdxFileName.parse(idxFile.getFileName().toString());
        Path dir = outDir.resolve(name.split());
        requireFormat(dir, name, format);
        if (!replace) {
            dev.gdsloader.formats.registry.ShardFormats.claim(dir, name.column(), false);
        }
    }

    /**
     * Converts {@code idxFile} into shards of any format — {@code <column>-NNNNN.npy}, {@code .bin} (with its
     * sidecar), {@code .safetensors} (one tensor named after the column) or {@code .arrow} (one column) — and
     * adds them to the {@code dataset.json} manifest of {@code <outDir>/<split>} (created, or extended when it
     * already lists other columns of the same format): {@link #convertAll} of one file.
     *
     * @param idxFile a plain or gzip-compressed IDX file
     * @param outDir the output root
     * @param recordsPerShard most records per shard, {@code >= 1}
     * @param replace replace existing shards of the column (once the new ones are complete) instead of refusing
     * @param format the shard format
     * @return the written shard paths, in record order
     * @throws IOException as for {@link #convertAll}
     */
    public static List<Path> convert(Path idxFile, Path outDir, long recordsPerShard, boolean replace, ShardFormat format)
            throws IOException {
        return convertAll(List.of(idxFile), outDir, recordsPerShard, replace, format).get(idxFile);
    }

    /**
     * Converts IDX files into shards, as {@link #convert(Path, Path, long, boolean, ShardFormat)} does one, checking
     * every input before writing anything. The files of one split (e.g. {@code train-images} and
     * {@code train-labels}) are staged together and put in place by one commit
     * ({@link dev.gdsloader.formats.StagedFiles}), the manifest last: a run stopped part way leaves each split
     * directory with its previous files or with all of the new ones. Old shards of a replaced column are removed
     * only in that commit.
     *
     * @param idxFiles plain or gzip-compressed IDX files, no two of one split and column
     * @param outDir the output root
     * @param recordsPerShard most records per shard, {@code >= 1}
     * @param replace replace existing shards of the columns instead of refusing
     * @param format the shard format
     * @return each input's written shard paths, in record order, in input order
     * @throws IllegalArgumentException if {@code recordsPerShard < 1}, a file name gives no split or column, two
     *     inputs give the same split and column, or two columns of one split hold different record counts (an input
     *     and another input, or an input and a column the split's manifest keeps: both files and counts are named)
     * @throws dev.gdsloader.formats.FormatException if an IDX file is malformed
     * @throws IOException if reading or writing fails, shards exist and {@code replace} is false, or a split's
     *     manifest lists another format
     */
    public static Map<Path, List<Path>> convertAll(List<Path> idxFiles, Path outDir, long recordsPerShard, boolean replace,
                                                   ShardFormat format) throws IOException {
        if (recordsPerShard < 1) {
            throw new IllegalArgumentException("recordsPerShard must be >= 1, got " + recordsPerShard);
        }
        Map<String, Map<Path, IdxArray>> splits = new LinkedHashMap<>();
        for (Path f : idxFiles) {
            IdxFileName name = IdxFileName.parse(f.getFileName().toString());
            Path dir = outDir.resolve(name.split());
            requireFormat(dir, name, format); // before anything is read or written
            if (!replace) {
                dev.gdsloader.formats.registry.ShardFormats.claim(dir, name.column(), false);
            }
            Map<Path, IdxArray> split = splits.computeIfAbsent(name.split(), k -> new LinkedHashMap<>());
            for (Path other : split.keySet()) {
                if (IdxFileName.parse(other.getFileName().toString()).column().equals(name.column())) {
                    throw new IllegalArgumentException(f + " and " + other + " both convert to " + dir.resolve(name.column())
                            + "-NNNNN shards");
                }
            }
            split.put(f, null);
        }
        for (Map.Entry<String, Map<Path, IdxArray>> split : splits.entrySet()) {
            for (Map.Entry<Path, IdxArray> e : split.getValue().entrySet()) {
                e.setValue(IdxReader.read(e.getKey()));
            }
            requireOneRowCount(outDir.resolve(split.getKey()), split.getValue());
        }
        Map<Path, List<Path>> written = new LinkedHashMap<>();
        for (Map.Entry<String, Map<Path, IdxArray>> split : splits.entrySet()) {
            written.putAll(writeSplit(outDir.resolve(split.getKey()), split.getValue(), recordsPerShard, format));
        }
        return written;
    }

    /**
     * Refuses columns of one split with different record counts: the inputs among themselves, and each input against
     * the columns the split's manifest keeps (those no input replaces).
     */
    private static void requireOneRowCount(Path dir, Map<Path, IdxArray> inputs) throws IOException {
        Path first = null;
        for (Map.Entry<Path, IdxArray> e : inputs.entrySet()) {
            if (first == null) {
                first = e.getKey();
            } else if (e.getValue().recordCount() != inputs.get(first).recordCount()) {
                throw new IllegalArgumentException(first + " holds " + inputs.get(first).recordCount() + " records but "
                        + e.getKey() + " holds " + e.getValue().recordCount() + ": the columns of one split need one record "
                        + "per row each; convert matching files (e.g. train-images with train-labels)");
            }
        }
        Path existing = dir.resolve(DatasetManifest.FILE_NAME);
        if (first == null || !Files.exists(existing)) {
            return;
        }
        DatasetManifest m = DatasetManifest.read(existing);
        java.util.Set<String> replaced = new java.util.HashSet<>();
        for (Path f : inputs.keySet()) {
            replaced.add(IdxFileName.parse(f.getFileName().toString()).column());
        }
        for (ColumnEntry c : m.columns()) {
            long kept = m.shardsOf(c.name()).stream().mapToLong(ShardEntry::records).sum();
            if (!replaced.contains(c.name()) && kept != inputs.get(first).recordCount()) {
                throw new IllegalArgumentException(existing + " lists " + kept + " records of column '" + c.name() + "' but "
                        + first + " holds " + inputs.get(first).recordCount() + ": the columns of one split need one record "
                        + "per row each");
            }
        }
    }

    /** Stages one split's columns, then commits them with the manifest (keeping the columns no input replaces). */
    private static Map<Path, List<Path>> writeSplit(Path dir, Map<Path, IdxArray> inputs, long recordsPerShard,
                                                    ShardFormat format) throws IOException {
        Map<Path, List<Path>> written = new LinkedHashMap<>();
        try (dev.gdsloader.formats.StagedFiles staged = dev.gdsloader.formats.StagedFiles.in(dir)) {
            DatasetManifest.Builder b = DatasetManifest.builder(format);
            List<String> columns = new ArrayList<>();
            List<Path> obsolete = new ArrayList<>();
            for (Path f : inputs.keySet()) {
                String column = IdxFileName.parse(f.getFileName().toString()).column();
                columns.add(column);
                obsolete.addAll(dev.gdsloader.formats.registry.ShardFormats.existing(dir, column));
            }
            keepOtherColumns(dir, format, columns, b);
            for (Map.Entry<Path, IdxArray> e : inputs.entrySet()) {
                written.put(e.getKey(), writeColumn(staged, e.getKey(), e.getValue(), recordsPerShard, format, b));
            }
            staged.commit(obsolete, DatasetManifest.FILE_NAME,
                    b.build(staged::locate).toJson().getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        return written;
    }

    /** Writes one IDX array's shards to staged names and declares its column and shards in {@code b}. */
    private static List<Path> writeColumn(dev.gdsloader.formats.StagedFiles staged, Path idxFile, IdxArray array,
                                          long recordsPerShard, ShardFormat format, DatasetManifest.Builder b)
            throws IOException {
        String column = IdxFileName.parse(idxFile.getFileName().toString()).column();
        long[] shape = array.shape();
        long[] recordShape = java.util.Arrays.copyOfRange(shape, 1, shape.length);
        long records = array.recordCount();
        long recordBytes = array.recordBytes();
        // an Arrow FixedSizeList holds a record flat: the manifest lists the shape the file holds
        b.column(column, array.dtype(), format == ShardFormat.ARROW && recordShape.length > 1
                ? new long[] {recordBytes / array.dtype().itemSize()} : recordShape);
        byte[] data = array.littleEndianData();
        List<Path> written = new ArrayList<>();
        long first = 0;
        do {
            long count = Math.min(recordsPerShard, records - first);
            String name = String.format("%s-%05d%s", column, written.size(), format.suffix());
            Path shard = staged.stage(name);
            for (String sidecar : format == ShardFormat.RAW ? List.of(name + ".json") : List.<String>of()) {
                staged.stage(sidecar); // the raw writer's sidecarOf(shard): renamed with it
            }
            // Fits an int: the whole array is at most IdxReader.MAX_DATA_BYTES.
            int from = (int) (first * recordBytes);
            int len = (int) (count * recordBytes);
            format.writer().write(shard, column, array.dtype(), recordShape,
                    java.util.Arrays.copyOfRange(data, from, from + len), Map.of("source", idxFile.getFileName().toString()));
            written.add(staged.dir().resolve(name));
            b.shard(name, column, count);
            first += count;
        } while (first < records);
        return List.copyOf(written);
    }

    /** Refuses a split directory whose manifest lists another format: one column replaced would leave two formats. */
    private static void requireFormat(Path dir, IdxFileName name, ShardFormat format) throws IOException {
        Path manifest = dir.resolve(DatasetManifest.FILE_NAME);
        if (Files.exists(manifest) && DatasetManifest.read(manifest).format() != format) {
            throw new IOException(manifest + " lists " + DatasetManifest.read(manifest).format().jsonName()
                    + " shards; converting '" + name.column() + "' to " + format.jsonName()
                    + " would mix formats in one directory: convert into another directory");
        }
    }

    /** Declares in {@code b} the columns (and shards) the directory's manifest lists that no input replaces. */
    private static void keepOtherColumns(Path dir, ShardFormat format, List<String> replaced, DatasetManifest.Builder b)
            throws IOException {
        Path existing = dir.resolve(DatasetManifest.FILE_NAME);
        if (!Files.exists(existing)) {
            return;
        }
        DatasetManifest m = DatasetManifest.read(existing);
        if (m.format() != format) {
            throw new IOException(existing + " lists " + m.format().jsonName() + " shards; refusing to add "
                    + format.jsonName() + " shards of columns " + replaced + " to the same directory");
        }
        for (ColumnEntry c : m.columns()) {
            if (replaced.contains(c.name())) {
                continue;
            }
            b.column(c.name(), c.dtype(), c.recordShape());
            for (ShardEntry e : m.shardsOf(c.name())) {
                b.shard(e.file(), e.column(), e.records());
            }
        }
    }
}
