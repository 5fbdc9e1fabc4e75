package dev.gdsloader.bench;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.StagedFiles;
import dev.gdsloader.formats.raw.RawShard;
import java.nio.charset.StandardCharsets;
import dev.gdsloader.formats.arrow.ArrowWriter;
import dev.gdsloader.formats.manifest.DatasetManifest;
import dev.gdsloader.formats.manifest.ShardFormat;
import dev.gdsloader.formats.registry.ShardFormats;
import dev.gdsloader.formats.raw.RawWriter;
import dev.gdsloader.formats.safetensors.SafetensorsWriter;
import dev.gdsloader.formats.safetensors.TensorData;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import dev.gdsloader.formats.npy.NpyWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Writes synthetic {@code .npy} shards for benchmarks: {@code data-NNNNN.npy}, each {@code uint8
 * [records, recordBytes]}, filled with seeded pseudo-random bytes (so every byte is checkable and no
 * compression or deduplication flatters the numbers). Stateless and thread-safe.
 *
 * <p>Every file is written under a hidden staged name in the directory and put in place by one
 * {@link StagedFiles#commit}, {@code dataset.json} last; old shards are removed only then. A run that
 * fails or is stopped before the commit leaves the directory's previous dataset as it was (see
 * {@link StagedFiles} for a process killed inside the commit).
 */
public final class SyntheticDataset {
    private SyntheticDataset() {
    }

    /**
     * As {@link #generate(Path, long, int, int, long, boolean)}, refusing a directory that already holds shards.
     *
     * @param dir output directory (created if missing)
     * @param totalBytes approximate total data bytes
     * @param shards number of shards
     * @param recordBytes bytes per record
     * @param seed seed of the byte stream
     * @return the shard files written, in order
     * @throws IOException on a write failure, or if {@code dir} already holds {@code data-*.npy} shards
     */
    public static List<Path> generate(Path dir, long totalBytes, int shards, int recordBytes, long seed) throws IOException {
        return generate(dir, totalBytes, shards, recordBytes, seed, false);
    }

    /**
     * @param dir output directory (created if missing)
     * @param totalBytes approximate total data bytes, &gt; 0; rounded down to whole records per shard
     * @param shards number of shards, &ge; 1
     * @param recordBytes bytes per record, &ge; 1
     * @param seed seed of the byte stream
     * @param replace replace existing {@code data-*} shards in {@code dir} (once the new ones are complete) instead of refusing
     * @return the shard files written, in order
     * @throws IOException on a write failure, or if {@code dir} already holds shards and {@code replace} is false
     * @throws IllegalArgumentException if the sizes leave a shard with no records
     */
    public static List<Path> generate(Path dir, long totalBytes, int shards, int recordBytes, long seed, boolean replace)
            throws IOException {
        return generate(dir, totalBytes, shards, recordBytes, seed, replace, 64);
    }

    /**
     * As {@link #generate(Path, long, int, int, long, boolean)}, with each shard's data starting at a multiple of
     * {@code dataAlignment} bytes (4096: records of 4 KiB multiples sit on storage blocks).
     *
     * @param dir output directory
     * @param totalBytes approximate total data bytes
     * @param shards number of shards
     * @param recordBytes bytes per record
     * @param seed seed of the byte stream
     * @param replace replace existing shards instead of refusing
     * @param dataAlignment data alignment of each shard, bytes (multiple of 64)
     * @return the shard files written, in order
     * @throws IOException on a write failure, or if {@code dir} already holds shards and {@code replace} is false
     */
    public static List<Path> generate(Path dir, long totalBytes, int shards, int recordBytes, long seed, boolean replace,
                                      int dataAlignment) throws IOException {
        return generate(dir, totalBytes, shards, recordBytes, seed, replace, dataAlignment, ShardFormat.NPY);
    }

    /**
     * As {@link #generate(Path, long, int, int, long, boolean, int)} in any shard format, with a
     * {@code dataset.json} manifest (record counts, bytes and CRC32C per shard) beside the shards.
     *
     * @param dir output directory
     * @param totalBytes approximate total data bytes
     * @param shards number of shards
     * @param recordBytes bytes per record
     * @param seed seed of the byte stream
     * @param replace replace existing shards instead of refusing
     * @param dataAlignment data alignment of each {@code .npy} shard, bytes (multiple of 64)
     * @param format NPY ({@code data-NNNNN.npy}), RAW ({@code data-NNNNN.bin} + sidecar), SAFETENSORS
     *     ({@code data-NNNNN.safetensors}, one tensor {@code data} of shape [records, recordBytes]) or ARROW
     *     ({@code data-NNNNN.arrow}, one {@code FixedSizeList<uint8>} column {@code data}, ~64 MiB record batches)
     * @return the shard files written, in order
     * @throws IOException on a write failure, or if {@code dir} already holds shards and {@code replace} is false
     */
    public static List<Path> generate(Path dir, long totalBytes, int shards, int recordBytes, long seed, boolean replace,
                                      int dataAlignment, ShardFormat format) throws IOException {
        if (shards < 1 || recordBytes < 1 || totalBytes < (long) shards * recordBytes) {
            throw new IllegalArgumentException("cannot make " + shards + " shards of " + recordBytes
                    + "-byte records from " + totalBytes + " bytes: every shard needs at least one record");
        }
        if (!replace) {
            ShardFormats.claim(dir, "data", false); // refuses existing shards; deletes nothing
        }
        long recordsPerShard = totalBytes / shards / recordBytes;
        long bytes = recordsPerShard * recordBytes;
        if ((format == ShardFormat.SAFETENSORS || format == ShardFormat.ARROW) && bytes > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException(format.jsonName() + " shards are written from memory: " + bytes
                    + " bytes per shard is too many; use more shards");
        }
        try (StagedFiles staged = StagedFiles.in(dir)) {
            List<Path> old = ShardFormats.existing(dir, "data"); // removed by the commit, once the new shards are complete
            List<Path> files = writeShards(staged, recordsPerShard, recordBytes, shards, seed, dataAlignment, format);
            DatasetManifest.Builder manifest = DatasetManifest.builder(format).column("data", DType.UINT8, recordBytes);
            for (Path f : files) {
                manifest.shard(f.getFileName().toString(), "data", recordsPerShard);
            }
            byte[] json = manifest.build(staged::locate).toJson().getBytes(StandardCharsets.UTF_8);
            staged.commit(old, DatasetManifest.FILE_NAME, json);
            return files;
        }
    }

    /** Writes every shard (and raw sidecar) to its staged name; returns the final paths, in order. */
    private static List<Path> writeShards(StagedFiles staged, long recordsPerShard, int recordBytes, int shards, long seed,
                                          int dataAlignment, ShardFormat format) throws IOException {
        long bytes = recordsPerShard * recordBytes;
        SplittableRandom rnd = new SplittableRandom(seed);
        ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20).order(ByteOrder.LITTLE_ENDIAN);
        List<Path> files = new ArrayList<>();
        long[] shape = {recordsPerShard, recordBytes};
        for (int s = 0; s < shards; s++) {
            String name = String.format("data-%05d%s", s, format.suffix());
            Path f = staged.stage(name);
            switch (format) {
                case NPY -> {
                    try (NpyWriter w = NpyWriter.create(f, DType.UINT8, shape, dataAlignment)) {
                        fill(rnd, buf, bytes, w::write);
                    }
                }
                case RAW -> {
                    try (FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                            StandardOpenOption.WRITE)) {
                        fill(rnd, buf, bytes, b -> {
                            while (b.hasRemaining()) {
                                ch.write(b);
                            }
                        });
                    }
                    staged.stage(RawShard.sidecarOf(Path.of(name)).toString()); // == sidecarOf(f), renamed with it
                    RawWriter.writeSidecar(f, DType.UINT8, new long[] {recordBytes}, recordsPerShard);
                }
                case SAFETENSORS -> {
                    byte[] data = new byte[(int) bytes];
                    ByteBuffer into = ByteBuffer.wrap(data);
                    fill(rnd, buf, bytes, into::put);
                    SafetensorsWriter.write(f, Map.of("data", new TensorData(DType.UINT8, shape, data)), Map.of());
                }
                case ARROW -> {
                    byte[] data = new byte[(int) bytes];
                    ByteBuffer into = ByteBuffer.wrap(data);
                    fill(rnd, buf, bytes, into::put);
                    // record batches of about 64 MiB, the loader's default batch
                    int rows = (int) Math.max(1, Math.min(recordsPerShard, (64L << 20) / recordBytes));
                    ArrowWriter.write(f, List.of(new ArrowWriter.ColumnData("data", DType.UINT8, new long[] {recordBytes}, data)),
                            rows);
                }
                default -> throw new IllegalStateException(format.toString());
            }
            files.add(staged.dir().resolve(name));
        }
        return files;
    }

    /** A consumer of the generated bytes. */
    @FunctionalInterface
    private interface Sink {
        void accept(ByteBuffer b) throws IOException;
    }

    private static void fill(SplittableRandom rnd, ByteBuffer buf, long bytes, Sink sink) throws IOException {
        for (long left = bytes; left > 0; ) {
            buf.clear();
            int n = (int) Math.min(buf.capacity(), left);
            for (int i = 0; i + 8 <= n; i += 8) {
                buf.putLong(rnd.nextLong());
            }
            while (buf.position() < n) {
                buf.put((byte) rnd.nextInt());
            }
            buf.flip();
            sink.accept(buf);
            left -= n;
        }
    }
}
