package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.fixtures.RealWriterFixtures;
import dev.gdsloader.formats.manifest.DatasetManifest;
import dev.gdsloader.formats.manifest.ShardFormat;
import dev.gdsloader.formats.registry.ShardFileFormat;
import dev.gdsloader.formats.registry.ShardFormats;
import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.loader.dataset.Dataset;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every suffix the format registry lists is accepted by the three places that used to keep their own suffix chains and
 * drifted apart ({@code verify} missed {@code .npz} and {@code .arrows}): {@link Dataset#open(Path, List)},
 * {@code gdsloader inspect} and {@code gdsloader verify} (records, dtype and shape read, a wrong record count found, an
 * unlisted shard of that suffix found). A shard of each suffix is written by the format's own writer where it has one,
 * else copied from the real-writer fixtures (NumPy's {@code .npz}, pyarrow's {@code .arrows}); a suffix registered
 * with neither fails here.
 */
class ShardFormatsAcceptedTest {
    @TempDir
    Path dir;

    @TestFactory
    Stream<DynamicTest> everyRegisteredSuffixIsAcceptedByDatasetInspectAndVerify() {
        return ShardFormats.all().stream().flatMap(f -> f.suffixes().stream().map(s -> DynamicTest.dynamicTest(
                f.name() + " " + s, () -> accepted(f, s))));
    }

    private void accepted(ShardFileFormat format, String suffix) throws Exception {
        Path d = Files.createDirectories(dir.resolve(suffix.substring(1)));
        Path shard = d.resolve("c-00000" + suffix);
        String column = writeShard(format, suffix, shard);

        Dataset ds = Dataset.open(d, List.of(column));
        Column c = ds.column(column);
        long records = c.recordCount();
        assertTrue(records > 0, shard + ": " + records + " records");

        CommandRun inspect = CommandRun.execute(new InspectCommand(), shard.toString());
        assertEquals(0, inspect.exitCode(), inspect.toString());
        assertTrue(inspect.out().startsWith(shard + System.lineSeparator()) && inspect.out().lines().count() > 1,
                inspect.toString());

        RecordLayout first = c.shards().get(0);
        ShardFormat manifestFormat = Arrays.stream(ShardFormat.values()).filter(m -> m.fileFormat().equals(format)).findFirst()
                .orElse(ShardFormat.NPY); // npz: the loader reads shards by suffix whatever "format" says
        manifest(d, manifestFormat, column, first.dtype(), first.recordShape(), shard, records);
        CommandRun ok = CommandRun.execute(new VerifyCommand(), d.toString());
        assertEquals(0, ok.exitCode(), ok.toString());
        assertTrue(ok.out().contains("1 shard, all match dataset.json"), ok.toString());

        manifest(d, manifestFormat, column, first.dtype(), first.recordShape(), shard, records + 1);
        CommandRun wrong = CommandRun.execute(new VerifyCommand(), d.toString());
        assertEquals(1, wrong.exitCode(), wrong.toString());
        assertTrue(wrong.out().contains(shard + ": holds " + records + " records of column '" + column
                + "', but the manifest lists " + (records + 1)), wrong.toString());

        manifest(d, manifestFormat, column, first.dtype(), first.recordShape(), shard, records);
        Path unlisted = Files.copy(shard, d.resolve("c-00001" + suffix));
        CommandRun extra = CommandRun.execute(new VerifyCommand(), d.toString());
        assertEquals(1, extra.exitCode(), extra.toString());
        assertTrue(extra.out().contains(unlisted + ": a shard file the manifest does not list"), extra.toString());
    }

    /** Writes {@code dataset.json} listing the one shard under {@code column}. */
    private static void manifest(Path d, ShardFormat format, String column, DType dtype, long[] shape, Path shard,
                                 long records) throws IOException {
        DatasetManifest.builder(format).column(column, dtype, shape).shard(shard.getFileName().toString(), column, records)
                .build(d).write(d);
    }

    /**
     * A shard of {@code suffix}: written by the format's writer (its first suffix), or copied from a real-writer fixture.
     *
     * @return a column of it that the loader reads
     */
    private static String writeShard(ShardFileFormat format, String suffix, Path shard) throws IOException {
        if (format.writer().isPresent() && suffix.equals(format.suffixes().get(0))) {
            byte[] data = new byte[7 * 12];
            for (int i = 0; i < data.length; i++) {
                data[i] = (byte) (i * 31);
            }
            format.writer().get().write(shard, "c", DType.UINT8, new long[] {12}, data, Map.of());
            return format.columns(shard, "c").get(0);
        }
        for (Path fixture : RealWriterFixtures.files()) {
            if (!fixture.getFileName().toString().endsWith(suffix) || RealWriterFixtures.fileRefusal(fixture).isPresent()) {
                continue;
            }
            Files.copy(fixture, shard);
            for (String c : format.columns(shard, "c")) {
                try {
                    if (!format.open(shard, c).isEmpty()) {
                        return c;
                    }
                } catch (IOException refused) {
                    // a column the loader refuses (strings, nulls): try the next
                }
            }
            Files.delete(shard);
        }
        return fail(suffix + ": no writer and no real-writer fixture with a loadable column; add one to test it");
    }
}
