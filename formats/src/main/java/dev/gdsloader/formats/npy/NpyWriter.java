package dev.gdsloader.formats.npy;

import dev.gdsloader.formats.AtomicFiles;
import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.Shapes;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Objects;

/**
 * Writes a C-order {@code .npy} file whose header is byte for byte what {@code numpy.save}
 * writes (numpy.lib.format, NEP 1): version 1.0, or 2.0 if the header does not fit 65535 bytes,
 * with the data starting at a multiple of 64 bytes.
 *
 * <p>Usage: {@link #create} writes the header, {@link #write(ByteBuffer)} appends little-endian
 * C-order data bytes, {@link #close()} checks that exactly {@code product(shape) * itemSize}
 * bytes were written. The bytes go to a hidden temporary file in the target's directory
 * ({@link dev.gdsloader.formats.AtomicFiles#tempSibling}), renamed over the target by a
 * {@link #close()} that finds the array complete: the target is never a partial array. The
 * writer owns the file channel and the temporary file, and closes (or deletes) them in
 * {@link #close()}. Not thread-safe: use from one thread at a time.
 */
public final class NpyWriter implements AutoCloseable {

    private final Path file;
    private final Path tmp;
    private final FileChannel channel;
    private final long dataOffset;
    private final long expectedBytes;
    private long written;
    private boolean closed;

    private NpyWriter(Path file, Path tmp, FileChannel channel, long dataOffset, long expectedBytes) {
        this.file = file;
        this.tmp = tmp;
        this.channel = channel;
        this.dataOffset = dataOffset;
        this.expectedBytes = expectedBytes;
    }

    /**
     * Creates (or truncates) {@code file} and writes the header for an array of {@code dtype}
     * and {@code shape}.
     *
     * @param file the file to write; an existing file is replaced when the array is complete
     * @param dtype element type
     * @param shape array shape in elements per axis ({@code []} for a 0-d array); copied
     * @return a writer positioned at the start of the data section; the caller must close it
     * @throws IllegalArgumentException if a shape entry is negative or the data size overflows
     * @throws UnsupportedOperationException if NumPy has no such dtype
     *     ({@link DType#hasNumpyDescr()} is false); the file is then not touched
     * @throws IOException if the file cannot be created or written (the target is then not touched)
     */
    public static NpyWriter create(Path file, DType dtype, long[] shape) throws IOException {
        return create(file, dtype, shape, NpyHeaderEncoder.ARRAY_ALIGN);
    }

    /**
     * As {@link #create(Path, DType, long[])}, with the data starting at a multiple of {@code dataAlignment}
     * bytes (the header is padded with spaces, which NumPy accepts): 4096 lays records of 4 KiB multiples on
     * storage blocks for direct reads.
     *
     * @param file the file to write; an existing file is replaced when the array is complete
     * @param dtype element type
     * @param shape array shape
     * @param dataAlignment data alignment in bytes, a multiple of 64 up to 65536
     * @return a writer positioned at the start of the data section; the caller must close it
     * @throws IllegalArgumentException if the alignment is not a multiple of 64 in 64..65536, or as above
     * @throws UnsupportedOperationException if NumPy has no such dtype; the file is then not touched
     * @throws IOException if the file cannot be created or written (the target is then not touched)
     */
    public static NpyWriter create(Path file, DType dtype, long[] shape, int dataAlignment) throws IOException {
        Objects.requireNonNull(file, "file");
        Objects.requireNonNull(dtype, "dtype");
        if (dataAlignment < 64 || dataAlignment > 65536 || dataAlignment % 64 != 0) {
            throw new IllegalArgumentException("data alignment must be a multiple of 64 in 64..65536, got " + dataAlignment);
        }
        long[] dims = shape.clone();
        long expected = Shapes.byteSize(dims, dtype.itemSize());
        byte[] header = NpyHeaderEncoder.encode(dtype, dims, dataAlignment);
        Path tmp = AtomicFiles.tempSibling(file);
        FileChannel channel = null;
        try {
            channel = FileChannel.open(tmp, StandardOpenOption.WRITE);
            writeFully(channel, ByteBuffer.wrap(header));
        } catch (IOException | RuntimeException e) {
            try {
                if (channel != null) {
                    channel.close();
                }
            } finally {
                AtomicFiles.deleteQuietly(tmp, e);
            }
            throw e;
        }
        return new NpyWriter(file, tmp, channel, header.length, expected);
    }

    /**
     * Writes a whole array to a {@code .npy} file.
     *
     * @param file the file to write; an existing file is replaced when the array is complete
     * @param dtype element type
     * @param shape array shape in elements per axis
     * @param data exactly {@code product(shape) * dtype.itemSize()} little-endian C-order bytes;
     *     only read
     * @throws IllegalArgumentException if {@code data.length} is not the array's byte size (the
     *     file is then not touched), or the shape is invalid
     * @throws UnsupportedOperationException if NumPy has no such dtype; the file is then not touched
     * @throws IOException if writing fails (the target is then not touched)
     */
    public static void write(Path file, DType dtype, long[] shape, byte[] data) throws IOException {
        long expected = Shapes.byteSize(shape, dtype.itemSize());
        if (data.length != expected) {
            throw new IllegalArgumentException("shape " + Shapes.toPythonTuple(shape) + " of "
                    + dtype + " needs " + expected + " bytes, got " + data.length);
        }
        try (NpyWriter writer = create(file, dtype, shape)) {
            writer.write(ByteBuffer.wrap(data));
        }
    }

    /**
     * Appends data bytes: all of {@code src}'s remaining bytes, advancing its position to its
     * limit.
     *
     * @param src little-endian C-order element bytes; read, not retained
     * @throws IOException if the writer is closed, if the bytes would run past the
     *     {@link #expectedDataBytes()} of the shape (then nothing is written), or writing fails
     */
    public void write(ByteBuffer src) throws IOException {
        if (closed) {
            throw new IOException(file + ": NpyWriter is closed");
        }
        if (src.remaining() > expectedBytes - written) {
            throw new IOException(file + ": writing " + src.remaining() + " more bytes after "
                    + written + " would exceed the " + expectedBytes + " data bytes of the array");
        }
        written += writeFully(channel, src);
    }

    /**
     * Returns where the data section starts.
     *
     * @return byte offset of the first data byte, a multiple of 64
     */
    public long dataOffset() {
        return dataOffset;
    }

    /**
     * Returns the size the data section must reach.
     *
     * @return {@code product(shape) * itemSize}, in bytes
     */
    public long expectedDataBytes() {
        return expectedBytes;
    }

    /**
     * Returns how many data bytes were written so far.
     *
     * @return bytes written by {@link #write(ByteBuffer)}
     */
    public long bytesWritten() {
        return written;
    }

    /**
     * Closes the file and, if the array is complete, renames it over the target. Idempotent:
     * later calls do nothing.
     *
     * @throws IOException if the number of data bytes written differs from
     *     {@link #expectedDataBytes()} (the incomplete file is then deleted and the target not
     *     touched), or closing or renaming fails (likewise)
     */
    @Override
    public void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            channel.close();
            if (written != expectedBytes) {
                throw new IOException(file + ": wrote " + written + " data bytes but the array needs "
                        + expectedBytes + "; the incomplete file was deleted");
            }
            AtomicFiles.publish(tmp, file);
        } catch (IOException | RuntimeException e) {
            AtomicFiles.deleteQuietly(tmp, e);
            throw e;
        }
    }

    private static long writeFully(FileChannel channel, ByteBuffer src) throws IOException {
        long n = 0;
        while (src.hasRemaining()) {
            n += channel.write(src);
        }
        return n;
    }
}
