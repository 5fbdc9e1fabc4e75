package dev.gdsloader.formats.npy;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.Shapes;
import dev.gdsloader.formats.ShardFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The header of a NumPy {@code .npy} file.
 *
 * <p>Format (numpy.lib.format; NEP 1, "A Simple File Format for NumPy Arrays"): the 6-byte magic
 * {@code \x93NUMPY}; a major and a minor version byte; the header length, an unsigned
 * little-endian 2-byte integer for version 1.0 and a 4-byte one for 2.0 and 3.0; then that many
 * header bytes, ISO-8859-1 text for 1.0 and 2.0 and UTF-8 for 3.0, holding a Python dict literal
 * with exactly the keys {@code 'descr'}, {@code 'fortran_order'} and {@code 'shape'}, padded
 * (normally with spaces) and terminated by {@code '\n'}. The array data follows immediately, at
 * {@link #dataOffset()}; NumPy aligns it to 64 bytes (16 in releases before 1.14), but any
 * padding is accepted.
 *
 * <p>Immutable and thread-safe: the shape array is copied on the way in and out.
 *
 * @param majorVersion format major version: 1, 2 or 3
 * @param minorVersion format minor version: 0
 * @param dtype element type
 * @param fortranOrder whether the data is stored in Fortran (column-major) order
 * @param shape array shape in elements per axis; {@code []} for a 0-d array
 * @param dataOffset byte offset of the first data byte from the start of the file
 */
@SuppressWarnings("ArrayRecordComponent") // shape copied in and out, equals/hashCode by content
public record NpyHeader(int majorVersion, int minorVersion, DType dtype, boolean fortranOrder,
        long[] shape, long dataOffset) {

    /** The 6-byte magic string every {@code .npy} file starts with. */
    static final byte[] MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y'};

    /**
     * Largest header length accepted, in bytes (16 MiB). NumPy itself refuses headers above
     * 10,000 bytes unless asked to trust the file; this bound only keeps hostile length fields
     * from allocating gigabytes.
     */
    public static final int MAX_HEADER_BYTES = 1 << 24;

    private static final List<String> KEYS = List.of("descr", "fortran_order", "shape");

    /**
     * Validates the components and copies the shape.
     *
     * @throws IllegalArgumentException if the version is not 1.0, 2.0 or 3.0, {@code dtype} or
     *     {@code shape} is null, the shape has a negative entry or its byte size overflows a long,
     *     or {@code dataOffset} is negative
     */
    public NpyHeader {
        if (majorVersion < 1 || majorVersion > 3 || minorVersion != 0) {
            throw new IllegalArgumentException("unsupported .npy version " + majorVersion + "."
                    + minorVersion);
        }
        if (dtype == null || shape == null) {
            throw new IllegalArgumentException("dtype and shape must not be null");
        }
        shape = shape.clone();
        Shapes.byteSize(shape, dtype.itemSize());
        if (dataOffset < 0) {
            throw new IllegalArgumentException("dataOffset must be >= 0, got " + dataOffset);
        }
    }

    /**
     * Returns the array shape.
     *
     * @return a fresh copy of the shape, elements per axis
     */
    @Override
    public long[] shape() {
        return shape.clone();
    }

    /**
     * Returns the size of the data section.
     *
     * @return {@code product(shape) * dtype.itemSize()}, in bytes
     */
    public long dataBytes() {
        return Shapes.byteSize(shape, dtype.itemSize());
    }

    /**
     * Reads and validates the header of a {@code .npy} file, without reading the data.
     *
     * @param file the file; opened for reading and closed before returning
     * @return the header
     * @throws FormatException if the header is malformed or unsupported (see
     *     {@link #read(FileChannel, Path)})
     * @throws IOException if the file cannot be opened or read
     */
    public static NpyHeader parse(Path file) throws IOException {
        ShardFiles.requireRegularFile(file);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            return read(channel, file);
        }
    }

    /**
     * Reads and validates the header at the start of a channel, without reading the data.
     *
     * <p>Uses positional reads from byte 0, so the channel's position is left unchanged; the
     * channel stays open and remains owned by the caller. Reads at most the header's bytes.
     * Safe to call concurrently on one channel (positional reads do not share state).
     *
     * @param channel an open readable channel on the file
     * @param file the file's path, used only in exception messages (may be {@code null})
     * @return the header; {@link #dataOffset()} is at most the channel's size, but the size of
     *     the data section is not checked (see {@link NpyShard#open(Path)})
     * @throws FormatException if the magic is wrong, the version is not 1.0, 2.0 or 3.0, the
     *     header length runs past the end of the file or exceeds {@link #MAX_HEADER_BYTES}, the
     *     header does not end with {@code '\n'}, the header text is not a dict literal with exactly
     *     the keys 'descr', 'fortran_order' and 'shape', the descr is not a supported dtype (see
     *     {@link DType#fromNumpyDescr}), fortran_order is not a bool, the shape is not a tuple of
     *     non-negative ints, or the data size overflows a long
     * @throws IOException if reading the channel fails
     */
    public static NpyHeader read(FileChannel channel, Path file) throws IOException {
        return read(new ChannelRange(channel, 0, channel.size()), file);
    }

    /**
     * Where a header is read from: a file, a byte range of a file (a stored {@code .npz} member), or an inflated
     * stream ({@link InflatedPrefix}). Offsets count from the start of the {@code .npy} bytes.
     */
    interface Source {
        /** @return bytes of the whole {@code .npy} (header and data) */
        long size() throws IOException;

        /** @return up to {@code n} bytes at {@code position}; fewer only at the end */
        byte[] readAtMost(long position, int n) throws IOException;
    }

    /** A byte range {@code [base, base + size)} of an open channel, read with positional reads. */
    record ChannelRange(FileChannel channel, long base, long size) implements Source {
        @Override
        public byte[] readAtMost(long position, int n) throws IOException {
            int len = (int) Math.max(0, Math.min(n, size - position));
            ByteBuffer buf = ByteBuffer.allocate(len);
            while (buf.hasRemaining()) {
                if (channel.read(buf, base + position + buf.position()) < 0) {
                    break;
                }
            }
            return Arrays.copyOf(buf.array(), buf.position());
        }
    }

    /** Reads and validates a header from a {@link Source}, as {@link #read(FileChannel, Path)}. */
    static NpyHeader read(Source channel, Path file) throws IOException {
        long fileSize = channel.size();
        byte[] prefix = channel.readAtMost(0, 8);
        for (int i = 0; i < MAGIC.length; i++) {
            if (i >= prefix.length) {
                throw new FormatException(file, prefix.length, "\\x93NUMPY magic",
                        "end of file after " + prefix.length + " bytes");
            }
            if (prefix[i] != MAGIC[i]) {
                throw new FormatException(file, 0, "\\x93NUMPY magic",
                        escape(prefix, Math.min(prefix.length, MAGIC.length)));
            }
        }
        if (prefix.length < 8) {
            throw new FormatException(file, prefix.length, "a 2-byte format version",
                    "end of file after " + prefix.length + " bytes");
        }
        int major = prefix[6] & 0xFF;
        int minor = prefix[7] & 0xFF;
        if (major < 1 || major > 3 || minor != 0) {
            throw new FormatException(file, 6, "format version 1.0, 2.0 or 3.0",
                    "version " + major + "." + minor);
        }
        int lengthBytes = major == 1 ? 2 : 4;
        byte[] lengthField = channel.readAtMost(8, lengthBytes);
        if (lengthField.length < lengthBytes) {
            throw new FormatException(file, 8 + lengthField.length, "a " + lengthBytes
                    + "-byte header length", "end of file after " + (8 + lengthField.length)
                    + " bytes");
        }
        ByteBuffer lb = ByteBuffer.wrap(lengthField).order(ByteOrder.LITTLE_ENDIAN);
        long headerLength = major == 1 ? lb.getShort() & 0xFFFFL : lb.getInt() & 0xFFFFFFFFL;
        long headerStart = 8L + lengthBytes;
        long dataOffset = headerStart + headerLength;
        if (headerLength > MAX_HEADER_BYTES) {
            throw new FormatException(file, 8, "a header length of at most " + MAX_HEADER_BYTES
                    + " bytes", headerLength + " bytes");
        }
        if (dataOffset > fileSize) {
            throw new FormatException(file, 8, "a header of " + headerLength
                    + " bytes (data at byte offset " + dataOffset + ")", "a file of only "
                    + fileSize + " bytes");
        }
        if (headerLength == 0) {
            throw new FormatException(file, headerStart, "a header dict", "an empty header");
        }
        byte[] header = channel.readAtMost(headerStart, (int) headerLength);
        if (header.length < headerLength) {
            throw new FormatException(file, headerStart + header.length, headerLength
                    + " header bytes", "end of file");
        }
        if (header[header.length - 1] != '\n') {
            throw new FormatException(file, dataOffset - 1, "'\\n' ending the header",
                    PyLiteralParser.describe(header[header.length - 1] & 0xFF));
        }
        Charset charset = major == 3 ? StandardCharsets.UTF_8 : StandardCharsets.ISO_8859_1;
        Map<String, PyLiteralParser.Entry> dict = new PyLiteralParser(header, header.length,
                headerStart, file, charset, major <= 2).parseDict();
        return fromDict(dict, major, minor, dataOffset, headerStart, file);
    }

    private static NpyHeader fromDict(Map<String, PyLiteralParser.Entry> dict, int major,
            int minor, long dataOffset, long headerStart, Path file) throws FormatException {
        for (Map.Entry<String, PyLiteralParser.Entry> e : dict.entrySet()) {
            if (!KEYS.contains(e.getKey())) {
                throw new FormatException(file, e.getValue().offset(),
                        "only the keys 'descr', 'fortran_order' and 'shape'",
                        "key '" + e.getKey() + "'");
            }
        }
        if (!dict.keySet().containsAll(KEYS)) {
            Set<String> missing = new TreeSet<>(KEYS);
            missing.removeAll(dict.keySet());
            throw new FormatException(file, headerStart, "the keys 'descr', 'fortran_order' and "
                    + "'shape' in the header dict", "no key " + missing);
        }
        PyLiteralParser.Entry descr = dict.get("descr");
        DType dtype = switch (descr.value()) {
            case String s -> DType.fromNumpyDescr(s, file, descr.offset());
            case PyLiteralParser.PyList l -> throw new FormatException(file, descr.offset(),
                    "structured dtype (a list of fields) is not supported: store each field as "
                            + "its own .npy column");
            default -> throw new FormatException(file, descr.offset(), "a descr string",
                    describeValue(descr.value()));
        };
        PyLiteralParser.Entry order = dict.get("fortran_order");
        if (!(order.value() instanceof Boolean fortran)) {
            throw new FormatException(file, order.offset(), "fortran_order True or False",
                    describeValue(order.value()));
        }
        PyLiteralParser.Entry shapeEntry = dict.get("shape");
        if (!(shapeEntry.value() instanceof PyLiteralParser.Tuple tuple)) {
            throw new FormatException(file, shapeEntry.offset(), "a shape tuple",
                    describeValue(shapeEntry.value()));
        }
        long[] shape = new long[tuple.items().size()];
        for (int i = 0; i < shape.length; i++) {
            if (!(tuple.items().get(i) instanceof Long dim) || dim < 0) {
                throw new FormatException(file, shapeEntry.offset(), "a shape tuple of "
                        + "non-negative ints", describeValue(tuple));
            }
            shape[i] = dim;
        }
        Shapes.byteSize(shape, dtype.itemSize(), file, shapeEntry.offset());
        return new NpyHeader(major, minor, dtype, fortran, shape, dataOffset);
    }

    private static String describeValue(Object value) {
        return switch (value) {
            case String s -> "string '" + s + "'";
            case Long l -> "int " + l;
            case Boolean b -> b ? "True" : "False";
            case PyLiteralParser.Tuple t -> "tuple " + t.items();
            case PyLiteralParser.PyList l -> "list " + l.items();
            case Map<?, ?> m -> "a dict";
            default -> String.valueOf(value);
        };
    }

    private static String escape(byte[] bytes, int n) {
        StringBuilder sb = new StringBuilder("'");
        for (int i = 0; i < n; i++) {
            int c = bytes[i] & 0xFF;
            sb.append(c >= 0x20 && c < 0x7F && c != '\\' ? String.valueOf((char) c)
                    : String.format("\\x%02x", c));
        }
        return sb.append('\'').toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof NpyHeader h && majorVersion == h.majorVersion
                && minorVersion == h.minorVersion && dtype == h.dtype
                && fortranOrder == h.fortranOrder && Arrays.equals(shape, h.shape)
                && dataOffset == h.dataOffset;
    }

    @Override
    public int hashCode() {
        return 31 * (31 * dtype.hashCode() + Arrays.hashCode(shape)) + Long.hashCode(dataOffset)
                + majorVersion + Boolean.hashCode(fortranOrder);
    }

    @Override
    public String toString() {
        return "NpyHeader[version=" + majorVersion + "." + minorVersion + ", dtype=" + dtype
                + ", fortranOrder=" + fortranOrder + ", shape=" + Shapes.toPythonTuple(shape)
                + ", dataOffset=" + dataOffset + "]";
    }
}
