package dev.gdsloader.formats.raw;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.Shapes;
import dev.gdsloader.formats.ShardFiles;
import dev.gdsloader.formats.json.JsonDocument;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;

/**
 * A raw shard: a file of fixed-size records with no header (conventionally {@code *.bin}),
 * described by a JSON sidecar next to it whose name is the shard's file name plus
 * {@code ".json"} (see {@link #sidecarOf(Path)}).
 *
 * <p>Sidecar format (this project's own, version 1):
 * <pre>{@code
 * {"format": "gdsloader-raw", "version": 1, "dtype": "F32", "record_shape": [3, 4],
 *  "record_bytes": 48, "count": 100}
 * }</pre>
 * {@code dtype} is a safetensors dtype name ({@link DType#safetensorsName()}); each record is a
 * C-order little-endian array of that type with shape {@code record_shape} ({@code []} for
 * scalar records); {@code record_bytes} must equal {@code product(record_shape) * itemSize} and
 * the shard's size must be exactly {@code count * record_bytes} bytes. All six keys are
 * required and no other key is allowed. Record {@code i} occupies bytes
 * {@code [i * record_bytes, (i + 1) * record_bytes)} of the shard: {@link #dataOffset()} is 0.
 *
 * <p>Immutable and thread-safe. Holds no open file: {@link #open} reads the sidecar and the
 * shard's size, and the layout describes the files as they were then.
 */
public final class RawShard implements RecordLayout {

    /** The {@code "format"} value of a sidecar. */
    public static final String FORMAT = "gdsloader-raw";

    /** The sidecar version this class reads and {@link RawWriter} writes. */
    public static final int VERSION = 1;

    /** Largest sidecar accepted, in bytes (1 MiB); real sidecars are about 100 bytes. */
    public static final long SIDECAR_CAP = 1 << 20;

    private static final Set<String> KEYS = Set.of("format", "version", "dtype", "record_shape",
            "record_bytes", "count");

    private final Path file;
    private final Path sidecar;
    private final DType dtype;
    private final long[] recordShape;
    private final long recordBytes;
    private final long count;
    private final long fileSize;

    private RawShard(Path file, Path sidecar, DType dtype, long[] recordShape, long recordBytes,
            long count, long fileSize) {
        this.file = file;
        this.sidecar = sidecar;
        this.dtype = dtype;
        this.recordShape = recordShape;
        this.recordBytes = recordBytes;
        this.count = count;
        this.fileSize = fileSize;
    }

    /**
     * Returns the sidecar path of a shard.
     *
     * @param binFile the shard, e.g. {@code images-00000.bin}
     * @return the file next to it named after it plus {@code ".json"}, e.g.
     *     {@code images-00000.bin.json}
     * @throws IllegalArgumentException if {@code binFile} has no file name (e.g. a root)
     */
    public static Path sidecarOf(Path binFile) {
        Path name = binFile.getFileName();
        if (name == null) {
            throw new IllegalArgumentException("not a file path: " + binFile);
        }
        return binFile.resolveSibling(name + ".json");
    }

    /**
     * Reads a raw shard's sidecar and size, without reading data.
     *
     * @param binFile the shard; its sidecar is {@link #sidecarOf(Path) sidecarOf(binFile)}
     * @return the layout
     * @throws NoSuchFileException if the shard itself does not exist
     * @throws FormatException if the sidecar is missing (the message names the sidecar and the
     *     shard), larger than {@link #SIDECAR_CAP}, not valid JSON, has a missing or unknown key,
     *     a wrong format or version, an unknown dtype, a negative or non-integer number, a
     *     {@code record_bytes} other than {@code product(record_shape) * itemSize}, or if the
     *     shard's size differs from {@code count * record_bytes} (the exception is then on the
     *     shard and names both numbers); sidecar problems are reported on the sidecar file with
     *     the byte offset of the offending value
     * @throws IOException if a file cannot be read
     */
    public static RawShard open(Path binFile) throws IOException {
        Path sidecar = sidecarOf(binFile);
        ShardFiles.requireRegularFile(binFile);
        ShardFiles.requireRegularFile(sidecar);
        long size = Files.size(binFile);
        byte[] json = readSidecar(binFile, sidecar);
        JsonDocument doc = JsonDocument.parse(json, sidecar, 0, "a " + FORMAT
                + " sidecar (a JSON object)");
        String what = "the sidecar";
        doc.refuseUnknownKeys(KEYS, what);
        JsonDocument.Member format = doc.require("format", what);
        String formatName = JsonDocument.string(format.value(), "\"format\"", sidecar,
                format.offset());
        if (!formatName.equals(FORMAT)) {
            throw new FormatException(sidecar, format.offset(), "\"format\": \"" + FORMAT + "\"",
                    JsonDocument.describe(format.value()));
        }
        JsonDocument.Member version = doc.require("version", what);
        if (!version.value().isIntegralNumber() || !version.value().canConvertToInt()
                || version.value().intValue() != VERSION) {
            throw new FormatException(sidecar, version.offset(), "\"version\": " + VERSION,
                    JsonDocument.describe(version.value()));
        }
        JsonDocument.Member dt = doc.require("dtype", what);
        DType dtype = JsonDocument.dtype(dt.value(), "\"dtype\"", sidecar, dt.offset());
        JsonDocument.Member rs = doc.require("record_shape", what);
        long[] recordShape = JsonDocument.nonNegativeLongs(rs.value(), "\"record_shape\"",
                sidecar, rs.offset());
        JsonDocument.Member rb = doc.require("record_bytes", what);
        long recordBytes = JsonDocument.nonNegativeLong(rb.value(), "\"record_bytes\"", sidecar,
                rb.offset());
        JsonDocument.Member cn = doc.require("count", what);
        long count = JsonDocument.nonNegativeLong(cn.value(), "\"count\"", sidecar, cn.offset());

        long expectedRecord = Shapes.byteSize(recordShape, dtype.itemSize(), sidecar, rs.offset());
        if (recordBytes != expectedRecord) {
            throw new FormatException(sidecar, rb.offset(), "\"record_bytes\" " + expectedRecord
                    + " (" + Shapes.toProduct(recordShape, dtype.itemSize()) + " for "
                    + dtype.safetensorsName() + " record_shape " + JsonDocument.quote(
                            Shapes.toPythonTuple(recordShape)) + ")", String.valueOf(recordBytes));
        }
        long expectedSize;
        try {
            expectedSize = Math.multiplyExact(count, recordBytes);
        } catch (ArithmeticException e) {
            throw new FormatException(sidecar, cn.offset(), "\"count\" x \"record_bytes\" that "
                    + "fits in a signed 64-bit integer", count + " x " + recordBytes);
        }
        if (expectedSize != size) {
            throw new FormatException(binFile, Math.min(expectedSize, size), "a shard of "
                    + expectedSize + " bytes (count " + count + " x record_bytes " + recordBytes
                    + ", from " + sidecar.getFileName() + ")", size + " bytes");
        }
        return new RawShard(binFile, sidecar, dtype, recordShape, recordBytes, count, size);
    }

    private static byte[] readSidecar(Path binFile, Path sidecar) throws IOException {
        FileChannel ch;
        try {
            ch = FileChannel.open(sidecar, StandardOpenOption.READ);
        } catch (NoSuchFileException e) {
            throw new FormatException(sidecar, 0, "the JSON sidecar of raw shard " + binFile,
                    "no such file", e);
        }
        try (ch) {
            long size = ch.size();
            if (size > SIDECAR_CAP) {
                throw new FormatException(sidecar, 0, "a sidecar of at most " + SIDECAR_CAP
                        + " bytes", size + " bytes");
            }
            ByteBuffer buf = ByteBuffer.allocate((int) size);
            while (buf.hasRemaining()) {
                if (ch.read(buf, buf.position()) < 0) {
                    throw new FormatException(sidecar, buf.position(), size + " bytes",
                            "end of file: the file shrank while being read");
                }
            }
            return buf.array();
        }
    }

    /**
     * Returns the sidecar file.
     *
     * @return {@link #sidecarOf(Path) sidecarOf(file())}
     */
    public Path sidecar() {
        return sidecar;
    }

    /** {@inheritDoc} */
    @Override
    public Path file() {
        return file;
    }

    /** {@inheritDoc} */
    @Override
    public DType dtype() {
        return dtype;
    }

    /**
     * {@inheritDoc}
     *
     * @return a fresh copy of the sidecar's {@code record_shape}
     */
    @Override
    public long[] recordShape() {
        return recordShape.clone();
    }

    /**
     * {@inheritDoc}
     *
     * @return the sidecar's {@code count}
     */
    @Override
    public long recordCount() {
        return count;
    }

    /** {@inheritDoc} */
    @Override
    public long recordBytes() {
        return recordBytes;
    }

    /**
     * {@inheritDoc}
     *
     * @return 0: a raw shard has no header
     */
    @Override
    public long dataOffset() {
        return 0;
    }

    /** {@inheritDoc} */
    @Override
    public long fileSize() {
        return fileSize;
    }

    @Override
    public String toString() {
        return "RawShard[" + file + ", " + count + " records of " + dtype.safetensorsName() + " "
                + Shapes.toPythonTuple(recordShape) + "]";
    }
}
