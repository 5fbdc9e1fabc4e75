package dev.gdsloader.formats.registry;

import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.npy.NpzArchive;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * NumPy {@code .npz}: a ZIP of {@code <column>.npy} members, each a column (deflated members decoded on the host;
 * {@link NpzArchive}). No writer: the project reads archives written by NumPy.
 */
final class NpzFormat implements ShardFileFormat {
    @Override
    public String name() {
        return "npz";
    }

    @Override
    public List<String> suffixes() {
        return List.of(".npz");
    }

    @Override
    public boolean namedColumns() {
        return true;
    }

    @Override
    public List<String> columns(Path file, String stem) throws IOException {
        return NpzArchive.open(file).columns();
    }

    @Override
    public List<RecordLayout> open(Path file, String column) throws IOException {
        return List.of(NpzArchive.open(file).records(column));
    }

    @Override
    public void inspect(Path file, PrintStream out) throws IOException {
        for (NpzArchive.Member m : NpzArchive.open(file).members()) {
            RecordLayout l = m.records();
            out.printf(Locale.ROOT, "  member %-12s %s, %d of %s%s, %s%n", m.name(), m.method() == 0 ? "stored"
                    : "deflated (" + m.storedBytes() + " of " + m.size() + " bytes)", l.recordCount(), l.dtype(),
                    Arrays.toString(l.recordShape()), Inspection.extent(l));
        }
    }
}
