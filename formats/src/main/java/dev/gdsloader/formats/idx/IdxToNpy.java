package dev.gdsloader.formats.idx;

import dev.gdsloader.formats.npy.NpyWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

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
     * ({@link dev.gdsloader.formats.ShardFiles#claim}).
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
        IdxFileName name = IdxFileName.parse(idxFile.getFileName().toString());
        IdxArray array = IdxReader.read(idxFile);
        dev.gdsloader.formats.ShardFiles.claim(outDir.resolve(name.split()), name.column(), replace);
        Path dir = Files.createDirectories(outDir.resolve(name.split()));
        long[] shape = array.shape();
        long records = array.recordCount();
        long recordBytes = array.recordBytes();
        byte[] data = array.littleEndianData();
        List<Path> written = new ArrayList<>();
        long first = 0;
        do {
            long count = Math.min(recordsPerShard, records - first);
            Path shard = dir.resolve(String.format("%s-%05d.npy", name.column(), written.size()));
            long[] shardShape = shape.clone();
            shardShape[0] = count;
            try (NpyWriter writer = NpyWriter.create(shard, array.dtype(), shardShape)) {
                // Fits an int: the whole array is at most IdxReader.MAX_DATA_BYTES.
                writer.write(ByteBuffer.wrap(data, (int) (first * recordBytes),
                        (int) (count * recordBytes)));
            }
            written.add(shard);
            first += count;
        } while (first < records);
        return List.copyOf(written);
    }
}
