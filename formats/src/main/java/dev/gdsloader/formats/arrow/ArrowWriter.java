package dev.gdsloader.formats.arrow;

import dev.gdsloader.formats.DType;
import java.io.IOException;
import dev.gdsloader.formats.AtomicFiles;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.ipc.ArrowFileWriter;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Writes fixed-width columns as an Arrow IPC file with Arrow Java ({@link ArrowFileWriter}): a record of one
 * element becomes a primitive column, a record of several elements a {@code FixedSizeList<primitive>} column
 * (a 28x28 image is {@code FixedSizeList<uint8>[784]}), non-nullable, uncompressed, in record batches of at
 * most {@code rowsPerBatch} rows: the layout {@link ArrowIpcFile} reads straight to the device.
 *
 * <p>Arrow Java's memory needs {@code --add-opens=java.base/java.nio=ALL-UNNAMED} (the {@code gdsloader}
 * launcher passes it). Stateless and thread-safe.
 */
public final class ArrowWriter {
    private ArrowWriter() {
    }

    /**
     * One column's data.
     *
     * @param name column name
     * @param dtype element type (integers and floats; not BF16/F8 or bool)
     * @param recordShape shape of one record; empty for a scalar
     * @param data all records, little-endian, {@code rows x prod(recordShape) x itemSize} bytes (not copied)
     */
    @SuppressWarnings("ArrayRecordComponent") // a writer's input, never compared
    public record ColumnData(String name, DType dtype, long[] recordShape, byte[] data) {
        long recordBytes() {
            long n = dtype.itemSize();
            for (long d : recordShape) {
                n = Math.multiplyExact(n, d);
            }
            return n;
        }
    }

    /**
     * @param file the file to write (replaced when complete)
     * @param columns the columns, all with the same number of rows
     * @param rowsPerBatch most rows per record batch, &ge; 1
     * @throws IllegalArgumentException if the columns disagree on rows, a data length is not a whole number of
     *     records, or a dtype has no Arrow equivalent here
     * @throws IOException if writing fails (the target is then not touched: the file is written to a hidden
     *     temporary name beside it and renamed over it when complete)
     */
    public static void write(Path file, List<ColumnData> columns, int rowsPerBatch) throws IOException {
        if (rowsPerBatch < 1 || columns.isEmpty()) {
            throw new IllegalArgumentException("need at least one column and rowsPerBatch >= 1");
        }
        long rows = -1;
        List<Field> fields = new ArrayList<>();
        for (ColumnData c : columns) {
            long rb = c.recordBytes();
            if (rb == 0 || c.data().length % rb != 0) {
                throw new IllegalArgumentException(c.name() + ": " + c.data().length + " bytes are not whole records of " + rb + " bytes");
            }
            long r = c.data().length / rb;
            if (rows >= 0 && r != rows) {
                throw new IllegalArgumentException("column " + c.name() + " has " + r + " rows, others " + rows);
            }
            rows = r;
            fields.add(field(c));
        }
        Path tmp = AtomicFiles.tempSibling(file);
        try (BufferAllocator alloc = new RootAllocator();
             VectorSchemaRoot root = VectorSchemaRoot.create(new Schema(fields), alloc);
             FileChannel ch = FileChannel.open(tmp, StandardOpenOption.WRITE);
             ArrowFileWriter w = new ArrowFileWriter(root, null, ch)) {
            w.start();
            for (long first = 0; first < rows; first += rowsPerBatch) {
                int n = (int) Math.min(rowsPerBatch, rows - first);
                for (int i = 0; i < columns.size(); i++) {
                    fill(root.getVector(i), columns.get(i), first, n);
                }
                root.setRowCount(n);
                w.writeBatch();
            }
            w.end();
        } catch (IOException | RuntimeException e) {
            AtomicFiles.deleteQuietly(tmp, e);
            throw e;
        }
        try {
            AtomicFiles.publish(tmp, file);
        } catch (IOException | RuntimeException e) {
            AtomicFiles.deleteQuietly(tmp, e);
            throw e;
        }
    }

    private static Field field(ColumnData c) {
        Field element = new Field(c.recordShape().length == 0 ? c.name() : "item", FieldType.notNullable(arrowType(c)), null);
        if (c.recordShape().length == 0) {
            return element;
        }
        long n = c.recordBytes() / c.dtype().itemSize();
        return new Field(c.name(), FieldType.notNullable(new ArrowType.FixedSizeList(Math.toIntExact(n))), List.of(element));
    }

    private static ArrowType arrowType(ColumnData c) {
        ArrowType t = ArrowTypes.of(c.dtype());
        if (t == null) {
            throw new IllegalArgumentException(c.name() + ": " + c.dtype() + " has no fixed-width Arrow type here");
        }
        return t;
    }

    /** Copies rows [first, first + n) of a column into its vector, all valid. */
    private static void fill(FieldVector v, ColumnData c, long first, int n) {
        long rb = c.recordBytes();
        int elements = (int) (rb / c.dtype().itemSize());
        BaseFixedWidthVector values;
        if (v instanceof FixedSizeListVector list) {
            list.setInitialCapacity(n);
            list.allocateNew();
            for (int i = 0; i < n; i++) {
                list.setNotNull(i);
            }
            values = (BaseFixedWidthVector) list.getDataVector();
            values.allocateNew(n * elements);
            list.setValueCount(n);
        } else {
            values = (BaseFixedWidthVector) v;
            values.allocateNew(n);
        }
        values.getDataBuffer().setBytes(0, c.data(), (int) (first * rb), n * rb);
        for (int i = 0; i < n * elements; i++) {
            org.apache.arrow.vector.BitVectorHelper.setBit(values.getValidityBuffer(), i);
        }
        values.setValueCount(n * elements);
        if (!(v instanceof FixedSizeListVector)) {
            v.setValueCount(n);
        }
    }
}
