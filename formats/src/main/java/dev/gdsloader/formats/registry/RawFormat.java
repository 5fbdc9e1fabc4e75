package dev.gdsloader.formats.registry;

import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.raw.RawShard;
import dev.gdsloader.formats.raw.RawWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Raw records: {@code .bin} files of records back to back, each with a {@code .bin.json} sidecar giving dtype, record
 * shape and count; one column per file, named by the file's stem ({@link RawShard}, {@link RawWriter}).
 */
final class RawFormat implements ShardFileFormat {
    @Override
    public String name() {
        return "raw";
    }

    @Override
    public List<String> suffixes() {
        return List.of(".bin");
    }

    @Override
    public List<String> sidecarSuffixes() {
        return List.of(".bin.json");
    }

    @Override
    public List<RecordLayout> open(Path file, String column) throws IOException {
        return List.of(RawShard.open(file));
    }

    @Override
    public Optional<ShardWriter> writer() {
        return Optional.of((file, column, dtype, recordShape, data, metadata) -> RawWriter.write(file, dtype, recordShape,
                data));
    }

    @Override
    public void inspect(Path file, PrintStream out) throws IOException {
        Inspection.describe(RawShard.open(file), out);
    }
}
