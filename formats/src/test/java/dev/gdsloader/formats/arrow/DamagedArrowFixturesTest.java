package dev.gdsloader.formats.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.fixtures.RealWriterFixtures;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damaged copies of the real-writer Arrow fixtures (pyarrow): a stream cut at a message boundary, metadata overwritten
 * with large or invalid values. Each is refused at open with a {@link FormatException} naming the file, the offset of the
 * message or footer being parsed and what was expected, never a Java exception's name; none is read short.
 */
class DamagedArrowFixturesTest {
    @TempDir
    Path dir;

    private static Path fixture(String name) {
        return RealWriterFixtures.directory().resolve(name);
    }

    /** A copy of a fixture, its first {@code length} bytes. */
    private Path cut(String name, int length) throws IOException {
        return Files.write(dir.resolve("cut-" + name), Arrays.copyOf(Files.readAllBytes(fixture(name)), length));
    }

    /** A copy of a fixture with {@code bytes} written at {@code offset}. */
    private Path damaged(String name, int offset, int... bytes) throws IOException {
        byte[] d = Files.readAllBytes(fixture(name));
        for (int i = 0; i < bytes.length; i++) {
            d[offset + i] = (byte) bytes[i];
        }
        return Files.write(dir.resolve("damaged-" + name), d);
    }

    private static FormatException refused(Path f) {
        FormatException e = assertThrows(FormatException.class, () -> ArrowIpcFile.open(f));
        assertTrue(e.getMessage().startsWith(f + ": at byte offset "), e.getMessage());
        assertFalse(e.getMessage().matches("(?s).*(Exception|java\\.|overflow).*"), e.getMessage());
        return e;
    }

    @Test
    void aStreamCutAtAMessageBoundaryIsRefusedNotReadShort() throws IOException {
        // the first 792 bytes: the schema and record batch 0 (4 of the 6 records), no end-of-stream marker
        Path f = cut("arrow-fixed-stream.arrows", 792);
        assertEquals(f + ": at byte offset 792: expected the end-of-stream marker (continuation 0xFFFFFFFF and a 0x00000000 "
                + "length), found the end of the file after 1 record batch (truncated? the writer did not finish)",
                refused(f).getMessage());
        Path schemaOnly = cut("arrow-fixed-stream.arrows", 328);
        assertEquals(schemaOnly + ": at byte offset 328: expected the end-of-stream marker (continuation 0xFFFFFFFF and a "
                + "0x00000000 length), found the end of the file after the schema and no record batches (truncated? the "
                + "writer did not finish)", refused(schemaOnly).getMessage());
    }

    @Test
    void everyStreamFixtureEndsWithItsMarkerAndReads() throws IOException {
        List<Path> streams = RealWriterFixtures.files().stream().filter(p -> p.toString().endsWith(".arrows")).toList();
        assertFalse(streams.isEmpty());
        for (Path s : streams) {
            ArrowIpcFile a = ArrowIpcFile.open(s);
            assertTrue(a.batchCount() > 0, s.toString());
        }
    }

    @Test
    void aSchemaWithNoFieldsIsNamedNotAnIndexError() throws IOException {
        Path f = damaged("arrow-fixed-stream.arrows", 37, 0xff, 0xff, 0xff, 0x7f);
        FormatException e = refused(f);
        assertEquals(f + ": at byte offset 8: expected a schema with at least one field, found a schema of none", e.getMessage());
        assertEquals(8, e.offset());
    }

    @Test
    void anInvalidIntBitWidthIsNamedAtTheFooter() throws IOException {
        // the third byte of column 'id''s bit width (64) in the footer's schema: 131136 bits
        Path f = damaged("arrow-fixed-file.arrow", 1370, 0x02);
        assertEquals(f + ": at byte offset 1192: expected field 'id': an Int bit width of 8, 16, 32 or 64, found a bit width "
                + "of 131136", refused(f).getMessage());
    }

    @Test
    void aFieldNodeLongerThanItsBatchIsDamageNotAnOverflow() throws IOException {
        // a field node's length in record batch 0 (message at 336) of the ZSTD file: was "long overflow"
        Path z = damaged("arrow-fixed-file-zstd.arrow", 652, 0xff, 0xff, 0xff, 0x7f);
        assertEquals(z + ": at byte offset 336: expected column 'score': a field node of the record batch's 4 rows, found "
                + "9223372032559808516 rows", refused(z).getMessage());
        // column 'image''s node says 2147483647 rows in a 4-row batch
        Path f = damaged("arrow-fixed-file.arrow", 576, 0xff, 0xff, 0xff, 0x7f);
        assertEquals(f + ": at byte offset 336: expected column 'image': a field node of the record batch's 4 rows, found "
                + "2147483647 rows", refused(f).getMessage());
        // the batch's own length says 2147483647 rows, its columns 4
        Path rows = damaged("arrow-fixed-file.arrow", 408, 0xff, 0xff, 0xff, 0x7f);
        assertEquals(rows + ": at byte offset 336: expected column 'image': a field node of the record batch's 2147483647 "
                + "rows, found 4 rows", refused(rows).getMessage());
    }

    @Test
    void everyArrowFixtureWithAnyFourBytesOverwrittenOpensOrIsRefusedByName() throws IOException {
        for (Path src : RealWriterFixtures.files()) {
            String n = src.getFileName().toString();
            if (!n.endsWith(".arrow") && !n.endsWith(".arrows")) {
                continue;
            }
            byte[] good = Files.readAllBytes(src);
            Path f = dir.resolve(n);
            for (int off = 0; off + 4 <= good.length; off++) {
                byte[] d = good.clone();
                d[off] = (byte) 0xff;
                d[off + 1] = (byte) 0xff;
                d[off + 2] = (byte) 0xff;
                d[off + 3] = (byte) 0x7f;
                Files.write(f, d);
                String where = n + " with bytes " + off + ".." + (off + 3) + " = ff ff ff 7f";
                try {
                    ArrowIpcFile a = ArrowIpcFile.open(f);
                    for (int b = 0; b < a.batchCount(); b++) {
                        for (String c : a.columns()) {
                            try {
                                a.records(c, b);
                            } catch (FormatException e) {
                                assertNamed(f, e, where);
                            }
                            try {
                                a.batchLayout(b, List.of(c));
                            } catch (FormatException e) {
                                assertNamed(f, e, where);
                            }
                        }
                    }
                } catch (FormatException e) {
                    assertNamed(f, e, where);
                } catch (RuntimeException e) {
                    throw new AssertionError(where + ": " + e, e);
                }
            }
        }
    }

    /**
     * The last record batch's body cut by 64 bytes, the footer kept whole: the footer's block now reaches into the footer.
     * It used to open, and the footer's bytes were delivered as the batch's last values.
     */
    @Test
    void aBodyCutShortBeforeAnIntactFooterIsRefusedNotFilledWithFooterBytes() throws IOException {
        for (String name : List.of("arrow-fixed-file.arrow", "arrow-nulls-file.arrow", "arrow-fixed-file-lz4.arrow")) {
            byte[] whole = Files.readAllBytes(fixture(name));
            ArrowIpcFile original = ArrowIpcFile.open(fixture(name));
            int last = original.batchCount() - 1;
            ArrowBatchLayout body = original.batchLayout(last, List.of());
            int cutAt = (int) (body.bodyOffset() + body.bodyLength() - 64);
            byte[] d = new byte[whole.length - 64];
            System.arraycopy(whole, 0, d, 0, cutAt);
            System.arraycopy(whole, cutAt + 64, d, cutAt, whole.length - cutAt - 64);
            Path f = Files.write(dir.resolve("body-cut-" + name), d);
            int footerLength = java.nio.ByteBuffer.wrap(d, d.length - 10, 4).order(java.nio.ByteOrder.LITTLE_ENDIAN).getInt();
            long footerStart = d.length - 10L - footerLength;
            FormatException e = refused(f);
            assertTrue(e.getMessage().contains(": expected a record batch that ends before the footer at byte " + footerStart
                    + ", found metadata of "), e.getMessage());
            assertTrue(e.getMessage().contains("ending at byte " + (body.bodyOffset() + body.bodyLength())
                    + " (the body was cut short, or the footer's block is damaged)"), e.getMessage());
        }
    }

    /**
     * The footer's Block.bodyLength of batch 0 made 8 bytes longer than its message's bodyLength (still inside the file):
     * pyarrow refuses this ("Mismatching body length for IPC message"); it used to open.
     */
    @Test
    void aFooterBlockBodyLengthThatDisagreesWithItsMessageIsRefused() throws IOException {
        String name = "arrow-fixed-file.arrow";
        byte[] d = Files.readAllBytes(fixture(name));
        ArrowIpcFile original = ArrowIpcFile.open(fixture(name));
        ArrowBatchLayout body = original.batchLayout(0, List.of());
        java.nio.ByteBuffer le = java.nio.ByteBuffer.wrap(d).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        int footerStart = d.length - 10 - le.getInt(d.length - 10);
        // a Block struct is offset (8), metaDataLength (4) + padding (4), bodyLength (8): find batch 0's by its values
        int block = -1;
        for (int i = footerStart; i + 24 <= d.length - 10; i += 8) {
            if (le.getLong(i) + le.getInt(i + 8) == body.bodyOffset() && le.getLong(i + 16) == body.bodyLength()) {
                block = i;
            }
        }
        assertTrue(block > 0, "batch 0's Block in the footer");
        le.putLong(block + 16, body.bodyLength() + 8);
        Path f = Files.write(dir.resolve("block-length-" + name), d);
        FormatException e = refused(f);
        assertEquals(f + ": at byte offset " + le.getLong(block) + ": expected a record batch message whose bodyLength equals "
                + "the footer's Block.bodyLength of " + (body.bodyLength() + 8) + " bytes, found a bodyLength of "
                + body.bodyLength() + " bytes", e.getMessage());
    }

    private static void assertNamed(Path f, FormatException e, String where) {
        assertTrue(e.getMessage().startsWith(f + ": at byte offset "), where + ": " + e.getMessage());
        assertFalse(e.getMessage().matches("(?s).*(Exception|java\\.|overflow|out of bounds).*"), where + ": " + e.getMessage());
    }
}
