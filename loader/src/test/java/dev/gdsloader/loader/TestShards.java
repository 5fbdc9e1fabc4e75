package dev.gdsloader.loader;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyShard;
import dev.gdsloader.formats.npy.NpyWriter;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Writes real {@code .npy} shard files for loader tests. Every record's bytes are a function of its global
 * index, so a record landing in the wrong place is visible.
 */
public final class TestShards {
    /** Bytes of one 28 x 28 uint8 image record: not a multiple of 4 KiB. */
    public static final int IMAGE_BYTES = 28 * 28;
    /** Bytes of one float32 [3] record. */
    public static final int WEIGHT_BYTES = 12;

    private TestShards() {
    }

    /** @return byte {@code j} of image record {@code i}: the first 4 bytes are {@code i} little-endian */
    public static byte imageByte(long i, int j) {
        if (j < 4) {
            return (byte) (i >>> (8 * j));
        }
        long h = (i + 1) * 0x9E3779B97F4A7C15L + j * 0xC2B2AE3D27D4EB4FL;
        return (byte) (h ^ (h >>> 29) ^ (h >>> 41));
    }

    /** @return the label of record {@code i} */
    public static byte label(long i) {
        return (byte) (i * 7 + 3);
    }

    /** @return element {@code k} of the float32 [3] record {@code i} */
    public static float weight(long i, int k) {
        return i + 0.25f * k;
    }

    /** @return the expected bytes of image records [first, first + count) */
    public static byte[] images(long first, int count) {
        byte[] b = new byte[count * IMAGE_BYTES];
        for (int r = 0; r < count; r++) {
            for (int j = 0; j < IMAGE_BYTES; j++) {
                b[r * IMAGE_BYTES + j] = imageByte(first + r, j);
            }
        }
        return b;
    }

    /** @return the expected bytes of label records [first, first + count) */
    public static byte[] labels(long first, int count) {
        byte[] b = new byte[count];
        for (int r = 0; r < count; r++) {
            b[r] = label(first + r);
        }
        return b;
    }

    /** @return the expected little-endian bytes of weight records [first, first + count) */
    public static byte[] weights(long first, int count) {
        ByteBuffer b = ByteBuffer.allocate(count * WEIGHT_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        for (int r = 0; r < count; r++) {
            for (int k = 0; k < 3; k++) {
                b.putFloat(weight(first + r, k));
            }
        }
        return b.array();
    }

    /**
     * Writes column {@code images} (uint8 [n, 28, 28]) split into shards of the given record counts.
     *
     * @return the shard files, in order
     */
    public static List<Path> writeImages(Path dir, int... shardRecords) throws IOException {
        List<Path> files = new ArrayList<>();
        long first = 0;
        for (int s = 0; s < shardRecords.length; s++) {
            Path f = dir.resolve(String.format("images-%05d.npy", s));
            NpyWriter.write(f, DType.UINT8, new long[] {shardRecords[s], 28, 28}, images(first, shardRecords[s]));
            first += shardRecords[s];
            files.add(f);
        }
        return files;
    }

    /** Writes column {@code labels} (uint8 [n]) split into shards of the given record counts. */
    public static List<Path> writeLabels(Path dir, int... shardRecords) throws IOException {
        List<Path> files = new ArrayList<>();
        long first = 0;
        for (int s = 0; s < shardRecords.length; s++) {
            Path f = dir.resolve(String.format("labels-%05d.npy", s));
            NpyWriter.write(f, DType.UINT8, new long[] {shardRecords[s]}, labels(first, shardRecords[s]));
            first += shardRecords[s];
            files.add(f);
        }
        return files;
    }

    /** Writes column {@code weights} (float32 [n, 3]) split into shards of the given record counts. */
    public static List<Path> writeWeights(Path dir, int... shardRecords) throws IOException {
        List<Path> files = new ArrayList<>();
        long first = 0;
        for (int s = 0; s < shardRecords.length; s++) {
            Path f = dir.resolve(String.format("weights-%05d.npy", s));
            NpyWriter.write(f, DType.FLOAT32, new long[] {shardRecords[s], 3}, weights(first, shardRecords[s]));
            first += shardRecords[s];
            files.add(f);
        }
        return files;
    }

    /**
     * Writes a mixed dataset of NumPy {@code .npz} archives {@code mixed-NNNNN.npz} (as {@code np.savez} and
     * {@code np.savez_compressed} write them: a ZIP of {@code .npy} members from {@link NpyWriter}), each holding
     * columns {@code images} and {@code labels} as {@link #writeImages} and {@link #writeLabels} write them. Member
     * {@code images.npy} is deflated (host-decoded) in even shards and stored (mappable) in odd ones; member
     * {@code labels.npy} is deflated where {@code s % 3 == 0}. So with 4 shards: archive 0 holds no mappable member,
     * archive 1 no host-decoded one, archives 2 and 3 one of each.
     *
     * @param dir the directory to write to
     * @param shardRecords records per archive
     * @return the archives, in order
     * @throws IOException if a file cannot be written
     */
    public static List<Path> writeMixedNpz(Path dir, int... shardRecords) throws IOException {
        List<Path> files = new ArrayList<>();
        long first = 0;
        Path npy = Files.createTempFile(dir, "member", ".npy");
        try {
            for (int s = 0; s < shardRecords.length; s++) {
                int n = shardRecords[s];
                Path f = dir.resolve(String.format("mixed-%05d.npz", s));
                try (java.util.zip.ZipOutputStream z = new java.util.zip.ZipOutputStream(Files.newOutputStream(f))) {
                    NpyWriter.write(npy, DType.UINT8, new long[] {n, 28, 28}, images(first, n));
                    zipMember(z, "images.npy", Files.readAllBytes(npy), s % 2 == 0);
                    NpyWriter.write(npy, DType.UINT8, new long[] {n}, labels(first, n));
                    zipMember(z, "labels.npy", Files.readAllBytes(npy), s % 3 == 0);
                }
                first += n;
                files.add(f);
            }
        } finally {
            Files.delete(npy);
        }
        return files;
    }

    /**
     * Writes one archive member, deflated or stored (with its size and CRC, as a stored ZIP entry needs).
     *
     * @param z the archive
     * @param name the member's name, e.g. {@code images.npy}
     * @param bytes its content
     * @param deflate true to deflate it, false to store it
     * @throws IOException if it cannot be written
     */
    public static void zipMember(java.util.zip.ZipOutputStream z, String name, byte[] bytes, boolean deflate)
            throws IOException {
        java.util.zip.ZipEntry e = new java.util.zip.ZipEntry(name);
        if (!deflate) {
            java.util.zip.CRC32 crc = new java.util.zip.CRC32();
            crc.update(bytes);
            e.setMethod(java.util.zip.ZipEntry.STORED);
            e.setSize(bytes.length);
            e.setCompressedSize(bytes.length);
            e.setCrc(crc.getValue());
        }
        z.putNextEntry(e);
        z.write(bytes);
        z.closeEntry();
    }

    /**
     * Reads the data bytes of records [first, first + count) of a column straight from its shard files
     * (plain Java I/O, independent of the loader).
     */
    public static byte[] fromFiles(List<Path> shards, long first, int count) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long base = 0;
        for (Path f : shards) {
            NpyShard s = NpyShard.open(f);
            long lo = Math.max(first, base);
            long hi = Math.min(first + count, base + s.recordCount());
            if (lo < hi) {
                byte[] all = Files.readAllBytes(f);
                int from = (int) (s.dataOffset() + (lo - base) * s.recordBytes());
                int to = (int) (s.dataOffset() + (hi - base) * s.recordBytes());
                out.write(Arrays.copyOfRange(all, from, to));
            }
            base += s.recordCount();
        }
        return out.toByteArray();
    }
}
