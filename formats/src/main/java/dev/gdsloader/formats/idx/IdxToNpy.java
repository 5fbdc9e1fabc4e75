package dev.gdsloader.formats.idx;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
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
     * already lists other columns of the same format).
     *
     * @param idxFile a plain or gzip-compressed IDX file
     * @param outDir the output root
     * @param recordsPerShard most records per shard, {@code >= 1}
     * @param replace delete existing shards of the column first instead of refusing
     * @param format the shard format
     * @return the written shard paths, in record order
     * @throws IOException if reading or writing fails, shards exist and {@code replace} is false, or the
     *     directory's manifest lists another format
     */
    public static List<Path> convert(Path idxFile, Path outDir, long recordsPerShard, boolean replace, ShardFormat format)
            throws IOException {
        if (recordsPerShard < 1) {
            throw new IllegalArgumentException("recordsPerShard must be >= 1, got " + recordsPerShard);
        }
        IdxFileName name = IdxFileName.parse(idxFile.getFileName().toString());
        IdxArray array = IdxReader.read(idxFile);
        Path dir = outDir.resolve(name.split());
        requireFormat(dir, name, format); // before anything is deleted
        dev.gdsloader.formats.registry.ShardFormats.claim(dir, name.column(), replace);
        Files.createDirectories(dir);
        long[] shape = array.shape();
        long[] recordShape = java.util.Arrays.copyOfRange(shape, 1, shape.length);
        long records = array.recordCount();
        long recordBytes = array.recordBytes();
        byte[] data = array.littleEndianData();
        List<Path> written = new ArrayList<>();
        List<Long> counts = new ArrayList<>();
        long first = 0;
        do {
            long count = Math.min(recordsPerShard, records - first);
            Path shard = dir.resolve(String.format("%s-%05d%s", name.column(), written.size(), format.suffix()));
            // Fits an int: the whole array is at most IdxReader.MAX_DATA_BYTES.
            int from = (int) (first * recordBytes);
            int len = (int) (count * recordBytes);
            format.writer().write(shard, name.column(), array.dtype(), recordShape,
                    java.util.Arrays.copyOfRange(data, from, from + len), java.util.Map.of("source", idxFile.getFileName().toString()));
            written.add(shard);
            counts.add(count);
            first += count;
        } while (first < records);
        // an Arrow FixedSizeList holds a record flat: the manifest lists the shape the file holds
        long[] listed = format == ShardFormat.ARROW && recordShape.length > 1
                ? new long[] {recordBytes / array.dtype().itemSize()} : recordShape;
        addToManifest(dir, format, name.column(), array.dtype(), listed, written, counts);
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

    /** Adds a column's shards to the directory's manifest, keeping the columns it already lists. */
    private static void addToManifest(Path dir, ShardFormat format, String column, dev.gdsloader.formats.DType dtype,
                                      long[] recordShape, List<Path> shards, List<Long> counts) throws IOException {
        DatasetManifest.Builder b = DatasetManifest.builder(format);
        Path existing = dir.resolve(DatasetManifest.FILE_NAME);
        if (Files.exists(existing)) {
            DatasetManifest m = DatasetManifest.read(existing);
            if (m.format() != format) {
                throw new IOException(existing + " lists " + m.format().jsonName() + " shards; refusing to add "
                        + format.jsonName() + " shards of column '" + column + "' to the same directory");
            }
            for (ColumnEntry c : m.columns()) {
                if (c.name().equals(column)) {
                    continue;
                }
                b.column(c.name(), c.dtype(), c.recordShape());
                for (ShardEntry e : m.shardsOf(c.name())) {
                    b.shard(e.file(), e.column(), e.records());
                }
            }
        }
        b.column(column, dtype, recordShape);
        for (int i = 0; i < shards.size(); i++) {
            b.shard(shards.get(i).getFileName().toString(), column, counts.get(i));
        }
        b.build(dir).write(dir);

    }
}
