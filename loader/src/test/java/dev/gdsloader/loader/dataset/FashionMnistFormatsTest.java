package dev.gdsloader.loader.dataset;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gdsloader.formats.idx.IdxToNpy;
import dev.gdsloader.formats.manifest.ShardFormat;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.path.ReadPath;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Fashion-MNIST's test split converted to every shard format loads through the loader with identical
 * per-record checksums. Skipped (with the reason) where the shared dataset is not beside the repository.
 */
class FashionMnistFormatsTest {
    @TempDir
    Path dir;

    private static Path dataset() {
        String prop = System.getProperty("gds.shared.dir");
        if (prop != null) {
            return Path.of(prop, "datasets", "fashion-mnist");
        }
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            Path c = p.resolveSibling("shared").resolve("datasets").resolve("fashion-mnist");
            if (Files.isDirectory(c)) {
                return c;
            }
        }
        return null;
    }

    /** @return CRC32C of every record of both columns, in order */
    private static long[] recordCrcs(Path split) throws IOException {
        long[] crcs = new long[2 * 10_000];
        try (GdsLoader loader = GdsLoader.builder(split).batchSize(777).path(ReadPath.HOST).build()) {
            for (Batch b : loader) {
                try (b) {
                    MemorySegment images = b.column("images").hostSegment();
                    MemorySegment labels = b.column("labels").hostSegment();
                    for (int i = 0; i < b.records(); i++) {
                        CRC32C c = new CRC32C();
                        c.update(images.asSlice(i * 784L, 784).asByteBuffer());
                        crcs[(int) b.recordIndex(i)] = c.getValue();
                        crcs[10_000 + (int) b.recordIndex(i)] = labels.get(ValueLayout.JAVA_BYTE, i);
                    }
                }
            }
        }
        return crcs;
    }

    @Test
    void everyFormatDeliversTheSameRecords() throws IOException {
        Path fm = dataset();
        assumeTrue(fm != null && Files.exists(fm.resolve("t10k-images-idx3-ubyte.gz")), "Fashion-MNIST not found beside the repository");
        long[] reference = null;
        for (ShardFormat f : ShardFormat.values()) {
            Path out = dir.resolve(f.jsonName());
            IdxToNpy.convert(fm.resolve("t10k-images-idx3-ubyte.gz"), out, 3000, false, f);
            IdxToNpy.convert(fm.resolve("t10k-labels-idx1-ubyte.gz"), out, 3000, false, f);
            long[] crcs = recordCrcs(out.resolve("test"));
            if (reference == null) {
                reference = crcs;
            } else {
                assertArrayEquals(reference, crcs, f + " delivers different records");
            }
            assertEquals(10_000, Dataset.open(out.resolve("test")).recordCount());
        }
    }
}
