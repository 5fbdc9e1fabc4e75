package dev.gdsloader.formats.arrow;

import dev.gdsloader.formats.DType;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;

/**
 * The one mapping between {@link DType} and Arrow's fixed-width primitive types ({@code Int(bits, signed)},
 * {@code FloatingPoint(HALF | SINGLE | DOUBLE)}), per the Arrow columnar format ("Fixed-size primitive layout"), for
 * every reader and writer of Arrow here (shards, the prefetch service's batches). Stateless; thread-safe.
 */
public final class ArrowTypes {
    private ArrowTypes() {
    }

    /**
     * @param dtype an element type
     * @return its Arrow primitive type, one value per {@code dtype.itemSize()} bytes; null for the types Arrow stores
     *     otherwise or not at all (BOOL is bit-packed; BFLOAT16 and FLOAT8_* have no Arrow type)
     */
    public static ArrowType of(DType dtype) {
        return switch (dtype) {
            case INT8 -> new ArrowType.Int(8, true);
            case UINT8 -> new ArrowType.Int(8, false);
            case INT16 -> new ArrowType.Int(16, true);
            case UINT16 -> new ArrowType.Int(16, false);
            case INT32 -> new ArrowType.Int(32, true);
            case UINT32 -> new ArrowType.Int(32, false);
            case INT64 -> new ArrowType.Int(64, true);
            case UINT64 -> new ArrowType.Int(64, false);
            case FLOAT16 -> new ArrowType.FloatingPoint(FloatingPointPrecision.HALF);
            case FLOAT32 -> new ArrowType.FloatingPoint(FloatingPointPrecision.SINGLE);
            case FLOAT64 -> new ArrowType.FloatingPoint(FloatingPointPrecision.DOUBLE);
            case BOOL, BFLOAT16, FLOAT8_E4M3, FLOAT8_E5M2 -> null;
        };
    }

    /**
     * @param t an Arrow type
     * @return the {@link DType} of a fixed-width primitive ({@link #of}'s inverse); null for any other type
     */
    public static DType dtype(ArrowType t) {
        if (t instanceof ArrowType.Int i) {
            return switch (i.getBitWidth()) {
                case 8 -> i.getIsSigned() ? DType.INT8 : DType.UINT8;
                case 16 -> i.getIsSigned() ? DType.INT16 : DType.UINT16;
                case 32 -> i.getIsSigned() ? DType.INT32 : DType.UINT32;
                case 64 -> i.getIsSigned() ? DType.INT64 : DType.UINT64;
                default -> null;
            };
        }
        if (t instanceof ArrowType.FloatingPoint f) {
            return f.getPrecision() == FloatingPointPrecision.HALF ? DType.FLOAT16
                    : f.getPrecision() == FloatingPointPrecision.SINGLE ? DType.FLOAT32 : DType.FLOAT64;
        }
        return null;
    }
}
