package dev.gdsloader.formats.idx;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.zip.GZIPOutputStream;

/** Builds IDX files byte by byte, independently of the code under test. */
final class IdxBytes {

    private IdxBytes() {
    }

    /** Magic {@code 00 00 type ndims}, big-endian dims, then {@code bigEndianData} as given. */
    static byte[] idx(int typeCode, int[] dims, byte[] bigEndianData) {
        ByteBuffer b = ByteBuffer.allocate(4 + 4 * dims.length + bigEndianData.length);
        b.put((byte) 0).put((byte) 0).put((byte) typeCode).put((byte) dims.length);
        for (int d : dims) {
            b.putInt(d);
        }
        return b.put(bigEndianData).array();
    }

    static byte[] gzip(byte[] bytes) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
            gz.write(bytes);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return out.toByteArray();
    }
}
