package dev.gdsloader.formats.registry;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.arrow.ArrowWriter;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An Arrow file's columns opened in one parse ({@link ShardFileFormat#openColumns}, issue 21 finding 12: the dataset
 * opened the file once per column, and each open scanned the schema per column) give exactly the runs that opening
 * each column alone gives: scalar and FixedSizeList columns interleaved, so each column's place among the batch's
 * nodes and buffers is checked, over three record batches.
 */
class ArrowOpenColumnsTest {
    private static final int COLUMNS = 300;
    private static final int ROWS = 30;

    @TempDir
    Path dir;

    @Test
    void openColumnsGivesEachColumnsRunsAsOpeningItAloneDoes() throws IOException {
        List<ArrowWriter.ColumnData> cols = new ArrayList<>();
        for (int c = 0; c < COLUMNS; c++) {
            boolean list = c % 3 == 1;
            DType t = c % 2 == 0 ? DType.UINT8 : DType.FLOAT32;
            long[] shape = list ? new long[] {3} : new long[0];
            byte[] data = new byte[ROWS * t.itemSize() * (list ? 3 : 1)];
            for (int i = 0; i < data.length; i++) {
                data[i] = (byte) (i + c);
            }
            cols.add(new ArrowWriter.ColumnData("c" + c, t, shape, data));
        }
        Path f = dir.resolve("wide-00000.arrow");
        ArrowWriter.write(f, cols, ROWS / 3);
        ShardFileFormat arrow = ShardFormats.require(f);
        Map<String, List<RecordLayout>> all = arrow.openColumns(f, "wide", c -> !c.equals("c7"));
        assertEquals(arrow.columns(f, "wide"), List.copyOf(all.keySet()), "every column, in the file's order");
        assertTrue(all.get("c7").isEmpty(), "a column not wanted is not opened");
        for (int c = 0; c < COLUMNS; c++) {
            if (c == 7) {
                continue;
            }
            List<RecordLayout> alone = arrow.open(f, "c" + c);
            List<RecordLayout> together = all.get("c" + c);
            assertEquals(3, alone.size());
            assertEquals(alone.size(), together.size());
            for (int b = 0; b < alone.size(); b++) {
                RecordLayout x = alone.get(b);
                RecordLayout y = together.get(b);
                String where = "column c" + c + ", batch " + b;
                assertEquals(x.dataOffset(), y.dataOffset(), where);
                assertEquals(x.recordCount(), y.recordCount(), where);
                assertEquals(x.recordBytes(), y.recordBytes(), where);
                assertEquals(x.dtype(), y.dtype(), where);
                assertArrayEquals(x.recordShape(), y.recordShape(), where);
            }
        }
    }
}
