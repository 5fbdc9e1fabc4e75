package dev.gdsloader.formats.npy;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

/**
 * The first bytes of a decompressing stream (a deflated {@code .npz} member), read only as far as asked: the
 * {@code .npy} header is parsed from it without inflating the data. Not thread-safe; owned by one reader, which
 * closes the stream.
 */
final class InflatedPrefix implements NpyHeader.Source {
    private final InputStream in;
    private final long size;
    private byte[] bytes = new byte[0];

    /**
     * @param in the decompressing stream, positioned at the member's first byte
     * @param size the member's uncompressed size from the central directory, bytes
     */
    InflatedPrefix(InputStream in, long size) {
        this.in = in;
        this.size = size;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public byte[] readAtMost(long position, int n) throws IOException {
        long end = Math.min(size, position + n);
        if (end > bytes.length) {
            byte[] more = in.readNBytes((int) (end - bytes.length));
            int old = bytes.length;
            bytes = Arrays.copyOf(bytes, old + more.length);
            System.arraycopy(more, 0, bytes, old, more.length);
        }
        return position >= bytes.length ? new byte[0] : Arrays.copyOfRange(bytes, (int) position, (int) Math.min(end, bytes.length));
    }

    /** @return bytes consumed from the stream so far */
    long consumed() {
        return bytes.length;
    }
}
