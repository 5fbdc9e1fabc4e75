package dev.gdsloader.cli;

import dev.gdsloader.formats.HostDecodedRecords;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.Shapes;
import dev.gdsloader.formats.arrow.ArrowBatchLayout;
import dev.gdsloader.formats.arrow.ArrowIpcFile;
import dev.gdsloader.formats.arrow.CompressedArrowRecords;
import dev.gdsloader.formats.npy.NpyHeader;
import dev.gdsloader.formats.npy.NpzArchive;
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
    @Parameters(arity = "1..*", paramLabel = "FILE",
            description = "shard files: .npy, .npz, .bin (with its .bin.json sidecar), .safetensors, .arrow or .arrows (Arrow IPC)")
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
                    System.out.printf(Locale.ROOT, "  batch %d      %d rows, compression %s%n", b, a.rows(b), a.compression(b));
                }
                for (int b = 0; b < a.batchCount(); b++) {
                    for (String c : a.columns()) {
                        try {
                            RecordLayout l = a.records(c, b);
                            System.out.printf(Locale.ROOT, "  batch %d %-8s %d rows of %s%s %s%n", b, c, l.recordCount(),
                                    l.dtype(), Arrays.toString(l.recordShape()), extent(l));
                        } catch (dev.gdsloader.formats.FormatException e) {
                            System.out.printf(Locale.ROOT, "  batch %d %-8s not loadable: %s%n", b, c, e.getMessage());
                        }
                    }
                }
                for (int b = 0; b < a.batchCount(); b++) {
                    buffers(a, b);
                }
                continue;
            }
            if (f.getFileName().toString().endsWith(".npz")) {
                NpzArchive z = NpzArchive.open(f);
                for (NpzArchive.Member m : z.members()) {
                    RecordLayout l = m.records();
                    System.out.printf(Locale.ROOT, "  member %-12s %s, %d of %s%s, %s%n", m.name(), m.method() == 0 ? "stored"
                            : "deflated (" + m.storedBytes() + " of " + m.size() + " bytes)", l.recordCount(), l.dtype(),
                            Arrays.toString(l.recordShape()), extent(l));
                }
                continue;
            }
            if (f.getFileName().toString().endsWith(".npy")) {
                NpyHeader h = NpyHeader.parse(f);
                System.out.printf(Locale.ROOT, "  header        .npy v%d.%d, %s %s, fortran_order %s, data from byte %d%n",
                        h.majorVersion(), h.minorVersion(), h.dtype(), Shapes.toPythonTuple(h.shape()),
                        h.fortranOrder() ? "True" : "False", h.dataOffset());
            }
            describe(Dataset.openShard(f, null));
        }
        return 0;
    }

    /**
     * Prints one record batch's layout ({@link ArrowIpcFile#batchLayout(int, List)}): the body's extent in the file and
     * per column its buffers as (offset within the body + length, bytes), as the metadata gives them (stored, compressed
     * sizes for an LZ4/ZSTD body), or why the column has no buffer layout.
     */
    static void buffers(ArrowIpcFile a, int b) throws java.io.IOException {
        ArrowBatchLayout body = a.batchLayout(b, List.of());
        System.out.printf(Locale.ROOT, "  batch %d body bytes %d..%d (%d bytes%s)%n", b,
                body.bodyOffset(), body.bodyOffset() + body.bodyLength(), body.bodyLength(),
                body.compressed() ? ", " + body.codec() : "");
        for (String c : a.columns()) {
            try {
                ArrowBatchLayout.Column col = a.batchLayout(b, List.of(c)).columns().get(0);
                StringBuilder bufs = new StringBuilder();
                for (ArrowBatchLayout.Buffer buf : col.buffers()) {
                    bufs.append(bufs.isEmpty() ? "" : ", ").append(buf.role()).append(' ').append(buf.offset()).append('+')
                            .append(buf.length());
                }
                System.out.printf(Locale.ROOT, "  batch %d %-8s %s, %d nulls, buffers %s%n", b, c, col.type(), col.nullCount(),
                        bufs);
            } catch (dev.gdsloader.formats.FormatException e) {
                System.out.printf(Locale.ROOT, "  batch %d %-8s no buffer layout: %s%n", b, c, e.getMessage());
            }
        }
    }

    /** Where a run's bytes lie: a file extent, or the stored bytes that are decoded on the host. */
    static String extent(RecordLayout l) {
        if (l instanceof HostDecodedRecords d) {
            return "decoded on the host from bytes " + d.storedOffset() + ".." + (d.storedOffset() + d.storedBytes())
                    + (d instanceof CompressedArrowRecords c ? " (" + c.codec() + ")" : " (deflate)");
        }
        return "at bytes " + l.dataOffset() + ".." + (l.dataOffset() + l.recordCount() * l.recordBytes());
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
