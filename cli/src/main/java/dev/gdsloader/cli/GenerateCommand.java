package dev.gdsloader.cli;

import dev.gdsloader.bench.SyntheticDataset;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code gdsloader generate}: synthetic {@code .npy} shards.
 */
@Command(name = "generate", mixinStandardHelpOptions = true,
        description = "Write synthetic uint8 .npy shards (data-NNNNN.npy) of seeded random bytes.")
final class GenerateCommand implements Callable<Integer> {
    @Option(names = {"-o", "--out"}, required = true, description = "output directory")
    Path out;

    @Option(names = "--size", defaultValue = "1GiB", converter = ByteSize.class,
            description = "total data size (default: ${DEFAULT-VALUE})")
    long size;

    @Option(names = "--shards", defaultValue = "8", description = "number of shards (default: ${DEFAULT-VALUE})")
    int shards;

    @Option(names = "--record-bytes", defaultValue = "150528",
            description = "bytes per record (default: ${DEFAULT-VALUE} = 224x224x3, deliberately not 4 KiB aligned)")
    int recordBytes;

    @Option(names = "--seed", defaultValue = "42", description = "seed (default: ${DEFAULT-VALUE})")
    long seed;

    @Option(names = "--align", defaultValue = "64",
            description = "data alignment of each shard in bytes, multiple of 64 (4096 puts 4 KiB records on storage blocks; default: ${DEFAULT-VALUE})")
    int align;

    @Option(names = "--format", defaultValue = "npy", converter = FormatConverter.class,
            description = "npy, raw (.bin + .bin.json sidecar), safetensors or arrow (default: ${DEFAULT-VALUE}); dataset.json is written beside")
    dev.gdsloader.formats.manifest.ShardFormat format;

    @Option(names = "--overwrite", description = "replace existing data-*.npy shards in the output directory")
    boolean overwrite;

    @Override
    public Integer call() throws Exception {
        List<Path> files = SyntheticDataset.generate(out, size, shards, recordBytes, seed, overwrite, align, format);
        long bytes = 0;
        for (Path f : files) {
            for (var l : dev.gdsloader.loader.dataset.Dataset.openShards(f, "data")) {
                bytes += l.recordCount() * l.recordBytes();
            }
        }
        System.out.println("wrote " + files.size() + " shards, " + ByteSize.format(bytes) + " of records, to " + out);
        return 0;
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
