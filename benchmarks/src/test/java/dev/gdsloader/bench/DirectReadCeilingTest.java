package dev.gdsloader.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.posix.PosixFile;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link DirectReadCeiling}: reads every shard whole. */
class DirectReadCeilingTest {
    @TempDir
    Path dir;

    @Test
    void readsEveryByteOfEveryShardWithAnyThreadCount() throws IOException {
        List<Path> files = SyntheticDataset.generate(dir, 3L * 50_000, 3, 1234, 3);
        long total = 0;
        for (Path f : files) {
            total += Files.size(f);
        }
        Dataset d = Dataset.open(dir);
        for (int threads : new int[] {1, 4}) {
            DirectReadCeiling.Result r = DirectReadCeiling.measure(d, threads, 16384);
            assertEquals(total, r.bytes(), threads + " threads");
            assertTrue(r.nanos() > 0);
            boolean direct;
            try (PosixFile pf = PosixFile.openForRead(files.get(0), true)) {
                direct = pf.isDirect();
            }
            assertEquals(direct, r.direct(), "reports whether O_DIRECT was used");
        }
    }

    @Test
    void aFileOfManyColumnsIsReadOnce() throws IOException {
        List<dev.gdsloader.formats.arrow.ArrowWriter.ColumnData> cols = new java.util.ArrayList<>();
        for (int c = 0; c < 50; c++) {
            cols.add(new dev.gdsloader.formats.arrow.ArrowWriter.ColumnData("c" + c, dev.gdsloader.formats.DType.UINT8,
                    new long[0], new byte[1000]));
        }
        Path f = dir.resolve("wide-00000.arrow");
        dev.gdsloader.formats.arrow.ArrowWriter.write(f, cols, 1000);
        DirectReadCeiling.Result r = DirectReadCeiling.measure(Dataset.open(dir), 2, 16384);
        assertEquals(Files.size(f), r.bytes(), "the file's bytes once, not once per column");
    }
}
