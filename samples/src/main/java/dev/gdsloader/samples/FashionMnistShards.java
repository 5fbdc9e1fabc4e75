package dev.gdsloader.samples;

import dev.gdsloader.formats.idx.IdxToNpy;
import dev.gdsloader.formats.manifest.DatasetManifest;
import dev.gdsloader.formats.manifest.ShardFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Fashion-MNIST as the samples train on it: Arrow IPC shards ({@code .arrow}, 10,000 records each) with columns
 * {@code images} ({@code FixedSizeList<uint8>[784]}, one 28 x 28 image per record) and {@code labels}
 * ({@code uint8}, class 0-9), in {@code WORK/train} and {@code WORK/test}, each with its {@code dataset.json}.
 * Written by the {@code formats} writers from the four IDX files (format: http://yann.lecun.com/exdb/mnist/;
 * Fashion-MNIST, MIT licence, github.com/zalandoresearch/fashion-mnist), plain or {@code .gz}.
 * Stateless; not safe to run twice at once on one work directory.
 */
final class FashionMnistShards {
    /** The IDX files, without their optional {@code .gz}. */
    private static final String[] FILES = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
        "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};
    /** Records per shard: six training shards and one test shard. */
    static final long RECORDS_PER_SHARD = 10_000;

    private FashionMnistShards() {
    }

    /**
     * Converts the IDX files of {@code idxDir} into Arrow shards under {@code work} unless both splits' manifests
     * are already there.
     *
     * @param idxDir directory with the four IDX files (plain or {@code .gz})
     * @param work output root
     * @throws IOException if a file is missing (named), malformed, or cannot be written
     */
    static void prepare(Path idxDir, Path work) throws IOException {
        if (Files.exists(work.resolve("train").resolve(DatasetManifest.FILE_NAME))
                && Files.exists(work.resolve("test").resolve(DatasetManifest.FILE_NAME))) {
            return;
        }
        for (String f : FILES) {
            Path plain = idxDir.resolve(f);
            Path gz = idxDir.resolve(f + ".gz");
            Path file = Files.exists(plain) ? plain : gz;
            if (!Files.exists(file)) {
                throw new IOException(idxDir + ": neither " + f + " nor " + f + ".gz is there (Fashion-MNIST IDX files)");
            }
            IdxToNpy.convert(file, work, RECORDS_PER_SHARD, true, ShardFormat.ARROW);
        }
    }
}
