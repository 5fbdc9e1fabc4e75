package dev.gdsloader.formats.registry;

import dev.gdsloader.formats.DType;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * Writes one shard file of one column from records in memory: the writer a {@link ShardFileFormat} offers, used by
 * {@code gdsloader convert}. Stateless and thread-safe; the file is closed on return.
 */
@FunctionalInterface
public interface ShardWriter {
    /**
     * Writes {@code file}, replacing it.
     *
     * @param file the shard file, with its format's suffix
     * @param column the column's name (the tensor's or Arrow column's name; one-column formats take it from the file
     *     name)
     * @param dtype element type
     * @param recordShape the shape of one record, in elements
     * @param data the records, back to back, little-endian; a whole number of records
     * @param metadata string metadata kept where the format has a place for it (safetensors {@code __metadata__}),
     *     ignored otherwise
     * @throws IOException if writing fails
     * @throws IllegalArgumentException if {@code data} is not a whole number of records, or is too large for the
     *     format (safetensors and Arrow shards are written from one array)
     */
    void write(Path file, String column, DType dtype, long[] recordShape, byte[] data, Map<String, String> metadata)
            throws IOException;
}
