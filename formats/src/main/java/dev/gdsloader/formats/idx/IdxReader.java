package dev.gdsloader.formats.idx;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.Shapes;
import dev.gdsloader.formats.ShardFiles;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.GZIPInputStream;
import java.util.zip.ZipException;

/**
 * Reads IDX files, the format of the MNIST and Fashion-MNIST data sets, plain or gzip-compressed.
 *
 * <p>Format (Yann LeCun's MNIST page, "THE IDX FILE FORMAT"): a 4-byte magic of two zero bytes,
 * a type code ({@code 0x08} unsigned byte, {@code 0x09} signed byte, {@code 0x0B} 2-byte short,
 * {@code 0x0C} 4-byte int, {@code 0x0D} 4-byte float, {@code 0x0E} 8-byte double) and the number
 * of dimensions; then one big-endian 32-bit size per dimension; then the data in C order, each
 * element big-endian. A file is gzip-compressed if it starts with the gzip magic {@code 1f 8b}
 * (RFC 1952), whatever its name.
 *
 * <p>Unlike the {@code .npy} readers this class reads the whole data section into memory, since
 * IDX data is big-endian and often compressed; it is meant for converting IDX files to
 * {@code .npy} shards (see {@link IdxToNpy}). The array is limited to
 * {@value #MAX_DATA_BYTES} bytes (the largest Java array).
 *
 * <p>Stateless and thread-safe; every call opens and closes its own stream.
 */
public final class IdxReader {

    /** Largest data section accepted, in bytes: {@code Integer.MAX_VALUE - 8}. */
    public static final int MAX_DATA_BYTES = Integer.MAX_VALUE - 8;

    /**
     * Most dimensions accepted: numpy's {@code NPY_MAXDIMS} before numpy 2.0 (the {@code .npy} an IDX file is
     * converted to must load there too); MNIST-style files have 1 to 4.
     */
    public static final int MAX_DIMENSIONS = 32;

    /** First allocation for the data; grows up to the declared size as data actually arrives. */
    private static final int INITIAL_CHUNK = 1 << 26;

    private IdxReader() {
    }

    /**
     * Reads an IDX file, converting multi-byte elements to little-endian.
     *
     * @param file a plain or gzip-compressed IDX file; opened and closed by this method
     * @return the array; its data array is newly allocated and owned by the returned record
     * @throws FormatException if the magic does not start with two zero bytes, the type code is
     *     unknown, there are 0 or more than {@link #MAX_DIMENSIONS} dimensions, the data size exceeds {@link #MAX_DATA_BYTES}, the
     *     header or data is truncated ("expected N data bytes, found M"), bytes follow the data,
     *     or the gzip stream is corrupt; for gzip files offsets count decompressed bytes
     * @throws IOException if the file cannot be opened or read
     */
    public static IdxArray read(Path file) throws IOException {
        ShardFiles.requireRegularFile(file);
        long fileSize = Files.size(file);
        boolean gzip = isGzip(file);
        try (InputStream raw = Files.newInputStream(file)) {
            InputStream in;
            if (gzip) {
                try {
                    in = new GZIPInputStream(raw, 1 << 16);
                } catch (ZipException | EOFException e) {
                    throw new FormatException(file, 0, "a valid gzip header", e.getMessage(), e);
                }
            } else {
                in = raw;
            }
            return new Parse(file, in, gzip, fileSize).run();
        }
    }

    private static boolean isGzip(Path file) throws IOException {
        try (InputStream in = Files.newInputStream(file)) {
            byte[] b = in.readNBytes(2);
            return b.length == 2 && (b[0] & 0xFF) == 0x1F && (b[1] & 0xFF) == 0x8B;
        }
    }

    /**
     * Maps an IDX type code to its element type.
     *
     * @param typeCode the third magic byte
     * @return the element type, or null if the code is unknown
     */
    static DType dtypeOf(int typeCode) {
        return switch (typeCode) {
            case 0x08 -> DType.UINT8;
            case 0x09 -> DType.INT8;
            case 0x0B -> DType.INT16;
            case 0x0C -> DType.INT32;
            case 0x0D -> DType.FLOAT32;
            case 0x0E -> DType.FLOAT64;
            default -> null;
        };
    }

    /** One read of one stream; not thread-safe. */
    private static final class Parse {
        private final Path file;
        private final InputStream in;
        private final boolean gzip;
        private final long fileSize;
        private long position;
        /** Set when the gzip stream ended before its trailer; reads then report end of data. */
        private EOFException gzipEnd;

        Parse(Path file, InputStream in, boolean gzip, long fileSize) {
            this.file = file;
            this.in = in;
            this.gzip = gzip;
            this.fileSize = fileSize;
        }

        IdxArray run() throws IOException {
            byte[] magic = readHeaderBytes(4, "a 4-byte IDX magic (0x00 0x00 type ndims)");
            if (magic[0] != 0 || magic[1] != 0) {
                throw new FormatException(file, 0, "IDX magic starting with two zero bytes",
                        hex(magic) + (gzip ? " (after gzip decompression)" : ""));
            }
            int typeCode = magic[2] & 0xFF;
            DType dtype = dtypeOf(typeCode);
            if (dtype == null) {
                throw new FormatException(file, 2, "IDX type code 0x08, 0x09, 0x0B, 0x0C, 0x0D"
                        + " or 0x0E", String.format("0x%02X", typeCode));
            }
            int ndims = magic[3] & 0xFF;
            if (ndims == 0 || ndims > MAX_DIMENSIONS) {
                // the fourth magic byte is a count; a byte that is not one (0x99 = 153) would otherwise be
                // reported as 153 missing dimension sizes
                throw new FormatException(file, 3, "a dimension count (the fourth magic byte) of 1 to " + MAX_DIMENSIONS,
                        ndims + String.format(" (0x%02X)", ndims) + (ndims == 0 ? "" : ": is this an IDX file?"));
            }
            ByteBuffer dimBytes = ByteBuffer.wrap(readHeaderBytes(4 * ndims,
                    ndims + " big-endian 4-byte dimension sizes"));
            long[] shape = new long[ndims];
            for (int i = 0; i < ndims; i++) {
                shape[i] = Integer.toUnsignedLong(dimBytes.getInt());
            }
            long dataBytes = Shapes.byteSize(shape, dtype.itemSize(), file, 4);
            if (dataBytes > MAX_DATA_BYTES) {
                throw new FormatException(file, 4, "at most " + MAX_DATA_BYTES + " data bytes",
                        "shape " + Arrays.toString(shape) + " of " + dtype + ", " + dataBytes
                                + " bytes");
            }
            long headerBytes = position;
            if (!gzip && fileSize - headerBytes != dataBytes) {
                long found = fileSize - headerBytes;
                if (found < dataBytes) {
                    throw truncated(fileSize, dataBytes, found);
                }
                throw trailing(headerBytes + dataBytes, Long.toString(found - dataBytes));
            }
            byte[] data = readData((int) dataBytes);
            checkEnd();
            swapToLittleEndian(data, dtype.itemSize());
            return new IdxArray(file, dtype, shape, data);
        }

        private byte[] readHeaderBytes(int n, String what) throws IOException {
            byte[] b = new byte[n];
            int got = readUpTo(b, 0, n);
            if (got < n) {
                throw withCause(new FormatException(file, position, what, "end of "
                        + (gzip ? "decompressed data" : "file") + " after " + position + " bytes"));
            }
            return b;
        }

        /** Reads exactly {@code size} bytes, allocating only as data actually arrives. */
        private byte[] readData(int size) throws IOException {
            long start = position;
            byte[] data = new byte[Math.min(size, INITIAL_CHUNK)];
            int filled = 0;
            while (filled < size) {
                if (filled == data.length) {
                    data = Arrays.copyOf(data, (int) Math.min(size, 2L * data.length));
                }
                int got = readUpTo(data, filled, data.length - filled);
                filled += got;
                if (filled < data.length) {
                    throw truncated(position, size, position - start);
                }
            }
            return data;
        }

        private void checkEnd() throws IOException {
            long end = position;
            byte[] probe = new byte[8192];
            long extra = 0;
            int got;
            while (extra < (1 << 20) && (got = readUpTo(probe, 0, probe.length)) > 0) {
                extra += got;
            }
            if (extra > 0) {
                throw trailing(end, extra >= (1 << 20) ? "at least " + extra : Long.toString(extra));
            }
            if (gzipEnd != null) {
                throw withCause(new FormatException(file, end, "a complete gzip stream ending"
                        + " with its CRC-32 and size trailer", "a truncated stream"));
            }
        }

        /** Reads up to {@code n} bytes, fewer only at end of stream; gzip errors become FormatExceptions. */
        private int readUpTo(byte[] b, int off, int n) throws IOException {
            int total = 0;
            if (gzipEnd != null) {
                return 0;
            }
            try {
                while (total < n) {
                    int r = in.read(b, off + total, n - total);
                    if (r < 0) {
                        break;
                    }
                    total += r;
                    position += r;
                }
            } catch (EOFException e) {
                if (!gzip) {
                    throw e;
                }
                gzipEnd = e; // compressed stream cut short: callers report the missing bytes
            } catch (ZipException e) {
                if (!gzip) {
                    throw e;
                }
                throw new FormatException(file, position, "a valid gzip stream",
                        "'" + e.getMessage() + "' after " + position + " decompressed bytes", e);
            }
            return total;
        }

        private FormatException truncated(long offset, long expected, long found) {
            return withCause(new FormatException(file, offset, expected + " data bytes",
                    found + (gzipEnd != null ? " (the gzip stream is truncated)" : "")));
        }

        private FormatException withCause(FormatException e) {
            if (gzipEnd != null) {
                e.initCause(gzipEnd);
            }
            return e;
        }

        private FormatException trailing(long offset, String count) {
            return new FormatException(file, offset, "end of " + (gzip ? "decompressed data" : "file")
                    + " after the data", count + " trailing bytes");
        }
    }

    private static void swapToLittleEndian(byte[] data, int itemSize) {
        for (int i = 0; i + itemSize <= data.length; i += itemSize) {
            for (int a = i, b = i + itemSize - 1; a < b; a++, b--) {
                byte t = data[a];
                data[a] = data[b];
                data[b] = t;
            }
        }
    }

    private static String hex(byte[] bytes) {
        StringBuilder sb = new StringBuilder();
        for (byte b : bytes) {
            sb.append(sb.isEmpty() ? "" : " ").append(String.format("%02x", b & 0xFF));
        }
        return sb.toString();
    }
}
