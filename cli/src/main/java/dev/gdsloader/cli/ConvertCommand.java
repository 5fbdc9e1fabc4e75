package dev.gdsloader.cli;

import dev.gdsloader.formats.idx.IdxToNpy;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader convert}: converters into shards (npy, raw, safetensors or arrow).
 */
@Command(name = "convert", mixinStandardHelpOptions = true,
        description = "Convert datasets into shards (npy, raw, safetensors or arrow; see the subcommand's --format) "
                + "with a dataset.json.",
        subcommands = ConvertCommand.Idx.class)
final class ConvertCommand {

    /** {@code gdsloader convert idx}: IDX (MNIST format) files to shards. */
    @Command(name = "idx", mixinStandardHelpOptions = true, commandListHeading = "",
            description = "Convert IDX files (MNIST / Fashion-MNIST, .gz or plain) into <out>/<split>/<column>-NNNNN.<ext> "
                    + "shards, e.g. train-images-idx3-ubyte.gz -> <out>/train/images-00000.npy, plus <out>/<split>/dataset.json. "
                    + "The columns of one split must hold the same number of records (images and their labels).")
    static final class Idx implements Callable<Integer> {
        @Option(names = {"-o", "--out"}, required = true, description = "output directory")
        Path out;

        @Option(names = "--records-per-shard", defaultValue = "10000",
                description = "records per shard (default: ${DEFAULT-VALUE})")
        long recordsPerShard;

        @Option(names = "--overwrite", description = "replace existing shards of the same split and column, once the new ones "
                + "are complete (a stopped run leaves the old ones)")
        boolean overwrite;

        @Option(names = "--format", defaultValue = "npy", converter = GenerateCommand.FormatConverter.class,
                description = "npy, raw, safetensors or arrow (default: ${DEFAULT-VALUE}); <out>/<split>/dataset.json lists the shards")
        dev.gdsloader.formats.manifest.ShardFormat format;

        @Parameters(arity = "1..*", description = "IDX files")
        List<Path> files;

        @Override
        public Integer call() throws Exception {
            Checks.range("--records-per-shard", recordsPerShard, 1, Long.MAX_VALUE);
            for (Path f : files) { // every input is checked before any output is written
                if (!java.nio.file.Files.isRegularFile(f)) {
                    throw new java.io.IOException(f + ": " + (java.nio.file.Files.isDirectory(f) ? "a directory, not an IDX file"
                            : java.nio.file.Files.exists(f) ? "not a regular file" : "no such file or directory"));
                }
            }
            if (java.nio.file.Files.exists(out) && !java.nio.file.Files.isDirectory(out)) {
                throw new IllegalArgumentException("--out " + out + ": not a directory");
            }
            java.util.Map<String, Path> targets = new java.util.HashMap<>(); // two inputs must not write the same shards
            for (Path f : files) {
                Path other = targets.putIfAbsent(IdxToNpy.target(f), f);
                if (other != null) {
                    throw new IllegalArgumentException(other.toAbsolutePath().normalize().equals(f.toAbsolutePath().normalize())
                            ? f + ": given twice" : f + " and " + other + " both convert to " + out.resolve(IdxToNpy.target(f))
                            + "-NNNNN shards: convert them into different --out directories");
                }
                IdxToNpy.checkOutput(f, out, overwrite, format);
            }
            java.util.Map<Path, List<Path>> all = StagedRun.run("convert idx", out,
                    () -> IdxToNpy.convertAll(files, out, recordsPerShard, overwrite, format));
            for (java.util.Map.Entry<Path, List<Path>> e : all.entrySet()) {
                List<Path> written = e.getValue();
                System.out.println(e.getKey().getFileName() + " -> " + written.size() + " shards in "
                        + (written.isEmpty() ? out : written.get(0).getParent()));
            }
            return 0;
        }
    }
}
