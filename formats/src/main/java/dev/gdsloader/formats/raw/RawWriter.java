package dev.gdsloader.formats.raw;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gdsloader.formats.AtomicFiles;
import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.Shapes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;

/**
 * Writes raw shards: the record bytes to the shard file and the JSON sidecar described in
 * {@link RawShard} next to it.
 *
 * <p>Each file is written to a hidden temporary file in the same directory and renamed over its
 * name when complete (atomically where the file system allows), the shard first and the sidecar
 * last, so a reader never sees a partial shard or sidecar. Stateless and thread-safe; concurrent writes to the same
 * shard are not coordinated.
 */
public final class RawWriter {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private RawWriter() {
    }

    /**
     * Writes (or replaces) a raw shard and its sidecar.
     *
     * @param binFile the shard file to write; its sidecar is
     *     {@link RawShard#sidecarOf(Path) sidecarOf(binFile)}; existing files are replaced
     * @param dtype element type
     * @param recordShape shape of one record in elements ({@code []} for scalar records); copied
     * @param data the records, each a C-order little-endian array, back to back; only read. Its
     *     length must be a multiple of the record size {@code product(recordShape) *
     *     dtype.itemSize()}; the record count is {@code data.length / recordSize} (0 when the
     *     record size is 0, and {@code data} must then be empty)
     * @throws IllegalArgumentException if a shape entry is negative, the record size overflows,
     *     or {@code data.length} is not a multiple of the record size (both numbers are named);
     *     nothing is written then
     * @throws IOException if writing fails (both files are then deleted)
     */
    public static void write(Path binFile, DType dtype, long[] recordShape, byte[] data)
            throws IOException {
        Objects.requireNonNull(binFile, "binFile");
        Objects.requireNonNull(dtype, "dtype");
        Objects.requireNonNull(data, "data");
        long[] shape = recordShape.clone();
        long recordBytes = Shapes.byteSize(shape, dtype.itemSize());
        if (recordBytes == 0 ? data.length != 0 : data.length % recordBytes != 0) {
            throw new IllegalArgumentException(data.length + " data bytes are not a whole number"
                    + " of " + recordBytes + "-byte records (" + dtype.safetensorsName() + " "
                    + Shapes.toPythonTuple(shape) + ")");
        }
        long count = recordBytes == 0 ? 0 : data.length / recordBytes;
        byte[] sidecar = sidecarJson(dtype, shape, recordBytes, count);
        Path sidecarFile = RawShard.sidecarOf(binFile);
        Path tmp = AtomicFiles.tempSibling(binFile);
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                ByteBuffer src = ByteBuffer.wrap(data);
                while (src.hasRemaining()) {
                    ch.write(src);
                }
            }
            AtomicFiles.publish(tmp, binFile);
            AtomicFiles.replace(sidecarFile, sidecar);
        } catch (IOException | RuntimeException e) {
            AtomicFiles.deleteQuietly(tmp, e);
            AtomicFiles.deleteQuietly(binFile, e);
            AtomicFiles.deleteQuietly(sidecarFile, e);
            throw e;
        }
    }

    /**
     * Writes (or replaces) only the sidecar, for a shard written by other means (e.g. streamed).
     *
     * @param binFile the shard the sidecar describes; it need not exist yet
     * @param dtype element type
     * @param recordShape shape of one record in elements; copied
     * @param count number of records, {@code >= 0}
     * @throws IllegalArgumentException if a shape entry or {@code count} is negative, or the
     *     record or shard size overflows a long
     * @throws IOException if writing fails (the sidecar is then not replaced)
     */
    public static void writeSidecar(Path binFile, DType dtype, long[] recordShape, long count)
            throws IOException {
        Objects.requireNonNull(dtype, "dtype");
        long[] shape = recordShape.clone();
        long recordBytes = Shapes.byteSize(shape, dtype.itemSize());
        if (count < 0) {
            throw new IllegalArgumentException("record count must be >= 0, got " + count);
        }
        try {
            Math.multiplyExact(count, recordBytes);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(count + " records of " + recordBytes
                    + " bytes overflow a long", e);
        }
        AtomicFiles.replace(RawShard.sidecarOf(binFile),
                sidecarJson(dtype, shape, recordBytes, count));
    }

    private static byte[] sidecarJson(DType dtype, long[] shape, long recordBytes, long count) {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        root.put("format", RawShard.FORMAT);
        root.put("version", RawShard.VERSION);
        root.put("dtype", dtype.safetensorsName());
        var arr = root.putArray("record_shape");
        for (long d : shape) {
            arr.add(d);
        }
        root.put("record_bytes", recordBytes);
        root.put("count", count);
        try {
            return (MAPPER.writeValueAsString(root) + "\n").getBytes(
                    java.nio.charset.StandardCharsets.UTF_8);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e); // not reached for a tree of strings and numbers
        }
    }

}
