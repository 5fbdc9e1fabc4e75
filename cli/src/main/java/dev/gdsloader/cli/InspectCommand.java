package dev.gdsloader.cli;

import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.arrow.ArrowIpcFile;
import dev.gdsloader.formats.safetensors.SafetensorsFile;
import dev.gdsloader.formats.safetensors.Tensor;
import dev.gdsloader.loader.dataset.Dataset;
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
    @Parameters(arity = "1..*", description = "shard files: .npy, .bin (with .bin.json), .safetensors, .arrow")
    List<Path> files;

    @Override
    public Integer call() throws Exception {
        for (Path f : files) {
            System.out.println(f);
            if (f.getFileName().toString().endsWith(".safetensors")) {
                SafetensorsFile st = SafetensorsFile.open(f);
                System.out.printf(Locale.ROOT, "  header        %d bytes, data from byte %d; metadata %s%n", st.headerLength(),
                        st.dataStart(), st.metadata());
                for (Tensor t : st.tensors()) {
                    System.out.printf(Locale.ROOT, "  tensor %-12s %s%s at bytes %d..%d (offset %s aligned to its %d-byte items)%n",
                            t.name(), t.dtype(), Arrays.toString(t.shape()), t.fileOffset(), t.fileOffset() + t.bytes(),
                            t.fileOffset() % t.dtype().itemSize() == 0 ? "is" : "is NOT", t.dtype().itemSize());
                }
                continue;
            }
            if (f.getFileName().toString().endsWith(".arrow") || f.getFileName().toString().endsWith(".arrows")) {
                ArrowIpcFile a = ArrowIpcFile.open(f);
                System.out.printf(Locale.ROOT, "  schema        %s%n  batches       %d%n", a.schema(), a.batchCount());
                for (int b = 0; b < a.batchCount(); b++) {
                    for (String c : a.columns()) {
                        try {
                            RecordLayout l = a.records(c, b);
                            System.out.printf(Locale.ROOT, "  batch %d %-8s %d rows of %s%s at bytes %d..%d%n", b, c, l.recordCount(),
                                    l.dtype(), Arrays.toString(l.recordShape()), l.dataOffset(),
                                    l.dataOffset() + l.recordCount() * l.recordBytes());
                        } catch (dev.gdsloader.formats.FormatException e) {
                            System.out.printf(Locale.ROOT, "  batch %d %-8s not loadable: %s%n", b, c, e.getMessage());
                        }
                    }
                }
                continue;
            }
            describe(Dataset.openShard(f, null));
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

}
