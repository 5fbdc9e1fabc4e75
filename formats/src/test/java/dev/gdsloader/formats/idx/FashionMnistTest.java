package dev.gdsloader.formats.idx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyShard;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real Fashion-MNIST files from the shared dataset directory; each test is skipped (with the
 * reason) when the dataset is absent.
 */
class FashionMnistTest {

    private Path dataset;

    @BeforeEach
    void locate() {
        dataset = SharedDatasets.find("fashion-mnist").orElse(null);
        Assumptions.assumeTrue(dataset != null && Files.exists(dataset.resolve("train-images-idx3-ubyte.gz")),
                "Fashion-MNIST not found: set -Dgds.shared.dir=<dir containing datasets/fashion-mnist>"
                        + " or put shared/datasets/fashion-mnist beside the repository");
    }

    private static int[] classCounts(IdxArray labels) {
        int[] counts = new int[10];
        for (byte b : labels.littleEndianData()) {
            int label = b & 0xFF;
            assertTrue(label <= 9, "label " + label + " out of 0..9");
            counts[label]++;
        }
        return counts;
    }

    @Test
    void trainSetHasTheRealShapeAndBalancedClasses() throws IOException {
        IdxArray images = IdxReader.read(dataset.resolve("train-images-idx3-ubyte.gz"));
        assertEquals(DType.UINT8, images.dtype());
        assertArrayEquals(new long[] {60000, 28, 28}, images.shape());
        assertEquals(47_040_000, images.littleEndianData().length);
        IdxArray labels = IdxReader.read(dataset.resolve("train-labels-idx1-ubyte.gz"));
        assertEquals(DType.UINT8, labels.dtype());
        assertArrayEquals(new long[] {60000}, labels.shape());
        int[] counts = classCounts(labels);
        for (int c = 0; c < 10; c++) {
            assertEquals(6000, counts[c], "class " + c);
        }
    }

    @Test
    void testSetHasTenThousandBalancedRecords() throws IOException {
        IdxArray labels = IdxReader.read(dataset.resolve("t10k-labels-idx1-ubyte.gz"));
        assertArrayEquals(new long[] {10000}, labels.shape());
        int[] counts = classCounts(labels);
        for (int c = 0; c < 10; c++) {
            assertEquals(1000, counts[c], "class " + c);
        }
    }

    @Test
    void convertsToShardsByteForByte(@TempDir Path out) throws IOException {
        for (String column : new String[] {"images", "labels"}) {
            Path idx = dataset.resolve("train-" + column + "-idx" + (column.equals("images") ? 3 : 1)
                    + "-ubyte.gz");
            List<Path> shards = IdxToNpy.convert(idx, out, 25_000);
            assertEquals(List.of(out.resolve("train/" + column + "-00000.npy"),
                    out.resolve("train/" + column + "-00001.npy"),
                    out.resolve("train/" + column + "-00002.npy")), shards);
            long[] counts = {25_000, 25_000, 10_000};
            for (int i = 0; i < 3; i++) {
                NpyShard s = NpyShard.open(shards.get(i));
                assertEquals(DType.UINT8, s.dtype());
                assertEquals(counts[i], s.recordCount());
                assertArrayEquals(column.equals("images") ? new long[] {28, 28} : new long[0],
                        s.recordShape());
            }
            assertArrayEquals(IdxReader.read(idx).littleEndianData(),
                    IdxToNpyTest.concatenatedRecords(shards), column);
        }
    }
}
