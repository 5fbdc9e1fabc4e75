package dev.gdsloader.formats.arrow;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.fixtures.RealWriterFixtures;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float2Vector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.UInt2Vector;
import org.apache.arrow.vector.UInt4Vector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.dictionary.Dictionary;
import org.apache.arrow.vector.dictionary.DictionaryProvider;
import org.apache.arrow.vector.ipc.ArrowFileReader;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.DictionaryEncoding;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link ArrowIpcFile#batchLayout(int)} against Arrow Java's own reader: the bytes at every reported buffer extent
 * (decoded on the host for LZ4/ZSTD bodies) are what {@link ArrowFileReader}/{@link ArrowStreamReader} vectors hold:
 * validity bits, offsets and values.
 */
class ArrowBatchLayoutTest {
    @TempDir
    Path tmp;

    @TestFactory
    Stream<DynamicTest> everyPyarrowFixtureMatchesArrowJava() {
        return RealWriterFixtures.files().stream()
                .filter(f -> f.getFileName().toString().startsWith("arrow-"))
                .filter(f -> !f.getFileName().toString().endsWith(".json"))
                .map(f -> DynamicTest.dynamicTest(f.getFileName().toString(), () -> matchesArrowJava(f)));
    }

    @Test
    void everyPrimitiveBoolFixedSizeBinaryAndVariableWidthTypeMatchesArrowJava() throws IOException {
        Path f = tmp.resolve("all.arrow");
        writeAllTypes(f, new int[] {11, 0, 3});
        matchesArrowJava(f);
        ArrowBatchLayout l = ArrowIpcFile.open(f).batchLayout(0);
        assertEquals(11, l.rows());
        assertEquals(4, column(l, "i32").nullCount()); // rows 1, 4, 7, 10
        assertEquals(List.of(ArrowBatchLayout.Role.VALIDITY, ArrowBatchLayout.Role.OFFSETS, ArrowBatchLayout.Role.VALUES),
                column(l, "lutf8").buffers().stream().map(ArrowBatchLayout.Buffer::role).toList());
        assertEquals(0, ArrowIpcFile.open(f).batchLayout(1).rows());
    }

    @Test
    void fixedSizeListGivesItsChildsBuffers() throws IOException {
        Path f = RealWriterFixtures.directory().resolve("arrow-fixed-file.arrow");
        ArrowBatchLayout l = ArrowIpcFile.open(f).batchLayout(1);
        ArrowBatchLayout.Column image = column(l, "image");
        assertEquals(new ArrowType.Int(8, false), image.childType());
        assertEquals(2 * 16, image.childLength());
        assertEquals(32, image.neededBytes(ArrowBatchLayout.Role.CHILD_VALUES));
        byte[] values = stored(f, l, buffer(image, ArrowBatchLayout.Role.CHILD_VALUES));
        assertEquals(28, values[0]);
        assertEquals(50, values[31]);
    }

    @Test
    void dictionaryColumnIsRefusedByNameAndTheOthersStillLayOut() throws IOException {
        Path f = tmp.resolve("dict.arrow");
        try (BufferAllocator a = new RootAllocator(); VarCharVector dv = new VarCharVector("dict", a)) {
            dv.allocateNew();
            dv.setSafe(0, "a".getBytes(StandardCharsets.UTF_8));
            dv.setValueCount(1);
            DictionaryEncoding enc = new DictionaryEncoding(1L, false, new ArrowType.Int(32, true));
            DictionaryProvider.MapDictionaryProvider prov = new DictionaryProvider.MapDictionaryProvider(new Dictionary(dv, enc));
            Schema s = new Schema(List.of(Field.nullable("x", new ArrowType.Int(32, true)),
                    new Field("cat", new FieldType(true, new ArrowType.Int(32, true), enc), null)));
            try (VectorSchemaRoot root = VectorSchemaRoot.create(s, a);
                 FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
                 ArrowFileWriter w = new ArrowFileWriter(root, prov, ch)) {
                ((IntVector) root.getVector("x")).setSafe(0, 7);
                ((IntVector) root.getVector("cat")).setSafe(0, 0);
                root.setRowCount(1);
                w.start();
                w.writeBatch();
                w.end();
            }
        }
        ArrowIpcFile file = ArrowIpcFile.open(f);
        FormatException e = assertThrows(FormatException.class, () -> file.batchLayout(0));
        assertEquals("column 'cat' of record batch 0: dictionary-encoded columns have no buffer layout",
                e.detail());
        assertEquals(1, column(file.batchLayout(0, List.of("x")), "x").length());
        assertThrows(IllegalArgumentException.class, () -> file.batchLayout(0, List.of("nope")));
    }

    @Test
    void nestedTypesBeyondFixedSizeListOfPrimitiveAreRefusedByName() throws IOException {
        Path f = tmp.resolve("list.arrow");
        Schema s = new Schema(List.of(
                new Field("l", FieldType.nullable(new ArrowType.List()),
                        List.of(Field.nullable("item", new ArrowType.Int(32, true)))),
                new Field("fl", FieldType.nullable(new ArrowType.FixedSizeList(2)),
                        List.of(Field.nullable("item", new ArrowType.Utf8())))));
        try (BufferAllocator a = new RootAllocator(); VectorSchemaRoot root = VectorSchemaRoot.create(s, a);
             FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             ArrowFileWriter w = new ArrowFileWriter(root, null, ch)) {
            root.setRowCount(0);
            w.start();
            w.writeBatch();
            w.end();
        }
        ArrowIpcFile file = ArrowIpcFile.open(f);
        FormatException e = assertThrows(FormatException.class, () -> file.batchLayout(0, List.of("l")));
        assertTrue(e.detail().startsWith("column 'l' of record batch 0: type List has no buffer layout"),
                e.detail());
        e = assertThrows(FormatException.class, () -> file.batchLayout(0, List.of("fl")));
        assertTrue(e.detail().startsWith("column 'fl' of record batch 0: type FixedSizeList(2) has no buffer layout"), e.detail());
    }

    /** Compares every buffer of every batch with Arrow Java's vectors. */
    static void matchesArrowJava(Path f) throws IOException {
        ArrowIpcFile file = ArrowIpcFile.open(f);
        try (BufferAllocator alloc = new RootAllocator();
             FileChannel ch = FileChannel.open(f, StandardOpenOption.READ);
             ArrowReader reader = isStream(f) ? new ArrowStreamReader(ch, alloc, CommonsCompressionFactory.INSTANCE)
                     : new ArrowFileReader(ch, alloc, CommonsCompressionFactory.INSTANCE)) {
            int batch = 0;
            while (reader.loadNextBatch()) {
                ArrowBatchLayout l = file.batchLayout(batch);
                VectorSchemaRoot root = reader.getVectorSchemaRoot();
                assertEquals(root.getRowCount(), l.rows(), f + " batch " + batch);
                for (ArrowBatchLayout.Column c : l.columns()) {
                    String where = f.getFileName() + " batch " + batch + " column " + c.name();
                    FieldVector v = root.getVector(c.name());
                    assertEquals(v.getValueCount(), c.length(), where);
                    assertEquals(v.getNullCount(), c.nullCount(), where);
                    List<byte[]> bytes = new ArrayList<>();
                    for (ArrowBatchLayout.Buffer b : c.buffers()) {
                        bytes.add(decode(l, c, b, stored(f, l, b)));
                    }
                    if (v instanceof FixedSizeListVector list) {
                        checkValidity(where, v, c.length(), bytes.get(0));
                        FieldVector child = list.getDataVector();
                        assertEquals(child.getNullCount(), c.childNullCount(), where);
                        checkValidity(where + " child", child, c.childLength(), bytes.get(1));
                        checkValues(where + " child", child, c.childLength(), bytes.get(2));
                    } else {
                        checkValidity(where, v, c.length(), bytes.get(0));
                        if (bytes.size() == 3) {
                            int w = ArrowBatchLayout.Column.offsetWidth(c.type());
                            long n = c.length() == 0 ? 0 : (c.length() + 1) * w;
                            assertArrayEquals(prefix(v.getOffsetBuffer(), n), java.util.Arrays.copyOf(bytes.get(1), (int) n),
                                    where + " offsets");
                            long last = c.length() == 0 ? 0 : w == 4
                                    ? ByteBuffer.wrap(bytes.get(1)).order(ByteOrder.LITTLE_ENDIAN).getInt((int) c.length() * 4)
                                    : ByteBuffer.wrap(bytes.get(1)).order(ByteOrder.LITTLE_ENDIAN).getLong((int) c.length() * 8);
                            assertArrayEquals(prefix(v.getDataBuffer(), last), java.util.Arrays.copyOf(bytes.get(2), (int) last),
                                    where + " values");
                        } else {
                            checkValues(where, v, c.length(), bytes.get(1));
                        }
                    }
                }
                batch++;
            }
            assertEquals(file.batchCount(), batch, f.toString());
        }
    }

    private static boolean isStream(Path f) throws IOException {
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            ByteBuffer b = ByteBuffer.allocate(4);
            ch.read(b, 0);
            return b.getInt(0) == -1;
        }
    }

    private static void checkValidity(String where, ValueVector v, long length, byte[] bitmap) {
        if (bitmap.length == 0) {
            assertEquals(0, v.getNullCount(), where + ": no bitmap, yet nulls");
            return;
        }
        assertTrue(bitmap.length >= (length + 7) / 8, where + ": bitmap of " + bitmap.length + " bytes");
        for (int i = 0; i < length; i++) {
            boolean valid = (bitmap[i >>> 3] >>> (i & 7) & 1) == 1;
            assertEquals(!v.isNull(i), valid, where + " validity bit " + i);
        }
    }

    private static void checkValues(String where, FieldVector v, long length, byte[] values) {
        if (v instanceof BitVector bits) {
            for (int i = 0; i < length; i++) {
                if (!bits.isNull(i)) {
                    assertEquals(bits.get(i), values[i >>> 3] >>> (i & 7) & 1, where + " bit " + i);
                }
            }
            return;
        }
        long n = length * ((BaseFixedWidthVector) v).getTypeWidth();
        byte[] expect = prefix(v.getDataBuffer(), n);
        byte[] got = java.util.Arrays.copyOf(values, (int) n);
        int width = ((BaseFixedWidthVector) v).getTypeWidth();
        for (int i = 0; i < length; i++) { // slots of nulls hold whatever the writer left there
            if (!v.isNull(i)) {
                assertArrayEquals(java.util.Arrays.copyOfRange(expect, i * width, (i + 1) * width),
                        java.util.Arrays.copyOfRange(got, i * width, (i + 1) * width), where + " value " + i);
            }
        }
    }

    private static byte[] prefix(ArrowBuf b, long n) {
        byte[] out = new byte[(int) n];
        if (n > 0) {
            b.getBytes(0, out);
        }
        return out;
    }

    /** @return the layout's column of that name */
    static ArrowBatchLayout.Column column(ArrowBatchLayout l, String name) {
        return l.columns().stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow();
    }

    /** @return the column's buffer of that role */
    static ArrowBatchLayout.Buffer buffer(ArrowBatchLayout.Column c, ArrowBatchLayout.Role role) {
        return c.buffers().stream().filter(b -> b.role() == role).findFirst().orElseThrow();
    }

    /**
     * The buffer's bytes as Arrow Java's vectors hold them: stored bytes as they are for an uncompressed body; for a
     * compressed one decoded with {@link ArrowBufferDecoder} (the 8-byte uncompressed-length prefix, -1 for stored
     * uncompressed), the values of Binary/Utf8 whole, other buffers to the bytes the column's length needs.
     */
    static byte[] decode(ArrowBatchLayout l, ArrowBatchLayout.Column c, ArrowBatchLayout.Buffer b, byte[] stored)
            throws FormatException {
        if (!l.compressed()) {
            return stored;
        }
        ArrowBufferDecoder.Where at = new ArrowBufferDecoder.Where(l.file(), l.batch(), b.index(), l.bodyOffset() + b.offset());
        long need = c.neededBytes(b.role());
        if (need < 0) { // Binary/Utf8 values: the length is the declared one
            if (stored.length == 0) {
                return stored;
            }
            long declared = ByteBuffer.wrap(stored).order(ByteOrder.LITTLE_ENDIAN).getLong(0);
            return declared == -1 ? java.util.Arrays.copyOfRange(stored, 8, stored.length)
                    : ArrowBufferDecoder.decode(at, stored, l.codec(), declared);
        }
        // a writer may leave a buffer empty when nothing needs it (no nulls: no bitmap; 0 rows: no offsets)
        boolean optional = b.role() == ArrowBatchLayout.Role.VALIDITY || b.role() == ArrowBatchLayout.Role.CHILD_VALIDITY
                || c.length() == 0;
        return ArrowBufferDecoder.decode(at, stored, l.codec(), stored.length == 0 && optional ? 0 : need);
    }

    /** The buffer's bytes as stored in the file. */
    static byte[] stored(Path f, ArrowBatchLayout l, ArrowBatchLayout.Buffer b) throws IOException {
        byte[] out = new byte[(int) b.length()];
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            ByteBuffer bb = ByteBuffer.wrap(out);
            while (bb.hasRemaining()) {
                if (ch.read(bb, l.bodyOffset() + b.offset() + bb.position()) < 0) {
                    throw new IOException("eof");
                }
            }
        }
        return out;
    }

    /**
     * Writes one batch per entry of {@code rows} with Arrow Java: every fixed-width primitive, Bool, FixedSizeBinary(3),
     * Binary, Utf8, LargeBinary and LargeUtf8, each with a null in every third row from row 1.
     */
    static void writeAllTypes(Path f, int[] rows) throws IOException {
        Schema s = new Schema(List.of(
                Field.nullable("i8", new ArrowType.Int(8, true)), Field.nullable("i16", new ArrowType.Int(16, true)),
                Field.nullable("i32", new ArrowType.Int(32, true)), Field.nullable("i64", new ArrowType.Int(64, true)),
                Field.nullable("u16", new ArrowType.Int(16, false)), Field.nullable("u32", new ArrowType.Int(32, false)),
                Field.nullable("u64", new ArrowType.Int(64, false)),
                Field.nullable("f16", new ArrowType.FloatingPoint(FloatingPointPrecision.HALF)),
                Field.nullable("f32", new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE)),
                Field.nullable("f64", new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE)),
                Field.nullable("bool", new ArrowType.Bool()), Field.nullable("fsb", new ArrowType.FixedSizeBinary(3)),
                Field.nullable("bin", new ArrowType.Binary()), Field.nullable("utf8", new ArrowType.Utf8()),
                Field.nullable("lbin", new ArrowType.LargeBinary()), Field.nullable("lutf8", new ArrowType.LargeUtf8())));
        try (BufferAllocator a = new RootAllocator(); VectorSchemaRoot root = VectorSchemaRoot.create(s, a);
             FileChannel ch = FileChannel.open(f, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
             ArrowFileWriter w = new ArrowFileWriter(root, null, ch)) {
            w.start();
            for (int n : rows) {
                root.allocateNew();
                for (int i = 0; i < n; i++) {
                    if (i % 3 == 1) {
                        for (FieldVector v : root.getFieldVectors()) {
                            v.setNull(i);
                        }
                        continue;
                    }
                    byte[] text = ("v" + i + "x".repeat(i)).getBytes(StandardCharsets.UTF_8);
                    ((TinyIntVector) root.getVector("i8")).setSafe(i, (byte) (i - 5));
                    ((SmallIntVector) root.getVector("i16")).setSafe(i, (short) (i * 1000 - 3));
                    ((IntVector) root.getVector("i32")).setSafe(i, i * 100_000 - 7);
                    ((BigIntVector) root.getVector("i64")).setSafe(i, (long) i << 40 | i);
                    ((UInt2Vector) root.getVector("u16")).setSafe(i, (char) (60000 + i));
                    ((UInt4Vector) root.getVector("u32")).setSafe(i, -1 - i);
                    ((UInt8Vector) root.getVector("u64")).setSafe(i, -1L - i);
                    ((Float2Vector) root.getVector("f16")).setSafe(i, Float.floatToFloat16(i * 0.5f));
                    ((Float4Vector) root.getVector("f32")).setSafe(i, i * 0.25f);
                    ((Float8Vector) root.getVector("f64")).setSafe(i, i * 1.5);
                    ((BitVector) root.getVector("bool")).setSafe(i, i % 2);
                    ((FixedSizeBinaryVector) root.getVector("fsb")).setSafe(i, new byte[] {(byte) i, 2, (byte) -i});
                    ((VarBinaryVector) root.getVector("bin")).setSafe(i, text);
                    ((VarCharVector) root.getVector("utf8")).setSafe(i, text);
                    ((BaseLargeVariableWidthVector) root.getVector("lbin")).setSafe(i, text);
                    ((LargeVarCharVector) root.getVector("lutf8")).setSafe(i, text);
                }
                root.setRowCount(n);
                w.writeBatch();
            }
            w.end();
        }
    }
}
