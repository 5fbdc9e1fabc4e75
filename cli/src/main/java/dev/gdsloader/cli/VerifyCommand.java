package dev.gdsloader.cli;

import dev.gdsloader.formats.manifest.DatasetManifest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader verify}: recomputes every shard's size and CRC32C, and reads its record count, dtype and record
 * shape through its format's verifier in the registry, against the dataset's manifest ({@link DatasetManifest#verify}).
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
        DatasetManifest m = DatasetManifest.read(dir.resolve(DatasetManifest.FILE_NAME)); // refuses a FIFO or directory
        List<String> problems = m.verify(dir); // sizes, checksums, and each format's verifier (records, dtype, shape)
        problems.forEach(System.out::println);
        int n = m.shards().size();
        System.out.println(n + (n == 1 ? " shard, " : " shards, ") + (problems.isEmpty() ? "all match dataset.json"
                : problems.size() + (problems.size() == 1 ? " mismatch" : " mismatches")));
        return problems.isEmpty() ? 0 : 1;
    }
}
