package dev.gdsloader.cli;

import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.manifest.ColumnEntry;
import dev.gdsloader.formats.manifest.DatasetManifest;
import dev.gdsloader.formats.manifest.ShardEntry;
import dev.gdsloader.loader.dataset.Dataset;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader verify}: recomputes every shard's size and CRC32C, and reads its dtype and record shape,
 * against the dataset's manifest.
 */
@Command(name = "verify", mixinStandardHelpOptions = true,
        description = "Recompute every shard's size and CRC32C, read its record count, dtype and record shape from its "
                + "header, and compare them with DIR/dataset.json; exit 1 on any mismatch.")
final class VerifyCommand implements Callable<Integer> {
    @Parameters(arity = "1", description = "dataset directory with dataset.json")
    Path dir;

    @Override
    public Integer call() throws Exception {
        if (!Files.isDirectory(dir)) {
            throw new IOException(dir + ": " + (Files.exists(dir) ? "not a directory" : "no such directory")
                    + " (verify wants the dataset directory holding dataset.json)");
        }
        Path json = dir.resolve(DatasetManifest.FILE_NAME);
        if (Files.exists(json) && !Files.isRegularFile(json)) {
            throw new IOException(json + ": not a regular file (" + (Files.isDirectory(json) ? "a directory" : "a special file") + ")");
        }
        DatasetManifest m = DatasetManifest.read(json);
        List<String> problems = new ArrayList<>(m.verify(dir));
        problems.addAll(layoutProblems(m, dir, problems));
        problems.forEach(System.out::println);
        int n = m.shards().size();
        System.out.println(n + (n == 1 ? " shard, " : " shards, ") + (problems.isEmpty() ? "all match dataset.json"
                : problems.size() + (problems.size() == 1 ? " mismatch" : " mismatches")));
        return problems.isEmpty() ? 0 : 1;
    }

    /**
     * The shards whose dtype or record shape (from their headers) differ from their column in the manifest; shards
     * already named in {@code known} (missing, wrong size or checksum, unreadable) are not read again.
     *
     * @param m the manifest
     * @param dir its directory
     * @param known problems found so far, each starting with the shard's path
     * @return one line per mismatching shard
     */
    static List<String> layoutProblems(DatasetManifest m, Path dir, List<String> known) {
        List<String> out = new ArrayList<>();
        for (ShardEntry s : m.shards()) {
            Path p = s.resolve(dir);
            if (known.stream().anyMatch(k -> k.startsWith(p + ":")) || !Files.isRegularFile(p)) {
                continue;
            }
            ColumnEntry c = m.column(s.column());
            try {
                for (RecordLayout l : Dataset.openShards(p, s.column())) {
                    if (l.dtype() != c.dtype() || !Arrays.equals(l.recordShape(), c.recordShape())) {
                        out.add(p + ": holds " + l.dtype().name() + " records of shape " + Arrays.toString(l.recordShape())
                                + " in column '" + s.column() + "', but the manifest lists " + c.dtype().name()
                                + " " + Arrays.toString(c.recordShape()));
                        break;
                    }
                }
            } catch (IOException | RuntimeException e) {
                out.add(p + ": cannot be read: " + GdsLoaderMain.message(e));
            }
        }
        return out;
    }
}
