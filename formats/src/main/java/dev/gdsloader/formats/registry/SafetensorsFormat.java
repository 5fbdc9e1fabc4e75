package dev.gdsloader.formats.registry;

import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.safetensors.SafetensorsFile;
import dev.gdsloader.formats.safetensors.SafetensorsWriter;
import dev.gdsloader.formats.safetensors.Tensor;
import dev.gdsloader.formats.safetensors.TensorData;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * safetensors: every tensor a column, record {@code i} its row {@code i} along the first axis
 * ({@link SafetensorsFile}, {@link SafetensorsWriter}).
 */
final class SafetensorsFormat implements ShardFileFormat {
    @Override
    public String name() {
        return "safetensors";
    }

    @Override
    public List<String> suffixes() {
        return List.of(".safetensors");
    }

    @Override
    public boolean namedColumns() {
        return true;
    }

    @Override
    public List<String> columns(Path file, String stem) throws IOException {
        return SafetensorsFile.open(file).names();
    }

    @Override
    public List<RecordLayout> open(Path file, String column) throws IOException {
        return List.of(SafetensorsFile.open(file).records(column));
    }

    @Override
    public Optional<ShardWriter> writer() {
        return Optional.of((file, column, dtype, recordShape, data, metadata) -> SafetensorsWriter.write(file,
                Map.of(column, new TensorData(dtype, Inspection.withRecords(Inspection.records(dtype, recordShape, data),
                        recordShape), data)), metadata));
    }

    @Override
    public void inspect(Path file, PrintStream out) throws IOException {
        SafetensorsFile st = SafetensorsFile.open(file);
        out.printf(Locale.ROOT, "  header        %d bytes, data from byte %d; metadata %s%n", st.headerLength(),
                st.dataStart(), st.metadata());
        for (Tensor t : st.tensors()) {
            out.printf(Locale.ROOT, "  tensor %-12s %s%s at bytes %d..%d (offset %s aligned to its %d-byte items)%n",
                    t.name(), t.dtype(), Arrays.toString(t.shape()), t.fileOffset(), t.fileOffset() + t.bytes(),
                    t.fileOffset() % t.dtype().itemSize() == 0 ? "is" : "is NOT", t.dtype().itemSize());
        }
    }
}
