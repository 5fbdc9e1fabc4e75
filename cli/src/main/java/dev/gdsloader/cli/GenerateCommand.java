package dev.gdsloader.cli;

import dev.gdsloader.bench.SyntheticDataset;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code gdsloader generate}: synthetic shards (npy, raw, safetensors or arrow) with a {@code dataset.json}.
 */
@Command(name = "generate", mixinStandardHelpOptions = true,
        description = "Write synthetic uint8 shards (data-NNNNN.npy, .bin, .safetensors or .arrow; see --format) of seeded "
                + "random bytes, and dataset.json beside them. Refuses up front when the output's file system has too "
                + "little free space.")
final class GenerateCommand implements Callable<Integer>, RangedOptions {
    @Option(names = {"-o", "--out"}, required = true, description = "output directory")
    Path out;

    @Option(names = "--size", defaultValue = "1GiB", converter = ByteSize.class,
            description = "total data size (default: ${DEFAULT-VALUE})")
    long size;

    @Option(names = "--shards", defaultValue = "8", description = "number of shards (default: ${DEFAULT-VALUE})")
    int shards;

    @Option(names = "--record-bytes", defaultValue = "150528", converter = ByteSize.class,
            description = "bytes per record, e.g. 4096 or 4KiB (default: ${DEFAULT-VALUE} = 224x224x3, deliberately not 4 KiB aligned)")
    long recordBytes;

    @Option(names = "--seed", defaultValue = "42", description = "seed (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--align", defaultValue = "64", converter = ByteSize.class,
            description = "npy only: the header is padded so each shard's data starts at a multiple of this many bytes, "
                    + "a multiple of 64 in 64..64KiB (4096 puts 4 KiB records on storage blocks; default: ${DEFAULT-VALUE}). "
                    + "refused for raw (its data always starts at byte 0), safetensors and arrow (their writers place the data)")
    long align;

    @Option(names = "--format", defaultValue = "npy", converter = FormatConverter.class,
            description = "npy, raw (.bin + .bin.json sidecar), safetensors or arrow (default: ${DEFAULT-VALUE}); dataset.json is written beside")
    dev.gdsloader.formats.manifest.ShardFormat format;

    @Option(names = "--overwrite", description = "replace existing data-* shards (any format) and dataset.json in the output directory, "
            + "once the new ones are complete (a stopped run leaves the old dataset)")
    boolean overwrite;

    /** The shard count's range (declared: a value beyond an int names it). */
    private static final Checks.Range SHARDS = new Checks.Range("--shards", 1, Integer.MAX_VALUE);

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public java.util.List<Checks.Range> ranges() {
        return java.util.List.of(SHARDS);
    }

    @Override
    public Integer call() throws Exception {
        validate(); // before anything is created
        List<Path> files = StagedRun.run("generate", out,
                () -> SyntheticDataset.generate(out, size, shards, (int) recordBytes, seed, overwrite, (int) align, format));
        long bytes = 0;
        for (Path f : files) {
            for (var l : dev.gdsloader.loader.dataset.Dataset.openShards(f, "data")) {
                bytes += l.recordCount() * l.recordBytes();
            }
        }
        System.out.println("wrote " + files.size() + " shards, " + ByteSize.format(bytes) + " of records, to " + out
                + (bytes < size ? " (--size " + ByteSize.format(size) + " rounded down to whole " + recordBytes
                        + "-byte records per shard)" : ""));
        return 0;
    }

    /** Checks every option, and the free space, before the output directory is touched. */
    private void validate() throws java.io.IOException {
        Checks.range("--size", size, 1, Long.MAX_VALUE);
        SHARDS.check(shards);
        Checks.range("--record-bytes", recordBytes, 1, Integer.MAX_VALUE);
        if (size < (long) shards * recordBytes) {
            throw new IllegalArgumentException("--size " + size + " is too small for --shards " + shards + " of --record-bytes "
                    + recordBytes + ": every shard needs at least one record");
        }
        boolean alignGiven = spec != null && spec.commandLine().getParseResult().hasMatchedOption("--align");
        if (alignGiven && format != dev.gdsloader.formats.manifest.ShardFormat.NPY) {
            throw new IllegalArgumentException("--align is not honoured by --format " + format.jsonName()
                    + (format == dev.gdsloader.formats.manifest.ShardFormat.RAW ? " (its data always starts at byte 0)"
                    : " (its writer places the data itself)") + "; --align is for --format npy");
        }
        if (align < 64 || align > 65536 || align % 64 != 0) {
            throw new IllegalArgumentException("--align must be a multiple of 64 in 64..65536, got " + align);
        }
        long perShard = size / shards / recordBytes * recordBytes;
        if ((format == dev.gdsloader.formats.manifest.ShardFormat.SAFETENSORS
                || format == dev.gdsloader.formats.manifest.ShardFormat.ARROW) && perShard > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("--format " + format.jsonName() + " shards are written from memory: "
                    + ByteSize.format(perShard) + " per shard is too many; use more --shards");
        }
        if (java.nio.file.Files.exists(out) && !java.nio.file.Files.isDirectory(out)) {
            throw new IllegalArgumentException("--out " + out + ": not a directory");
        }
        Checks.freeSpace(perShard * shards, out);
    }

    /** Accepts npy, raw, safetensors, arrow in any case. */
    static final class FormatConverter implements picocli.CommandLine.ITypeConverter<dev.gdsloader.formats.manifest.ShardFormat> {
        @Override
        public dev.gdsloader.formats.manifest.ShardFormat convert(String v) {
            try {
                return dev.gdsloader.formats.manifest.ShardFormat.valueOf(v.trim().toUpperCase(java.util.Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.TypeConversionException("'" + v + "' is not npy, raw, safetensors or arrow");
            }
        }
    }
}
