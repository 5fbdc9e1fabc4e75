package dev.gdsloader.formats.safetensors;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.Shapes;
import dev.gdsloader.formats.ShardFiles;
import dev.gdsloader.formats.json.JsonDocument;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The header of a safetensors file: where each tensor lies, computed without reading data.
 *
 * <p>Format (Hugging Face safetensors, https://github.com/huggingface/safetensors, reference
 * implementation {@code safetensors/src/tensor.rs}): an 8-byte little-endian unsigned header
 * length {@code N}; {@code N} bytes of UTF-8 JSON, an object mapping each tensor name to
 * {@code {"dtype": "F32", "shape": [2, 2], "data_offsets": [begin, end]}} plus an optional
 * {@code "__metadata__"} object of string values; then the data section, which starts at file
 * offset {@code 8 + N}. {@code data_offsets} are relative to the data section, {@code end}
 * exclusive.
 *
 * <p>Validation: {@code N} is checked against the header cap and the file size before anything
 * is allocated; the header must be valid UTF-8, start with <code>'&#123;'</code> (as recent
 * reference versions require) and be one strict JSON object (duplicate keys refused); each
 * tensor entry must have exactly the keys {@code dtype}, {@code shape} and {@code data_offsets}, a known dtype
 * (see {@link DType#fromSafetensorsName}), shape entries that are non-negative integers whose
 * byte size fits a signed 64-bit long, and two non-negative integer offsets with
 * {@code begin <= end}, {@code end - begin == product(shape) * itemSize} and {@code end} within
 * the data section; no two tensors may share a byte; the data section ends with the last tensor (trailing
 * bytes are refused, as the reference does). Unlike the reference, gaps between tensors are accepted, and
 * offsets need not be aligned to the item size.
 *
 * <p>The JSON tree of the header is held in memory while parsing; it can take several times
 * the header length, so callers opening untrusted files with a small heap should pass a smaller
 * cap to {@link #open(Path, long)}.
 *
 * <p>Immutable and thread-safe. Holds no open file: {@link #open} reads the header and closes
 * the file before returning, and the object describes the file as it was then.
 */
public final class SafetensorsFile {

    /** The reference implementation's header size limit, in bytes (100,000,000). */
    public static final long DEFAULT_HEADER_CAP = 100_000_000L;

    /** The header key of the metadata object, which is not a tensor. */
    public static final String METADATA_KEY = "__metadata__";

    /** Largest header this reader can hold in one byte array. */
    private static final long MAX_ARRAY = Integer.MAX_VALUE - 8;

    private static final Set<String> TENSOR_KEYS = Set.of("dtype", "shape", "data_offsets");

    private final Path file;
    private final long fileSize;
    private final long headerLength;
    private final List<Tensor> tensors;
    private final Map<String, Tensor> byName;
    private final Map<String, String> metadata;

    private SafetensorsFile(Path file, long fileSize, long headerLength, List<Tensor> tensors,
            Map<String, String> metadata) {
        this.file = file;
        this.fileSize = fileSize;
        this.headerLength = headerLength;
        this.tensors = tensors;
        this.metadata = metadata;
        Map<String, Tensor> map = new HashMap<>();
        for (Tensor t : tensors) {
            map.put(t.name(), t);
        }
        this.byName = map;
    }

    /**
     * Reads a safetensors file's header with the default cap of {@value #DEFAULT_HEADER_CAP}
     * bytes.
     *
     * @param file the file; opened for reading and closed before returning
     * @return the parsed header
     * @throws FormatException if the file is not a valid safetensors file (see the class
     *     description); the message names the file, the byte offset, and what was expected and
     *     found
     * @throws IOException if the file cannot be opened or read
     */
    public static SafetensorsFile open(Path file) throws IOException {
        return open(file, DEFAULT_HEADER_CAP);
    }

    /**
     * Reads a safetensors file's header, refusing headers longer than {@code headerCap} bytes.
     *
     * @param file the file; opened for reading and closed before returning
     * @param headerCap largest accepted header length {@code N} in bytes, in
     *     {@code 0..Integer.MAX_VALUE - 8}; at most {@code headerCap} bytes are allocated for the
     *     header text
     * @return the parsed header
     * @throws IllegalArgumentException if {@code headerCap} is out of range
     * @throws FormatException if the file is shorter than 8 bytes, {@code N} exceeds the cap or
     *     the {@code fileSize - 8} bytes after the length field (offset 0; both numbers are
     *     named), or the header is invalid (see the class description)
     * @throws IOException if the file cannot be opened or read
     */
    public static SafetensorsFile open(Path file, long headerCap) throws IOException {
        if (headerCap < 0 || headerCap > MAX_ARRAY) {
            throw new IllegalArgumentException("header cap must be in 0.." + MAX_ARRAY + ", got "
                    + headerCap);
        }
        ShardFiles.requireRegularFile(file);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = channel.size();
            if (size < 8) {
                throw new FormatException(file, 0, "an 8-byte little-endian header length",
                        "a file of only " + size + " bytes");
            }
            ByteBuffer lengthField = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
            readFully(channel, lengthField, 0, file, size);
            long n = lengthField.getLong(0);
            String found = "header length " + Long.toUnsignedString(n)
                    + (n < 0 || n > 0xFFFF ? " (0x" + Long.toHexString(n) + ")" : "");
            if (Long.compareUnsigned(n, size - 8) > 0) {
                throw new FormatException(file, 0, "a header length of at most " + (size - 8)
                        + " bytes (the " + size + "-byte file minus the 8-byte length field)",
                        found);
            }
            if (n > headerCap) {
                throw new FormatException(file, 0, "a header length of at most the cap of "
                        + headerCap + " bytes", found + " in a " + size + "-byte file");
            }
            byte[] header = new byte[(int) n];
            readFully(channel, ByteBuffer.wrap(header), 8, file, size);
            return parse(file, size, header);
        }
    }

    private static void readFully(FileChannel channel, ByteBuffer dst, long position, Path file,
            long size) throws IOException {
        long pos = position;
        while (dst.hasRemaining()) {
            int r = channel.read(dst, pos);
            if (r < 0) {
                throw new FormatException(file, pos, dst.limit() + " bytes from offset "
                        + position + " (the file was " + size + " bytes when opened)",
                        "end of file: the file shrank while being read");
            }
            pos += r;
        }
    }

    /** A tensor with the header offset of its entry, for messages. */
    private record Entry(Tensor tensor, long begin, long end, long headerOffset) {
    }

    private static SafetensorsFile parse(Path file, long size, byte[] header)
            throws FormatException {
        long n = header.length;
        long dataStart = 8 + n;
        long dataSize = size - dataStart;
        if (n == 0 || header[0] != '{') {
            throw new FormatException(file, 8, "a header starting with '{'", n == 0
                    ? "an empty header (length 0)"
                    : String.format("byte 0x%02x", header[0] & 0xFF));
        }
        JsonDocument doc = JsonDocument.parse(header, file, 8,
                "a safetensors header (a JSON object)");
        Map<String, String> metadata = Map.of();
        List<Entry> entries = new ArrayList<>();
        for (JsonDocument.Member m : doc.members().values()) {
            if (m.name().equals(METADATA_KEY)) {
                metadata = readMetadata(m, file);
            } else {
                entries.add(readEntry(m, file, dataStart, dataSize));
            }
        }
        entries.sort(Comparator.comparingLong(Entry::begin).thenComparingLong(Entry::end)
                .thenComparing(e -> e.tensor().name()));
        Entry widest = null; // the non-empty entry with the largest end so far
        for (Entry e : entries) {
            if (e.begin() == e.end()) {
                continue;
            }
            if (widest != null && e.begin() < widest.end()) {
                throw new FormatException(file, e.headerOffset(), "tensors whose data do not "
                        + "overlap", "tensor '" + JsonDocument.quote(widest.tensor().name())
                        + "' at data_offsets [" + widest.begin() + ", " + widest.end()
                        + "] and tensor '" + JsonDocument.quote(e.tensor().name())
                        + "' at data_offsets [" + e.begin() + ", " + e.end() + "] overlap");
            }
            if (widest == null || e.end() > widest.end()) {
                widest = e;
            }
        }
        long covered = widest == null ? 0 : widest.end();
        if (covered < dataSize) {
            // the reference library refuses bytes no tensor covers; bytes after the last tensor would be silently lost
            throw new FormatException(file, dataStart + covered, "the data section to end with the last tensor at "
                    + "data offset " + covered, (dataSize - covered) + " more bytes (a file of " + size + " bytes)");
        }
        List<Tensor> tensors = new ArrayList<>(entries.size());
        for (Entry e : entries) {
            tensors.add(e.tensor());
        }
        return new SafetensorsFile(file, size, n, Collections.unmodifiableList(tensors),
                metadata);
    }

    private static Map<String, String> readMetadata(JsonDocument.Member m, Path file)
            throws FormatException {
        JsonNode node = m.value();
        if (!node.isObject()) {
            throw new FormatException(file, m.offset(), "\"" + METADATA_KEY + "\" to be an "
                    + "object of strings", JsonDocument.describe(node));
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<String, JsonNode> e : node.properties()) {
            if (!e.getValue().isTextual()) {
                throw new FormatException(file, m.offset(), "\"" + METADATA_KEY + "\" values "
                        + "to be strings", "key \"" + JsonDocument.quote(e.getKey()) + "\" with "
                        + JsonDocument.describe(e.getValue()));
            }
            out.put(e.getKey(), e.getValue().textValue());
        }
        return Collections.unmodifiableMap(out);
    }

    private static Entry readEntry(JsonDocument.Member m, Path file, long dataStart,
            long dataSize) throws FormatException {
        String name = m.name();
        String what = "tensor '" + JsonDocument.quote(name) + "'";
        long at = m.offset();
        JsonNode node = m.value();
        JsonDocument.checkKeys(node, TENSOR_KEYS, TENSOR_KEYS, what, file, at);
        DType dtype = JsonDocument.dtype(node.get("dtype"), what + " \"dtype\"", file, at);
        long[] shape = JsonDocument.nonNegativeLongs(node.get("shape"), what + " \"shape\"",
                file, at);
        long bytes;
        try {
            bytes = Shapes.byteSize(shape, dtype.itemSize());
        } catch (IllegalArgumentException e) {
            throw new FormatException(file, at, what + " with a shape whose byte size fits in a "
                    + "signed 64-bit integer", dtype.safetensorsName() + " shape "
                    + Shapes.toPythonTuple(shape) + " (" + Shapes.toProduct(shape,
                            dtype.itemSize()) + " overflows)");
        }
        JsonNode offsets = node.get("data_offsets");
        if (!offsets.isArray() || offsets.size() != 2) {
            throw new FormatException(file, at, what + " \"data_offsets\" to be an array of two "
                    + "integers [begin, end]", JsonDocument.describe(offsets));
        }
        long begin = JsonDocument.nonNegativeLong(offsets.get(0), what + " data_offsets begin",
                file, at);
        long end = JsonDocument.nonNegativeLong(offsets.get(1), what + " data_offsets end",
                file, at);
        String pair = "[" + begin + ", " + end + "]";
        if (begin > end) {
            throw new FormatException(file, at, what + " data_offsets [begin, end] with begin <= "
                    + "end", pair);
        }
        if (end - begin != bytes) {
            throw new FormatException(file, at, what + " (" + dtype.safetensorsName() + ", shape "
                    + Shapes.toPythonTuple(shape) + ") to span " + Shapes.toProduct(shape,
                            dtype.itemSize()) + " = " + bytes + " bytes",
                    "data_offsets " + pair + ", which span " + (end - begin) + " bytes");
        }
        if (end > dataSize) {
            throw new FormatException(file, at, what + " data_offsets within the " + dataSize
                    + "-byte data section (file bytes " + dataStart + ".." + (dataStart + dataSize)
                    + ")", "data_offsets " + pair + ", which end at file offset "
                    + (end > Long.MAX_VALUE - dataStart ? "beyond " + Long.MAX_VALUE
                            : String.valueOf(dataStart + end)));
        }
        return new Entry(new Tensor(name, dtype, shape, dataStart + begin, bytes), begin, end, at);
    }

    /**
     * Returns the file.
     *
     * @return the path given to {@link #open}
     */
    public Path file() {
        return file;
    }

    /**
     * Returns the size of the file when it was opened.
     *
     * @return file size in bytes
     */
    public long fileSize() {
        return fileSize;
    }

    /**
     * Returns the header length field {@code N}.
     *
     * @return length of the JSON header in bytes, padding included
     */
    public long headerLength() {
        return headerLength;
    }

    /**
     * Returns where the data section starts; {@code data_offsets} count from here.
     *
     * @return {@code 8 + N}, a byte offset from the start of the file
     */
    public long dataStart() {
        return 8 + headerLength;
    }

    /**
     * Returns the tensors.
     *
     * @return an unmodifiable list in file order: by data offset, then end offset, then name
     */
    public List<Tensor> tensors() {
        return tensors;
    }

    /**
     * Returns the tensor names.
     *
     * @return an unmodifiable list in the order of {@link #tensors()}
     */
    public List<String> names() {
        return tensors.stream().map(Tensor::name).toList();
    }

    /**
     * Returns one tensor.
     *
     * @param name the tensor's key in the header
     * @return the tensor
     * @throws IllegalArgumentException if there is no such tensor; the message names the file and
     *     lists the tensor names (the first 20 when there are more)
     */
    public Tensor tensor(String name) {
        Tensor t = byName.get(name);
        if (t == null) {
            List<String> names = names();
            throw new IllegalArgumentException(file + ": no tensor '" + name + "'; the "
                    + names.size() + " tensors are " + (names.size() <= 20 ? names
                            : names.subList(0, 20) + " and " + (names.size() - 20) + " more"));
        }
        return t;
    }

    /**
     * Views one tensor as records along its axis 0 (see {@link Tensor#asRecords}).
     *
     * @param name the tensor's key in the header
     * @return an immutable, thread-safe layout whose {@link RecordLayout#file()} is
     *     {@link #file()}
     * @throws IllegalArgumentException if there is no such tensor
     * @throws FormatException if the tensor is 0-d (named in the message)
     */
    public RecordLayout records(String name) throws FormatException {
        return tensor(name).asRecords(file, fileSize);
    }

    /**
     * Returns the {@code "__metadata__"} object of the header.
     *
     * @return an unmodifiable map in header order; empty when the header has none
     */
    public Map<String, String> metadata() {
        return metadata;
    }

    @Override
    public String toString() {
        return "SafetensorsFile[" + file + ", " + tensors.size() + " tensors, data at "
                + dataStart() + "]";
    }
}
