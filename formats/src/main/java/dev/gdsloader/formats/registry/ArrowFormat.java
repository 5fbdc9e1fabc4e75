package dev.gdsloader.formats.registry;

import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.arrow.ArrowBatchLayout;
import dev.gdsloader.formats.arrow.ArrowIpcFile;
import dev.gdsloader.formats.arrow.ArrowWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Arrow IPC: files ({@code .arrow}, Feather v2) and streams ({@code .arrows}); every fixed-width column a column, every
 * record batch one run ({@link ArrowIpcFile}). The writer writes IPC files ({@link ArrowWriter}).
 */
final class ArrowFormat implements ShardFileFormat {
    /** Dictionary-encoded columns: their values live in dictionary batches, which the loader does not read. */
    @Override
    public List<String> unloadableColumns(Path file) throws IOException {
        return ArrowIpcFile.open(file).schema().getFields().stream().filter(f -> f.getDictionary() != null)
                .map(org.apache.arrow.vector.types.pojo.Field::getName).toList();
    }

    @Override
    public String name() {
        return "arrow";
    }

    @Override
    public List<String> suffixes() {
        return List.of(".arrow", ".arrows");
    }

    @Override
    public boolean namedColumns() {
        return true;
    }

    @Override
    public List<String> columns(Path file, String stem) throws IOException {
        return ArrowIpcFile.open(file).columns();
    }

    @Override
    public List<RecordLayout> open(Path file, String column) throws IOException {
        return runs(ArrowIpcFile.open(file), column);
    }

    /** Parses the file once for all its columns (opening it per column made 10,000 columns cost minutes). */
    @Override
    public Map<String, List<RecordLayout>> openColumns(Path file, String stem, Predicate<String> wanted) throws IOException {
        ArrowIpcFile a = ArrowIpcFile.open(file);
        Map<String, List<RecordLayout>> out = new LinkedHashMap<>();
        for (String c : a.columns()) {
            if (!out.containsKey(c)) {
                out.put(c, wanted.test(c) ? runs(a, c) : List.of());
            }
        }
        return out;
    }

    private static List<RecordLayout> runs(ArrowIpcFile a, String column) throws IOException {
        List<RecordLayout> runs = new ArrayList<>();
        for (int b = 0; b < a.batchCount(); b++) {
            runs.add(a.records(column, b));
        }
        return runs;
    }

    /** Writes an IPC file of one record batch holding every record (at least one row per batch for an empty column). */
    @Override
    public Optional<ShardWriter> writer() {
        return Optional.of((file, column, dtype, recordShape, data, metadata) -> ArrowWriter.write(file,
                List.of(new ArrowWriter.ColumnData(column, dtype, recordShape, data)),
                (int) Math.max(1, Math.min(Integer.MAX_VALUE, Inspection.records(dtype, recordShape, data)))));
    }

    @Override
    public void inspect(Path file, PrintStream out) throws IOException {
        ArrowIpcFile a = ArrowIpcFile.open(file);
        out.printf(Locale.ROOT, "  schema        %s%n  batches       %d%n", a.schema(), a.batchCount());
        for (int b = 0; b < a.batchCount(); b++) {
            out.printf(Locale.ROOT, "  batch %d      %d rows, compression %s%n", b, a.rows(b), a.compression(b));
        }
        for (int b = 0; b < a.batchCount(); b++) {
            for (String c : a.columns()) {
                try {
                    RecordLayout l = a.records(c, b);
                    out.printf(Locale.ROOT, "  batch %d %-8s %d rows of %s%s %s%n", b, c, l.recordCount(),
                            l.dtype(), Arrays.toString(l.recordShape()), Inspection.extent(l));
                } catch (FormatException e) {
                    out.printf(Locale.ROOT, "  batch %d %-8s not loadable: %s%n", b, c, e.getMessage());
                }
            }
        }
        for (int b = 0; b < a.batchCount(); b++) {
            buffers(a, b, out);
        }
    }

    /**
     * Prints one record batch's body: its extent in the file, and per column its buffers as (offset within the body +
     * length, bytes), as the metadata gives them (stored, compressed sizes for an LZ4/ZSTD body), or why the column has
     * no buffer layout.
     */
    private static void buffers(ArrowIpcFile a, int b, PrintStream out) throws IOException {
        ArrowBatchLayout body = a.batchLayout(b, List.of());
        out.printf(Locale.ROOT, "  batch %d body bytes %d..%d (%d bytes%s)%n", b,
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
                out.printf(Locale.ROOT, "  batch %d %-8s %s, %d nulls, buffers %s%n", b, c, col.type(), col.nullCount(),
                        bufs);
            } catch (FormatException e) {
                out.printf(Locale.ROOT, "  batch %d %-8s no buffer layout: %s%n", b, c, e.getMessage());
            }
        }
    }
}
