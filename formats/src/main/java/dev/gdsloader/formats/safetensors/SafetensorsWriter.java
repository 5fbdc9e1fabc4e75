package dev.gdsloader.formats.safetensors;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import dev.gdsloader.formats.AtomicFiles;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Objects;

/**
 * Writes safetensors files that the reference implementation
 * (https://github.com/huggingface/safetensors) reads: the 8-byte little-endian header length,
 * a compact JSON header padded with spaces to a multiple of 8 bytes (as the reference writer
 * pads it, so the data section starts at a multiple of 8), then the tensors' bytes packed back
 * to back in the iteration order of the map, without gaps.
 *
 * <p>The header lists {@code "__metadata__"} first (only when the metadata is not empty), then
 * the tensors in map order. A tensor's data offset is a multiple of its item size only if the
 * tensors before it keep it so; to keep every tensor aligned, as the reference writer does, put
 * the tensors with larger item sizes first (e.g. use a {@link java.util.LinkedHashMap}).
 *
 * <p>Stateless and thread-safe; concurrent writes to the same file are not coordinated.
 */
public final class SafetensorsWriter {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private SafetensorsWriter() {
    }

    /**
     * Writes (or replaces) a safetensors file.
     *
     * @param file the file to write; an existing file is replaced
     * @param tensors tensor name to data, written in iteration order; names must not be
     *     {@code "__metadata__"}, and the data arrays are only read
     * @param metadata string key/value pairs for {@code "__metadata__"}; {@code null} or empty for
     *     none
     * @throws NullPointerException if {@code file} or {@code tensors}, or a name, key, value or
     *     tensor in the maps is null
     * @throws IllegalArgumentException if a tensor is named {@code "__metadata__"}, a string holds
     *     an unpaired UTF-16 surrogate, the header would exceed
     *     {@link SafetensorsFile#DEFAULT_HEADER_CAP} bytes, or the total size overflows a long;
     *     the file is then not touched
     * @throws IOException if writing fails (the target is then not touched: the bytes go to a hidden
     *     temporary file beside it, renamed over it when complete)
     */
    public static void write(Path file, Map<String, TensorData> tensors,
            Map<String, String> metadata) throws IOException {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(tensors, "tensors");
        byte[] header = header(tensors, metadata);
        ByteBuffer length = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN)
                .putLong(0, header.length);
        Path tmp = AtomicFiles.tempSibling(file);
        try {
            try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
                writeFully(ch, length);
                writeFully(ch, ByteBuffer.wrap(header));
                for (TensorData t : tensors.values()) {
                    writeFully(ch, ByteBuffer.wrap(t.littleEndianBytes()));
                }
            }
            AtomicFiles.publish(tmp, file);
        } catch (IOException | RuntimeException e) {
            AtomicFiles.deleteQuietly(tmp, e);
            throw e;
        }
    }

    /**
     * Encodes the header that {@link #write} writes, padding included.
     *
     * @param tensors tensor name to data, in file order
     * @param metadata {@code "__metadata__"} pairs, or {@code null}
     * @return the UTF-8 JSON header, padded with spaces to a multiple of 8 bytes
     * @throws IllegalArgumentException as for {@link #write}
     */
    static byte[] header(Map<String, TensorData> tensors, Map<String, String> metadata) {
        ObjectNode root = JsonNodeFactory.instance.objectNode();
        if (metadata != null && !metadata.isEmpty()) {
            ObjectNode meta = root.putObject(SafetensorsFile.METADATA_KEY);
            for (Map.Entry<String, String> e : metadata.entrySet()) {
                checkString(Objects.requireNonNull(e.getKey(), "metadata key"), "metadata key");
                checkString(Objects.requireNonNull(e.getValue(), "metadata value"),
                        "metadata value");
                meta.put(e.getKey(), e.getValue());
            }
        }
        long offset = 0;
        for (Map.Entry<String, TensorData> e : tensors.entrySet()) {
            String name = Objects.requireNonNull(e.getKey(), "tensor name");
            TensorData t = Objects.requireNonNull(e.getValue(), "tensor '" + name + "'");
            if (name.equals(SafetensorsFile.METADATA_KEY)) {
                throw new IllegalArgumentException("a tensor cannot be named \""
                        + SafetensorsFile.METADATA_KEY + "\": the header reserves that key");
            }
            checkString(name, "tensor name");
            long end;
            try {
                end = Math.addExact(offset, t.littleEndianBytes().length);
            } catch (ArithmeticException x) {
                throw new IllegalArgumentException("total tensor size overflows a long", x);
            }
            ObjectNode entry = root.putObject(name);
            entry.put("dtype", t.dtype().safetensorsName());
            ArrayNode shape = entry.putArray("shape");
            for (long d : t.shape()) {
                shape.add(d);
            }
            entry.putArray("data_offsets").add(offset).add(end);
            offset = end;
        }
        byte[] json;
        try {
            json = MAPPER.writeValueAsBytes(root);
        } catch (JsonProcessingException x) {
            throw new UncheckedIOException(x); // not reached for a tree of strings and numbers
        }
        int padded = (json.length + 7) & ~7;
        if (json.length > SafetensorsFile.DEFAULT_HEADER_CAP - 7) {
            throw new IllegalArgumentException("the header would take " + json.length
                    + " bytes, more than the " + SafetensorsFile.DEFAULT_HEADER_CAP
                    + " bytes readers accept");
        }
        byte[] out = new byte[padded];
        System.arraycopy(json, 0, out, 0, json.length);
        for (int i = json.length; i < padded; i++) {
            out[i] = ' ';
        }
        return out;
    }

    private static void checkString(String s, String what) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new IllegalArgumentException(what + " holds an unpaired surrogate at index "
                        + i + ": it cannot be encoded as UTF-8");
            }
        }
    }

    private static void writeFully(FileChannel ch, ByteBuffer src) throws IOException {
        while (src.hasRemaining()) {
            ch.write(src);
        }
    }
}
