package dev.gdsloader.formats.idx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.RecordExtent;
import dev.gdsloader.formats.npy.NpyShard;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IdxToNpyTest {

    @TempDir
    Path dir;

    /** Reads all records of the shards, in order, from the bytes at their extents. */
    static byte[] concatenatedRecords(List<Path> shards) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Path p : shards) {
            NpyShard s = NpyShard.open(p);
            RecordExtent x = s.extent(0, s.recordCount());
            ByteBuffer buf = ByteBuffer.allocate((int) x.length());
            try (FileChannel ch = FileChannel.open(p, StandardOpenOption.READ)) {
                while (buf.hasRemaining()) {
                    if (ch.read(buf, x.offset() + buf.position()) < 0) {
                        throw new IOException("short read");
                    }
                }
            }
            out.writeBytes(buf.array());
        }
        return out.toByteArray();
    }

    @Test
    void splitsAxisZeroIntoShards() throws IOException {
        byte[] data = new byte[7 * 2 * 3];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i + 1);
        }
        Path idx = Files.write(dir.resolve("t10k-images-idx3-ubyte.gz"),
                IdxBytes.gzip(IdxBytes.idx(0x08, new int[] {7, 2, 3}, data)));
        Path out = dir.resolve("out");
        List<Path> shards = IdxToNpy.convert(idx, out, 3);
        assertEquals(List.of(out.resolve("test/images-00000.npy"), out.resolve("test/images-00001.npy"),
                out.resolve("test/images-00002.npy")), shards);
        long[] counts = {3, 3, 1};
        for (int i = 0; i < 3; i++) {
            NpyShard s = NpyShard.open(shards.get(i));
            assertEquals(DType.UINT8, s.dtype());
            assertEquals(counts[i], s.recordCount());
            assertArrayEquals(new long[] {2, 3}, s.recordShape());
        }
        assertArrayEquals(data, concatenatedRecords(shards));
    }

    @Test
    void multiByteTypesAreWrittenLittleEndian() throws IOException {
        ByteBuffer be = ByteBuffer.allocate(12).putInt(1).putInt(-1).putInt(0x0A0B0C0D);
        Path idx = Files.write(dir.resolve("vals"), IdxBytes.idx(0x0C, new int[] {3}, be.array()));
        Path out = dir.resolve("out");
        List<Path> shards = IdxToNpy.convert(idx, out, 10);
        assertEquals(List.of(out.resolve("vals/data-00000.npy")), shards);
        NpyShard s = NpyShard.open(shards.get(0));
        assertEquals(DType.INT32, s.dtype());
        assertArrayEquals(new long[0], s.recordShape());
        ByteBuffer le = ByteBuffer.wrap(concatenatedRecords(shards)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(1, le.getInt());
        assertEquals(-1, le.getInt());
        assertEquals(0x0A0B0C0D, le.getInt());
    }

    @Test
    void exactMultipleAndEmptyInputs() throws IOException {
        Path idx = Files.write(dir.resolve("train-labels-idx1-ubyte"),
                IdxBytes.idx(0x08, new int[] {4}, new byte[] {1, 2, 3, 4}));
        assertEquals(2, IdxToNpy.convert(idx, dir, 2).size());
        Path empty = Files.write(dir.resolve("val-labels-idx1-ubyte"),
                IdxBytes.idx(0x08, new int[] {0}, new byte[0]));
        List<Path> shards = IdxToNpy.convert(empty, dir, 5);
        assertEquals(List.of(dir.resolve("val/labels-00000.npy")), shards);
        assertEquals(0, NpyShard.open(shards.get(0)).recordCount());
        assertThrows(IllegalArgumentException.class, () -> IdxToNpy.convert(idx, dir, 0));
    }
}
