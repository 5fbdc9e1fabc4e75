package dev.gdsloader.cli;

import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.npy.NpyShard;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader inspect}: the structure of shard files, from their headers alone.
 */
@Command(name = "inspect", mixinStandardHelpOptions = true,
        description = "Print the structure of shard files (records, dtype, record shape, byte extents, alignment), read "
                + "from their headers; exit 2 with the error (file, byte offset, what was expected) on a malformed file.")
final class InspectCommand implements Callable<Integer> {
    @Parameters(arity = "1..*", description = "shard files")
    List<Path> files;

    @Override
    public Integer call() throws Exception {
        for (Path f : files) {
            RecordLayout l = ShardFormats.open(f);
            System.out.println(f);
            describe(l);
        }
        return 0;
    }

    static void describe(RecordLayout l) {
        long end = l.dataOffset() + l.recordCount() * l.recordBytes();
        System.out.printf(Locale.ROOT, "  records       %d of %s%s, %d bytes each%n", l.recordCount(), l.dtype(),
                Arrays.toString(l.recordShape()), l.recordBytes());
        System.out.printf(Locale.ROOT, "  data          bytes %d..%d of %d (data offset %s 4 KiB aligned%s)%n", l.dataOffset(), end,
                l.fileSize(), l.dataOffset() % 4096 == 0 ? "is" : "is not",
                l.recordBytes() % 4096 == 0 && l.dataOffset() % 4096 == 0 ? ", every record on a block boundary" : "");
    }

    /** Opens a shard by its file name's extension. */
    static final class ShardFormats {
        private ShardFormats() {
        }

        static RecordLayout open(Path f) throws java.io.IOException {
            String n = f.getFileName().toString();
            if (n.endsWith(".npy")) {
                return NpyShard.open(f);
            }
            throw new java.io.IOException(f + ": unknown shard format (expected .npy)");
        }
    }
}
