package dev.gdsloader.formats.registry;

import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.Shapes;
import dev.gdsloader.formats.npy.NpyHeader;
import dev.gdsloader.formats.npy.NpyShard;
import dev.gdsloader.formats.npy.NpyWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** NumPy {@code .npy}: one column per file, named by the file's stem ({@link NpyShard}, {@link NpyWriter}). */
final class NpyFormat implements ShardFileFormat {
    @Override
    public String name() {
        return "npy";
    }

    @Override
    public List<String> suffixes() {
        return List.of(".npy");
    }

    @Override
    public List<RecordLayout> open(Path file, String column) throws IOException {
        return List.of(NpyShard.open(file));
    }

    @Override
    public Optional<ShardWriter> writer() {
        return Optional.of((file, column, dtype, recordShape, data, metadata) -> NpyWriter.write(file, dtype,
                Inspection.withRecords(Inspection.records(dtype, recordShape, data), recordShape), data));
    }

    @Override
    public void inspect(Path file, PrintStream out) throws IOException {
        NpyHeader h = NpyHeader.parse(file);
        out.printf(Locale.ROOT, "  header        .npy v%d.%d, %s %s, fortran_order %s, data from byte %d%n",
                h.majorVersion(), h.minorVersion(), h.dtype(), Shapes.toPythonTuple(h.shape()),
                h.fortranOrder() ? "True" : "False", h.dataOffset());
        Inspection.describe(NpyShard.open(file), out);
    }
}
