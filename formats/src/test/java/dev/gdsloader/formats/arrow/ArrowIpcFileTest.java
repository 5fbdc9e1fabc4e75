package dev.gdsloader.formats.arrow;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.RecordLayout;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.ipc.ArrowStreamWriter;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Arrow IPC files written by Arrow Java: record extents found from metadata alone, checked against the values. */
class ArrowIpcFileTest {
    @TempDir
    Path dir;

    private static final Schema SCHEMA = new Schema(List.of(
            new Field("image", FieldType.notNullable(new ArrowType.FixedSizeList(6)),
                    List.of(new Field("pixel", FieldType.notNullable(new ArrowType.Int(8, false)), null))),
            new Field("label", FieldType.notNullable(new ArrowType.Int(8, false)), null),
            new Field("weight", FieldType.notNullable(new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)), null),
            new Field("name", FieldType.nullable(new ArrowType.Utf8()), null)));

    static byte pixel(long row, int k) {
        return (byte) (row * 6 + k);
    }

    /** Writes batches of the given sizes; {@code nullAt} &ge; 0 puts a null label at that global row. */
    static Path write(Path file, boolean stream, long nullAt, int... batchRows) throws IOException {
        try (BufferAllocator alloc = new RootAllocator();
             VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, alloc);
             FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            var writer = stream ? new ArrowStreamWriter(root, null, ch) : new ArrowFileWriter(root, null, ch);
            writer.start();
            long row = 0;
            for (int n : batchRows) {
                FixedSizeListVector image = (FixedSizeListVector) root.getVector("image");
                UInt1Vector pixels = (UInt1Vector) image.getDataVector();
                UInt1Vector label = (UInt1Vector) root.getVector("label");
                Float4Vector weight = (Float4Vector) root.getVector("weight");
                VarCharVector name = (VarCharVector) root.getVector("name");
                root.allocateNew();
                for (int i = 0; i < n; i++, row++) {
                    image.setNotNull(i);
                    for (int k = 0; k < 6; k++) {
                        pixels.setSafe(i * 6 + k, pixel(row, k));
                    }
                    if (row == nullAt) {
                        label.setNull(i);
                    } else {
                        label.setSafe(i, (byte) row);
                    }
                    weight.setSafe(i, row * 0.5f);
                    name.setSafe(i, ("r" + row).getBytes(UTF_8));
                }
                root.setRowCount(n);
                writer.writeBatch();
            }
            writer.end();
            writer.close();
        }
        return file;
    }

    private static byte[] bytes(RecordLayout l) throws IOException {
        byte[] all = Files.readAllBytes(l.file());
        return Arrays.copyOfRange(all, (int) l.dataOffset(), (int) (l.dataOffset() + l.recordCount() * l.recordBytes()));
    }

    @Test
    void everyFixedWidthColumnOfEveryBatchIsFoundFromMetadataAlone() throws IOException {
        Path f = write(dir.resolve("t.arrow"), false, -1, 5, 0, 17, 3);
        ArrowIpcFile a = ArrowIpcFile.open(f);
        assertEquals(List.of("image", "label", "weight", "name"), a.columns());
        assertEquals(4, a.batchCount());
        long row = 0;
        for (int b = 0; b < a.batchCount(); b++) {
            RecordLayout img = a.records("image", b);
            assertEquals(DType.UINT8, img.dtype());
            assertArrayEquals(new long[] {6}, img.recordShape());
            assertEquals(a.rows(b), img.recordCount());
            byte[] got = bytes(img);
            for (int i = 0; i < img.recordCount(); i++) {
                for (int k = 0; k < 6; k++) {
                    assertEquals(pixel(row + i, k), got[i * 6 + k], "batch " + b + " row " + i);
                }
            }
            byte[] labels = bytes(a.records("label", b));
            for (int i = 0; i < labels.length; i++) {
                assertEquals((byte) (row + i), labels[i]);
            }
            RecordLayout w = a.records("weight", b);
            assertEquals(DType.FLOAT32, w.dtype());
            var fb = java.nio.ByteBuffer.wrap(bytes(w)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
            for (int i = 0; i < w.recordCount(); i++) {
                assertEquals((row + i) * 0.5f, fb.getFloat());
            }
            row += a.rows(b);
        }
    }

    @Test
    void variableLengthNullsStreamsAndGarbageAreRefusedByName() throws IOException {
        ArrowIpcFile a = ArrowIpcFile.open(write(dir.resolve("n.arrow"), false, 3, 5, 4));
        FormatException utf8 = assertThrows(FormatException.class, () -> a.records("name", 0));
        assertTrue(utf8.getMessage().contains("'name'") && utf8.getMessage().contains("not a fixed-width"), utf8.getMessage());
        FormatException nulls = assertThrows(FormatException.class, () -> a.records("label", 0));
        assertTrue(nulls.getMessage().contains("1 nulls") && nulls.getMessage().contains("batch 0"), nulls.getMessage());
        a.records("label", 1); // the second batch has no null
        assertThrows(IllegalArgumentException.class, () -> a.records("nope", 0));


        Path junk = Files.write(dir.resolve("j.arrow"), "not arrow at all".getBytes(UTF_8));
        assertTrue(assertThrows(FormatException.class, () -> ArrowIpcFile.open(junk)).getMessage().contains("ARROW1"));
    }

    private Path truncated(Path good, String name, long length) throws IOException {
        return Files.write(dir.resolve(name), Arrays.copyOf(Files.readAllBytes(good), (int) length));
    }

    @Test
    void anArrowFileCutBelowTheSmallestFileIsTooShortNotABadMagic() throws IOException {
        Path good = write(dir.resolve("g.arrow"), false, -1, 2);
        for (int n : new int[] {3, 8, 12, ArrowIpcFile.MIN_FILE_BYTES - 1}) {
            Path bad = truncated(good, "cut" + n + ".arrow", n);
            FormatException e = assertThrows(FormatException.class, () -> ArrowIpcFile.open(bad));
            assertEquals(bad + ": at byte offset 0: the file of " + n + " bytes is too short for an Arrow IPC file: it "
                    + "needs at least 22 (magic 6 + padding 2 + footer + footer length 4 + magic 6)", e.getMessage());
            assertEquals(0, e.offset());
        }
    }

    @Test
    void anArrowStreamCutToAFewBytesSaysWhatAStreamNeeds() throws IOException {
        Path good = write(dir.resolve("g.arrows"), true, -1, 2);
        for (int n : new int[] {1, 3, 4, 7}) {
            Path bad = truncated(good, "cut" + n + ".arrows", n);
            FormatException e = assertThrows(FormatException.class, () -> ArrowIpcFile.open(bad));
            assertEquals(bad + ": at byte offset 0: the file of " + (n == 1 ? "1 byte" : n + " bytes") + " is too short for "
                    + "an Arrow IPC stream: an Arrow IPC stream needs a continuation marker 0xFFFFFFFF and a 4-byte metadata "
                    + "length at offset 0", e.getMessage());
        }
        Path empty = Files.write(dir.resolve("empty.arrows"), new byte[0]);
        assertEquals(empty + ": at byte offset 0: the file of 0 bytes is too short for an Arrow IPC stream: an Arrow IPC "
                + "stream needs a continuation marker 0xFFFFFFFF and a 4-byte metadata length at offset 0 (an Arrow IPC "
                + "file needs at least 22 bytes, starting with the magic 'ARROW1')",
                assertThrows(FormatException.class, () -> ArrowIpcFile.open(empty)).getMessage());
    }

    @Test
    void aStreamCutInsideItsEndMarkerOrWithoutAnyEndMarkerIsRefused() throws IOException {
        Path good = write(dir.resolve("g.arrows"), true, -1, 2, 3);
        long size = Files.size(good);
        for (int cut = 1; cut <= 7; cut++) {
            Path bad = truncated(good, "cut" + cut + ".arrows", size - cut);
            FormatException e = assertThrows(FormatException.class, () -> ArrowIpcFile.open(bad), "cut " + cut);
            assertEquals(bad + ": at byte offset " + (size - 8) + ": expected a message header or the end-of-stream marker "
                    + "(8 bytes: continuation marker 0xFFFFFFFF and a 4-byte metadata length), found "
                    + (8 - cut == 1 ? "1 byte" : (8 - cut) + " bytes") + " left at the end of the file", e.getMessage());
            assertEquals(size - 8, e.offset());
        }
        // no end-of-stream marker at all, the file ending right after the last whole message. Arrow Java's
        // ArrowStreamReader reads both batches and ends there quietly; we refuse it: a stream cut at a message boundary
        // looks just like this, and would lose its last batches silently. Writers always write the marker on close.
        Path noEos = truncated(good, "noeos.arrows", size - 8);
        try (BufferAllocator alloc = new RootAllocator();
             ArrowStreamReader r = new ArrowStreamReader(FileChannel.open(noEos), alloc)) {
            assertTrue(r.loadNextBatch());
            assertTrue(r.loadNextBatch());
            assertEquals(false, r.loadNextBatch());
        }
        FormatException e = assertThrows(FormatException.class, () -> ArrowIpcFile.open(noEos));
        assertEquals(noEos + ": at byte offset " + (size - 8) + ": expected the end-of-stream marker (continuation "
                + "0xFFFFFFFF and a 0x00000000 length), found the end of the file after 2 record batches (truncated? the "
                + "writer did not finish)", e.getMessage());
        assertEquals(size - 8, e.offset());
    }

    @Test
    void theStreamFormatIsReadByScanningItsMessagesIncludingAnEmptyBatch() throws IOException {
        // the same table as IPC stream and as IPC file: a 0-row batch, then 3 rows
        ArrowIpcFile stream = ArrowIpcFile.open(write(dir.resolve("s.arrows"), true, -1, 0, 3));
        ArrowIpcFile file = ArrowIpcFile.open(write(dir.resolve("f.arrow"), false, -1, 0, 3));
        assertEquals(2, stream.batchCount());
        assertEquals(0, stream.rows(0));
        assertEquals(0, stream.records("image", 0).recordCount());
        for (ArrowIpcFile a : List.of(stream, file)) {
            RecordLayout img = a.records("image", 1);
            assertEquals(3, img.recordCount());
            byte[] got = bytes(img);
            for (int i = 0; i < 3; i++) {
                for (int k = 0; k < 6; k++) {
                    assertEquals(pixel(i, k), got[i * 6 + k]);
                }
            }
            assertArrayEquals(new byte[] {0, 1, 2}, bytes(a.records("label", 1)));
        }
        byte[] good = Files.readAllBytes(dir.resolve("s.arrows"));
        Path bad = dir.resolve("bad.arrows");
        for (int n = 4; n < good.length; n += 7) {
            Files.write(bad, Arrays.copyOf(good, n));
            try {
                ArrowIpcFile.open(bad);
            } catch (FormatException expected) {
                // a truncated stream: refused with a message, or read up to its last whole message
            }
        }
    }

    @Test
    void everyTruncationAndRandomFlipsInTheMetadataGiveOnlyFormatExceptions() throws IOException {
        Path f = write(dir.resolve("t.arrow"), false, -1, 4, 2);
        byte[] good = Files.readAllBytes(f);
        Path bad = dir.resolve("bad.arrow");
        for (int n = 0; n < good.length; n++) {
            Files.write(bad, Arrays.copyOf(good, n));
            assertThrows(FormatException.class, () -> ArrowIpcFile.open(bad), "truncated at " + n);
        }
        java.util.SplittableRandom rnd = new java.util.SplittableRandom(9);
        for (int i = 0; i < 500; i++) {
            byte[] b = good.clone();
            int at = rnd.nextInt(b.length);
            b[at] ^= (byte) (1 + rnd.nextInt(255));
            Files.write(bad, b);
            try {
                ArrowIpcFile a = ArrowIpcFile.open(bad);
                for (int k = 0; k < a.batchCount(); k++) {
                    for (String c : List.of("image", "label", "weight")) {
                        try {
                            a.records(c, k);
                        } catch (FormatException | IllegalArgumentException expected) {
                            // refused with a message
                        }
                    }
                }
            } catch (FormatException expected) {
                // refused with a message
            }
        }
    }
}
