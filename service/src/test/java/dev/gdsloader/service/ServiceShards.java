package dev.gdsloader.service;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.CRC32;

/**
 * Real {@code .npy} shards for service tests, written with the formats module's writer: column {@code x}
 * (uint8 [n, 20]) and column {@code y} (int32 [n]), each record's bytes a function of its global index.
 */
public final class ServiceShards {
    public static final int X_BYTES = 20;

    private ServiceShards() {
    }

    public static byte xByte(long i, int j) {
        long h = (i + 1) * 0x9E3779B97F4A7C15L + j * 0xC2B2AE3D27D4EB4FL;
        return (byte) (h ^ (h >>> 29) ^ (h >>> 41));
    }

    /** @return the bytes of record {@code i} of column {@code column} */
    public static byte[] record(String column, long i) {
        if (column.equals("y")) {
            return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt((int) (i * 3 + 1)).array();
        }
        byte[] b = new byte[X_BYTES];
        for (int j = 0; j < X_BYTES; j++) {
            b[j] = xByte(i, j);
        }
        return b;
    }

    /** @return the expected bytes of a column for records {@code indices}, in order */
    public static byte[] expected(String column, long[] indices) {
        int w = column.equals("y") ? 4 : X_BYTES;
        ByteBuffer out = ByteBuffer.allocate(indices.length * w);
        for (long i : indices) {
            out.put(record(column, i));
        }
        return out.array();
    }

    public static long crc(byte[] b) {
        CRC32 c = new CRC32();
        c.update(b);
        return c.getValue();
    }

    /** Writes the dataset into {@code dir} (created), shards of the given record counts; @return total records */
    public static long write(Path dir, int... shards) throws IOException {
        return writeFrom(dir, 0, shards);
    }

    /**
     * Like {@link #write}, its records being those of global indices {@code firstRecord, firstRecord + 1, ...} (one
     * cluster part of a larger dataset); @return the records written
     */
    public static long writeFrom(Path dir, long firstRecord, int... shards) throws IOException {
        Files.createDirectories(dir);
        long first = firstRecord;
        for (int s = 0; s < shards.length; s++) {
            int n = shards[s];
            ByteBuffer x = ByteBuffer.allocate(n * X_BYTES);
            ByteBuffer y = ByteBuffer.allocate(n * 4).order(ByteOrder.LITTLE_ENDIAN);
            for (int r = 0; r < n; r++) {
                x.put(record("x", first + r));
                y.put(record("y", first + r));
            }
            NpyWriter.write(dir.resolve(String.format("x-%05d.npy", s)), DType.UINT8, new long[] {n, X_BYTES}, x.array());
            NpyWriter.write(dir.resolve(String.format("y-%05d.npy", s)), DType.INT32, new long[] {n}, y.array());
            first += n;
        }
        return first - firstRecord;
    }
}
