package dev.gdsloader.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyShard;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link SyntheticDataset}: real shard files of the requested sizes. */
class SyntheticDatasetTest {
    @TempDir
    Path dir;

    @Test
    void writesTheRequestedShardsAsReadableUint8Npy() throws IOException {
        Path out = dir.resolve("new/sub"); // created if missing
        List<Path> files = SyntheticDataset.generate(out, 100_000, 3, 1000, 1);
        assertEquals(List.of(out.resolve("data-00000.npy"), out.resolve("data-00001.npy"), out.resolve("data-00002.npy")), files);
        for (Path f : files) {
            NpyShard s = NpyShard.open(f);
            assertEquals(DType.UINT8, s.dtype());
            assertArrayEquals(new long[] {1000}, s.recordShape());
            assertEquals(33, s.recordCount(), "100000 bytes / 3 shards / 1000-byte records, rounded down");
            assertEquals(1000, s.recordBytes());
            assertEquals(s.dataOffset() + 33_000, Files.size(f));
        }
    }

    @Test
    void recordSizesThatAreNotMultiplesOf8AreFilledToTheEnd() throws IOException {
        Path f = SyntheticDataset.generate(dir, 3 * 1001, 1, 1001, 5).get(0);
        NpyShard s = NpyShard.open(f);
        assertEquals(3, s.recordCount());
        byte[] all = Files.readAllBytes(f);
        byte[] data = Arrays.copyOfRange(all, (int) s.dataOffset(), all.length);
        assertEquals(3003, data.length);
        // random bytes: the tail is not left zero (the chance of 16 zero bytes at random is negligible)
        assertFalse(Arrays.equals(new byte[16], Arrays.copyOfRange(data, data.length - 16, data.length)));
    }

    @Test
    void theSameSeedGivesTheSameBytesAndAnotherSeedOthers() throws IOException {
        Path a = SyntheticDataset.generate(dir.resolve("a"), 50_000, 2, 777, 42).get(1);
        Path b = SyntheticDataset.generate(dir.resolve("b"), 50_000, 2, 777, 42).get(1);
        Path c = SyntheticDataset.generate(dir.resolve("c"), 50_000, 2, 777, 43).get(1);
        assertArrayEquals(Files.readAllBytes(a), Files.readAllBytes(b));
        assertFalse(Arrays.equals(Files.readAllBytes(a), Files.readAllBytes(c)));
    }

    @Test
    void sizesThatLeaveAShardWithoutRecordsAreRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SyntheticDataset.generate(dir, 2999, 3, 1000, 1));
        assertTrue(e.getMessage().contains("3 shards") && e.getMessage().contains("1000"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> SyntheticDataset.generate(dir, 1000, 0, 10, 1));
        assertThrows(IllegalArgumentException.class, () -> SyntheticDataset.generate(dir, 1000, 1, 0, 1));
    }
}
