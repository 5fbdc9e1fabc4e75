package dev.gdsloader.service.protocol;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.arrow.ArrowTypes;
import dev.gdsloader.loader.dataset.Column;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The Arrow schema of a host-delivered batch (service/README.md, "Arrow schema"): each dataset column as a primitive
 * (one element per record) or a {@code FixedSizeList(n)} of it (child {@code "item"}), with field metadata
 * {@code gdsloader.dtype} and {@code gdsloader.shape}; then {@code _record} (Int64) and {@code _padding} (Bool); schema
 * metadata {@code gdsloader.version} = {@link Protocol#VERSION} ("4"). Every field is non-nullable. Stateless; thread-safe.
 */
public final class BatchSchema {
    private BatchSchema() {
    }

    /** @return the batch schema of these dataset columns, in their order, then the two bookkeeping columns */
    public static Schema of(List<Column> columns) {
        List<Field> fields = new ArrayList<>();
        for (Column c : columns) {
            fields.add(field(c.name(), c.dtype(), c.recordShape()));
        }
        fields.addAll(bookkeeping());
        return new Schema(fields, Map.of(Protocol.VERSION_KEY, Integer.toString(Protocol.VERSION)));
    }

    /** @return the schema of a CUDA IPC batch message: {@code _record} and {@code _padding} only */
    public static Schema ipc() {
        return new Schema(bookkeeping(), Map.of(Protocol.VERSION_KEY, Integer.toString(Protocol.VERSION)));
    }

    private static List<Field> bookkeeping() {
        return List.of(new Field(Protocol.RECORD_COLUMN, FieldType.notNullable(new ArrowType.Int(64, true)), null),
                new Field(Protocol.PADDING_COLUMN, FieldType.notNullable(ArrowType.Bool.INSTANCE), null));
    }

    /**
     * @param root a received batch (either schema: both end with the bookkeeping columns)
     * @return the global record index of each row, from {@value Protocol#RECORD_COLUMN}
     */
    public static long[] records(VectorSchemaRoot root) {
        int rows = root.getRowCount();
        long[] records = new long[rows];
        BigIntVector rec = (BigIntVector) root.getVector(Protocol.RECORD_COLUMN);
        for (int i = 0; i < rows; i++) {
            records[i] = rec.get(i);
        }
        return records;
    }

    /** @return elements per record: the product of the record shape (1 for a scalar) */
    public static long elements(long[] recordShape) {
        long n = 1;
        for (long d : recordShape) {
            n = Math.multiplyExact(n, d);
        }
        return n;
    }

    /**
     * @param name column name
     * @param dtype element type
     * @param recordShape shape of one record (without the batch dimension)
     * @return the column's field
     */
    public static Field field(String name, DType dtype, long[] recordShape) {
        Map<String, String> meta = Map.of(Protocol.DTYPE_KEY, dtype.name(), Protocol.SHAPE_KEY,
                Arrays.stream(recordShape).mapToObj(Long::toString).collect(Collectors.joining(",", "[", "]")));
        long n = elements(recordShape);
        if (n == 1) {
            return new Field(name, new FieldType(false, primitive(dtype), null, meta), null);
        }
        Field item = new Field("item", FieldType.notNullable(primitive(dtype)), null);
        return new Field(name, new FieldType(false, new ArrowType.FixedSizeList(Math.toIntExact(n)), null, meta), List.of(item));
    }

    /**
     * @param dtype element type
     * @return its Arrow type; the 16- and 8-bit float formats Arrow lacks (BFLOAT16, FLOAT8_*) travel as unsigned
     *     integers of their width, {@code gdsloader.dtype} naming what they are
     */
    public static ArrowType primitive(DType dtype) {
        return switch (dtype) {
            case BOOL -> ArrowType.Bool.INSTANCE;
            case FLOAT8_E4M3, FLOAT8_E5M2, BFLOAT16 -> new ArrowType.Int(8 * dtype.itemSize(), false);
            default -> ArrowTypes.of(dtype);
        };
    }

    /**
     * @param f a dataset column's field of a batch schema
     * @return its {@code DType}, from {@code gdsloader.dtype}
     * @throws IllegalArgumentException if the metadata is missing or names no DType
     */
    public static DType dtype(Field f) {
        String t = f.getMetadata().get(Protocol.DTYPE_KEY);
        if (t == null) {
            throw new IllegalArgumentException("field '" + f.getName() + "' has no " + Protocol.DTYPE_KEY + " metadata");
        }
        return DType.valueOf(t);
    }

    /**
     * @param f a dataset column's field of a batch schema
     * @return its per-record shape, from {@code gdsloader.shape}
     * @throws IllegalArgumentException if the metadata is missing or not a JSON array of integers
     */
    public static long[] recordShape(Field f) {
        String s = f.getMetadata().get(Protocol.SHAPE_KEY);
        if (s == null || !s.startsWith("[") || !s.endsWith("]")) {
            throw new IllegalArgumentException("field '" + f.getName() + "' has no " + Protocol.SHAPE_KEY + " array: " + s);
        }
        String body = s.substring(1, s.length() - 1).trim();
        return body.isEmpty() ? new long[0] : Arrays.stream(body.split(",")).map(String::trim).mapToLong(Long::parseLong).toArray();
    }
}
