package dev.gdsloader.loader.arrow;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.gdsloader.formats.arrow.ArrowBatchLayout;
import dev.gdsloader.formats.fixtures.RealWriterFixtures;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;

/**
 * Checks what an {@link ArrowBatchReader} delivers, on any path: per batch and column, the bytes at every view are
 * (1) what the writer meant (the fixture's {@code .json}: validity bits, offsets, values) and (2) exactly the bytes at
 * the layout's extents in the file (decoded on the host for compressed bodies).
 */
final class ArrowBatchChecks {
    private ArrowBatchChecks() {
    }

    /** @return the pyarrow Arrow fixtures (file and stream, plain, LZ4, ZSTD, a 0-row batch) */
    static List<Path> fixtures() {
        return RealWriterFixtures.files().stream()
                .filter(f -> f.getFileName().toString().startsWith("arrow-"))
                .filter(f -> !f.getFileName().toString().endsWith(".json"))
                .toList();
    }

    /**
     * Reads every batch of a fixture and checks each column against the fixture's values and the file.
     *
     * @return the batches read
     */
    static int checkFixture(Path fixture, ArrowBatchReader r) throws IOException {
        JsonNode expected = RealWriterFixtures.expected(fixture);
        JsonNode rows = expected.get("batches");
        JsonNode columns = expected.get("columns");
        int row0 = 0;
        int b = 0;
        while (r.hasNext()) {
            ArrowBatch batch = r.next();
            int n = rows.get(b).asInt();
            assertEquals(n, batch.rows(), fixture + " batch " + b);
            assertEquals(b, batch.index());
            assertEquals(batch.layout().compressed(), batch.pathReason().contains("HOST-DECODE"), batch.pathReason());
            for (ArrowDeviceColumn c : batch.columns()) {
                String where = fixture.getFileName() + " batch " + b + " column " + c.name();
                List<JsonNode> values = new ArrayList<>();
                for (int i = row0; i < row0 + n; i++) {
                    values.add(columns.get(c.name()).get(i));
                }
                assertEquals(r.path().onDevice(), c.onDevice());
                checkValues(where, r, c, values);
                checkAgainstFile(where, r, batch, c);
            }
            row0 += n;
            b++;
        }
        assertEquals(rows.size(), b, fixture.toString());
        return b;
    }

    /** The delivered bytes equal the writer's values. */
    static void checkValues(String where, ArrowBatchReader r, ArrowDeviceColumn c, List<JsonNode> values) {
        int n = values.size();
        assertEquals(n, c.length(), where);
        long nulls = values.stream().filter(JsonNode::isNull).count();
        assertEquals(nulls, c.nullCount(), where + " null count");
        byte[] validity = r.copyToHeap(c.validity());
        if (!c.validity().present()) {
            assertEquals(0, nulls, where + ": nulls but no validity bitmap");
        }
        for (int i = 0; i < n && validity.length > 0; i++) {
            assertEquals(!values.get(i).isNull(), (validity[i >>> 3] >>> (i & 7) & 1) == 1, where + " validity bit " + i);
        }
        ArrowType t = c.type();
        if (t instanceof ArrowType.FixedSizeList list) {
            assertEquals(0, c.childNullCount(), where);
            ByteArrayOutputStream flat = new ByteArrayOutputStream();
            for (JsonNode v : values) {
                assertEquals(list.getListSize(), v.size(), where);
                v.forEach(e -> flat.writeBytes(encode(c.childType(), e)));
            }
            byte[] got = r.copyToHeap(c.values());
            assertArrayEquals(flat.toByteArray(), Arrays.copyOf(got, flat.size()), where + " child values");
            return;
        }
        if (c.offsets().present() || t instanceof ArrowType.Utf8 || t instanceof ArrowType.Binary
                || t instanceof ArrowType.LargeUtf8 || t instanceof ArrowType.LargeBinary) {
            int w = ArrowBatchLayout.Column.offsetWidth(t);
            if (n == 0) {
                return;
            }
            ByteBuffer off = ByteBuffer.wrap(r.copyToHeap(c.offsets())).order(ByteOrder.LITTLE_ENDIAN);
            assertTrue(off.capacity() >= (n + 1) * w, where + " offsets of " + off.capacity() + " bytes");
            byte[] data = r.copyToHeap(c.values());
            long at = w == 4 ? off.getInt(0) : off.getLong(0);
            for (int i = 0; i < n; i++) {
                long end = w == 4 ? off.getInt((i + 1) * 4) : off.getLong((i + 1) * 8);
                byte[] expect = values.get(i).isNull() ? new byte[0] : bytesOf(values.get(i));
                assertEquals(expect.length, end - at, where + " length of row " + i);
                assertArrayEquals(expect, Arrays.copyOfRange(data, (int) at, (int) end), where + " row " + i);
                at = end;
            }
            return;
        }
        byte[] got = r.copyToHeap(c.values());
        for (int i = 0; i < n; i++) {
            if (!values.get(i).isNull()) {
                byte[] e = encode(t, values.get(i));
                assertArrayEquals(e, Arrays.copyOfRange(got, i * e.length, (i + 1) * e.length), where + " row " + i);
            }
        }
    }

    /** Every view holds exactly the bytes at the layout's extent in the file (decoded for compressed bodies). */
    static void checkAgainstFile(String where, ArrowBatchReader r, ArrowBatch batch, ArrowDeviceColumn c)
            throws IOException {
        ArrowBatchLayout l = batch.layout();
        for (ArrowBatchLayout.Buffer b : l.column(c.name()).buffers()) {
            byte[] expect = l.decode(b, stored(l.file(), l.bodyOffset() + b.offset(), b.length()));
            ArrowDeviceColumn.Span s = c.span(b.role());
            assertEquals(expect.length, s.bytes(), where + " " + b.role() + " length");
            assertArrayEquals(expect, r.copyToHeap(s), where + " " + b.role());
        }
        assertFalse(c.offsets().present() && ArrowBatchLayout.Column.offsetWidth(c.type()) == 0, where);
    }

    private static byte[] bytesOf(JsonNode v) {
        if (v.isTextual()) {
            return v.asText().getBytes(StandardCharsets.UTF_8);
        }
        byte[] b = new byte[v.size()];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) v.get(i).asInt();
        }
        return b;
    }

    private static byte[] encode(ArrowType t, JsonNode v) {
        if (t instanceof ArrowType.Int i) {
            ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v.asLong());
            return Arrays.copyOf(b.array(), i.getBitWidth() / 8);
        }
        ArrowType.FloatingPoint f = (ArrowType.FloatingPoint) t;
        ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
        if (f.getPrecision() == FloatingPointPrecision.HALF) {
            return Arrays.copyOf(b.putShort(Float.floatToFloat16((float) v.asDouble())).array(), 2);
        }
        if (f.getPrecision() == FloatingPointPrecision.SINGLE) {
            return Arrays.copyOf(b.putFloat((float) v.asDouble()).array(), 4);
        }
        return b.putDouble(v.asDouble()).array();
    }

    static byte[] stored(Path f, long offset, long length) throws IOException {
        byte[] out = new byte[(int) length];
        try (FileChannel ch = FileChannel.open(f, StandardOpenOption.READ)) {
            ByteBuffer bb = ByteBuffer.wrap(out);
            while (bb.hasRemaining()) {
                if (ch.read(bb, offset + bb.position()) < 0) {
                    throw new IOException(f + ": end of file at " + (offset + bb.position()));
                }
            }
        }
        return out;
    }
}
