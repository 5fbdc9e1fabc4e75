package dev.gdsloader.cli;

import dev.gdsloader.formats.manifest.DatasetManifest;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader verify}: recomputes every shard's size and CRC32C against the dataset's manifest.
 */
@Command(name = "verify", mixinStandardHelpOptions = true,
        description = "Recompute every shard's size and CRC32C and compare them with DIR/dataset.json; exit 1 on any mismatch.")
final class VerifyCommand implements Callable<Integer> {
    @Parameters(arity = "1", description = "dataset directory with dataset.json")
    Path dir;

    @Override
    public Integer call() throws Exception {
        DatasetManifest m = DatasetManifest.read(dir.resolve(DatasetManifest.FILE_NAME));
        List<String> problems = m.verify(dir);
        problems.forEach(System.out::println);
        System.out.println(m.shards().size() + " shards, " + (problems.isEmpty() ? "all match dataset.json" : problems.size() + " mismatches"));
        return problems.isEmpty() ? 0 : 1;
    }
}
