package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.fixtures.RealWriterFixtures;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.plan.BatchPlan;
import dev.gdsloader.loader.plan.ColumnPlan;
import dev.gdsloader.loader.plan.Piece;
import dev.gdsloader.loader.plan.ReadPlanner;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Every column of every real-writer fixture through the loader on the HOST path: the batches' bytes equal the writer's
 * values, or the loader refuses the column with the formats' exact error (file named, what is refused).
 */
class RealWriterFixturesLoadTest {
    /** One dynamic test per (fixture, column). */
    static Stream<DynamicTest> perColumn(RealWriterFixturesGpuTest.ColumnTest test) {
        return RealWriterFixtures.files().stream().flatMap(f -> {
            try {
                return RealWriterFixtures.columns(f).stream().map(c -> DynamicTest.dynamicTest(
                        f.getFileName() + " " + c.name(), () -> test.run(c)));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    @TestFactory
    Stream<DynamicTest> everyAcceptedColumnLoadsToTheWritersBytesAndTheOthersAreRefused() {
        return perColumn(c -> {
            Path f = c.fixture();
            if (c.refusal().isPresent()) {
                FormatException x = assertThrows(FormatException.class, () -> FixtureLoads.open(f, c.name()));
                assertEquals(f, x.file());
                assertEquals(c.refusal().get(), x.detail());
                return;
            }
            assertArrayEquals(c.littleEndianBytes(), FixtureLoads.load(f, c.name(), ReadPath.HOST), f + " " + c.name());
        });
    }

    @Test
    void theZeroRowBatchOfAStreamIsNeverReadAndItsThreeRowsAre() throws IOException {
        Path f = RealWriterFixtures.directory().resolve("arrow-zero-then-three-stream.arrows");
        for (String column : List.of("image", "label", "score", "id")) {
            Dataset d = FixtureLoads.open(f, column);
            assertEquals(0, d.columns().get(0).shards().get(0).recordCount());
            assertEquals(3, d.recordCount());
            for (BatchPlan b : ReadPlanner.sequential(d, FixtureLoads.BATCH, false)) {
                for (ColumnPlan c : b.columns()) {
                    for (Piece p : c.pieces()) {
                        assertTrue(p.length() > 0 && p.shard() == 1, column + ": a read of the empty batch: " + p);
                    }
                }
            }
        }
    }
}
