package dev.gdsloader.loader.arrow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.fixtures.RealWriterFixtures;
import dev.gdsloader.loader.PathTaken;
import dev.gdsloader.loader.ReadPath;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/** The HOST path of {@link ArrowBatchReader} on the pyarrow fixtures: every buffer of every batch, byte for byte. */
class ArrowBatchReaderTest {
    @TempDir
    Path tmp;

    @TestFactory
    Stream<DynamicTest> hostPathDeliversEveryBufferOfEveryFixture() {
        return ArrowBatchChecks.fixtures().stream().map(f -> DynamicTest.dynamicTest(f.getFileName().toString(), () -> {
            try (ArrowBatchReader r = ArrowBatchReader.open(f, ReadPath.HOST)) {
                assertEquals(PathTaken.HOST, r.path());
                assertEquals(r.batchCount(), ArrowBatchChecks.checkFixture(f, r));
            }
        }));
    }

    @Test
    void aBatchIsValidUntilTheNextReadAndTheReaderIsIdempotentlyClosed() throws Exception {
        Path f = RealWriterFixtures.directory().resolve("arrow-nulls-file.arrow");
        ArrowBatchReader r = ArrowBatchReader.open(f, ReadPath.HOST);
        ArrowBatch first = r.next();
        assertTrue(first.valid());
        assertEquals(List.of("x", "name", "blob"), first.columns().stream().map(ArrowDeviceColumn::name).toList());
        ArrowBatch second = r.next();
        assertFalse(first.valid());
        assertThrows(IllegalStateException.class, first::columns);
        assertFalse(r.hasNext());
        assertThrows(NoSuchElementException.class, r::next);
        assertTrue(second.pathReason().contains("one read of"), second.pathReason());
        r.close();
        r.close();
        assertFalse(second.valid());
        assertThrows(IllegalStateException.class, r::next);
    }

    @Test
    void viewsPointAtTheMetadatasOffsetsInsideOneAlignedRead() throws Exception {
        Path f = RealWriterFixtures.directory().resolve("arrow-nulls-stream.arrows");
        try (ArrowBatchReader r = ArrowBatchReader.open(f, ReadPath.HOST)) {
            ArrowBatch b = r.next();
            ArrowDeviceColumn x = b.column("x");
            ArrowDeviceColumn name = b.column("name");
            long bufX = b.layout().column("x").buffer(dev.gdsloader.formats.arrow.ArrowBatchLayout.Role.VALUES)
                    .orElseThrow().offset();
            long bufName = b.layout().column("name").buffer(dev.gdsloader.formats.arrow.ArrowBatchLayout.Role.VALUES)
                    .orElseThrow().offset();
            assertEquals(bufName - bufX, name.values().address() - x.values().address());
            long base = x.values().address() - bufX - b.layout().bodyOffset() % ArrowBatchReader.ALIGNMENT;
            assertEquals(0, base % ArrowBatchReader.ALIGNMENT, "the read lands at an aligned base");
            assertEquals(2, x.nullCount());
            assertTrue(x.validity().present());
        }
    }

    @Test
    void aColumnSelectionExposesOnlyThoseColumns() throws Exception {
        Path f = RealWriterFixtures.directory().resolve("arrow-fixed-file-zstd.arrow");
        try (ArrowBatchReader r = ArrowBatchReader.open(f, ReadPath.HOST, List.of("id", "image"))) {
            ArrowBatch b = r.next();
            assertEquals(List.of("id", "image"), b.columns().stream().map(ArrowDeviceColumn::name).toList());
            assertTrue(b.pathReason().contains("HOST-DECODE: record batch 0 is ZSTD-compressed"), b.pathReason());
        }
    }

    @Test
    void aBodyCutShortByTheEndOfTheFileIsNamed() throws Exception {
        Path src = RealWriterFixtures.directory().resolve("arrow-nulls-stream.arrows");
        byte[] all = Files.readAllBytes(src);
        Path cut = tmp.resolve("cut.arrows");
        Files.write(cut, all);
        try (ArrowBatchReader r = ArrowBatchReader.open(cut, ReadPath.HOST)) {
            long end = r.next().layout().bodyOffset();
            Files.write(cut, java.util.Arrays.copyOf(all, (int) end + 3));
            // the metadata was read at open; the file shrank under the reader
            FormatException e = assertThrows(FormatException.class, r::next);
            assertTrue(e.getMessage().contains("record batch 1"), e.getMessage());
        }
    }

    @Test
    void gdsAndBounceWithoutAGpuAreRefusedNamingWhy() {
        org.junit.jupiter.api.Assumptions.assumeFalse(dev.gdsloader.cuda.Cuda.availability().available(), "a GPU is here");
        Path f = RealWriterFixtures.directory().resolve("arrow-nulls-file.arrow");
        assertTrue(assertThrows(IllegalStateException.class, () -> ArrowBatchReader.open(f, ReadPath.BOUNCE)).getMessage()
                .contains("no GPU"));
        assertTrue(assertThrows(IllegalStateException.class, () -> ArrowBatchReader.open(f, ReadPath.GDS)).getMessage()
                .contains("cuFile is unusable"));
    }
}
