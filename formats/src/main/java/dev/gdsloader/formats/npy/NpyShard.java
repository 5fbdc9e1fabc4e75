package dev.gdsloader.formats.npy;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.Shapes;
import dev.gdsloader.formats.ShardFiles;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;

/**
 * The record layout of a {@code .npy} file: one record per row along axis 0.
 *
 * <p>An array of shape {@code (N, d1, ..., dk)} holds {@code N} records of shape
 * {@code (d1, ..., dk)}; a 1-d array of shape {@code (N,)} holds {@code N} scalar records
 * (record shape {@code []}); shapes {@code (0,)} or {@code (0, 28, 28)} hold no records. Row
 * {@code i} is contiguous because the data is in C order.
 *
 * <p>Immutable and thread-safe. Holds no open file: {@link #open(Path)} reads the header and
 * closes the file before returning, and the layout describes the file as it was then.
 */
public final class NpyShard implements RecordLayout {

    private final Path file;
    private final NpyHeader header;
    private final long fileSize;
    private final long[] recordShape;
    private final long recordBytes;
    private final long recordCount;

    private NpyShard(Path file, NpyHeader header, long fileSize, long[] recordShape,
            long recordBytes) {
        this.recordCount = header.shape()[0];
        this.file = file;
        this.header = header;
        this.fileSize = fileSize;
        this.recordShape = recordShape;
        this.recordBytes = recordBytes;
    }

    /**
     * Reads a {@code .npy} file's header and computes its record layout, without reading data.
     *
     * @param file the {@code .npy} file; opened for reading and closed before returning
     * @return the layout
     * @throws FormatException if the header is invalid (see {@link NpyHeader#read}), the array is
     *     0-d (it has no axis 0 to split into records), fortran_order is True for an array of 2
     *     or more dimensions, or the file size differs from header + data size (the message gives
     *     both, e.g. "expected 47040128 bytes (header 128 + 60000 x 784 x 1), found 47040000")
     * @throws IOException if the file cannot be opened or read
     */
    public static NpyShard open(Path file) throws IOException {
        ShardFiles.requireRegularFile(file);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            NpyHeader header = NpyHeader.read(channel, file);
            return of(file, header, channel.size());
        }
    }

    private static NpyShard of(Path file, NpyHeader header, long fileSize) throws FormatException {
        long[] shape = header.shape();
        int itemSize = header.dtype().itemSize();
        long[] recordShape = recordShape(file, header);
        long dataBytes = header.dataBytes();
        long expected = header.dataOffset() + dataBytes; // negative if it overflows
        if (expected < 0 || expected != fileSize) {
            throw new FormatException(file, expected < 0 ? fileSize : Math.min(expected, fileSize),
                    "expected " + (expected < 0 ? "more than " + Long.MAX_VALUE : expected)
                            + " bytes (header " + header.dataOffset() + " + "
                            + Shapes.toProduct(shape, itemSize) + "), found " + fileSize);
        }
        long recordBytes = Shapes.byteSize(recordShape, itemSize, file, header.dataOffset());
        return new NpyShard(file, header, fileSize, recordShape, recordBytes);
    }

    /**
     * The shape of one record (axes 1..) of an array, refusing arrays whose rows are not records.
     *
     * @param file the file, for messages
     * @param header its header
     * @return a new array: the array's shape without axis 0
     * @throws FormatException if the array is 0-d, or is in Fortran order with 2 or more dimensions
     */
    static long[] recordShape(Path file, NpyHeader header) throws FormatException {
        long[] shape = header.shape();
        if (shape.length == 0) {
            throw new FormatException(file, header.dataOffset(), "an array with at least 1 "
                    + "dimension (records are rows along axis 0)", "a 0-d array (shape ())");
        }
        if (header.fortranOrder() && shape.length > 1) {
            throw new FormatException(file, header.dataOffset(), "fortran_order True is not "
                    + "supported for " + shape.length + "-d arrays (shape "
                    + Shapes.toPythonTuple(shape) + "): rows are not contiguous; save with "
                    + "np.save(f, np.ascontiguousarray(arr))");
        }
        return Arrays.copyOfRange(shape, 1, shape.length);
    }

    /**
     * Returns the parsed header.
     *
     * @return the header (immutable)
     */
    public NpyHeader header() {
        return header;
    }

    /** {@inheritDoc} */
    @Override
    public Path file() {
        return file;
    }

    /** {@inheritDoc} */
    @Override
    public DType dtype() {
        return header.dtype();
    }

    /**
     * {@inheritDoc}
     *
     * @return a fresh copy of axes 1.. of the array shape
     */
    @Override
    public long[] recordShape() {
        return recordShape.clone();
    }

    /**
     * {@inheritDoc}
     *
     * @return the length of axis 0
     */
    @Override
    public long recordCount() {
        return recordCount;
    }

    /** {@inheritDoc} */
    @Override
    public long recordBytes() {
        return recordBytes;
    }

    /** {@inheritDoc} */
    @Override
    public long dataOffset() {
        return header.dataOffset();
    }

    /** {@inheritDoc} */
    @Override
    public long fileSize() {
        return fileSize;
    }

    @Override
    public String toString() {
        return "NpyShard[" + file + ", " + header.dtype() + " " + Shapes.toPythonTuple(header.shape())
                + ", data at " + header.dataOffset() + "]";
    }
}
