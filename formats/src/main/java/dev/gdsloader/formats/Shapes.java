package dev.gdsloader.formats;

import java.nio.file.Path;

/**
 * Arithmetic and formatting of array shapes (arrays of per-axis element counts).
 *
 * <p>All methods are static, stateless and thread-safe; arrays passed in are only read.
 */
public final class Shapes {

    private Shapes() {
    }

    /**
     * Computes the number of bytes of a C-order array, for shapes read from a file.
     *
     * @param shape per-axis element counts; {@code []} is a scalar (1 element)
     * @param itemSize bytes per element, {@code >= 1}
     * @param file the file the shape was read from, for the exception message
     * @param offset byte offset of the shape in the file, for the exception message
     * @return {@code product(shape) * itemSize}, in bytes
     * @throws FormatException if an entry is negative or the product overflows a long (the
     *     product of the non-zero entries is checked, so every sub-shape's size fits as well)
     */
    public static long byteSize(long[] shape, int itemSize, Path file, long offset)
            throws FormatException {
        for (long dim : shape) {
            if (dim < 0) {
                throw new FormatException(file, offset, "non-negative dimensions",
                        "shape " + toPythonTuple(shape));
            }
        }
        try {
            return multiply(shape, itemSize);
        } catch (ArithmeticException e) {
            throw new FormatException(file, offset, "a shape whose byte size fits in a signed 64-bit"
                    + " integer", "shape " + toPythonTuple(shape) + " with " + itemSize
                    + "-byte items");
        }
    }

    /**
     * Computes the number of bytes of a C-order array, for shapes given by a caller.
     *
     * @param shape per-axis element counts; {@code []} is a scalar (1 element)
     * @param itemSize bytes per element, {@code >= 1}
     * @return {@code product(shape) * itemSize}, in bytes
     * @throws IllegalArgumentException if an entry is negative or the product overflows a long
     *     (the product of the non-zero entries is checked)
     */
    public static long byteSize(long[] shape, int itemSize) {
        for (long dim : shape) {
            if (dim < 0) {
                throw new IllegalArgumentException("negative dimension in shape " + toPythonTuple(shape));
            }
        }
        try {
            return multiply(shape, itemSize);
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("byte size of shape " + toPythonTuple(shape) + " with "
                    + itemSize + "-byte items overflows a long", e);
        }
    }

    /**
     * Formats a shape the way Python's {@code repr} formats a tuple of ints.
     *
     * @param shape per-axis element counts
     * @return e.g. {@code "()"}, {@code "(5,)"}, {@code "(3, 4)"}
     */
    public static String toPythonTuple(long[] shape) {
        StringBuilder sb = new StringBuilder("(");
        for (int i = 0; i < shape.length; i++) {
            if (i > 0) {
                sb.append(", ");
            }
            sb.append(shape[i]);
        }
        if (shape.length == 1) {
            sb.append(',');
        }
        return sb.append(')').toString();
    }

    /**
     * Formats a size computation as {@code "d0 x d1 x ... x itemSize"}.
     *
     * @param shape per-axis element counts
     * @param itemSize bytes per element
     * @return e.g. {@code "60000 x 784 x 1"}; {@code "4"} for a scalar of 4-byte items
     */
    public static String toProduct(long[] shape, int itemSize) {
        StringBuilder sb = new StringBuilder();
        for (long dim : shape) {
            sb.append(dim).append(" x ");
        }
        return sb.append(itemSize).toString();
    }

    private static long multiply(long[] shape, int itemSize) {
        // Like NumPy, the product of the non-zero dimensions must fit even when some dimension is
        // zero, so that the byte size of any sub-shape (e.g. one record) fits as well.
        long bytes = itemSize;
        boolean empty = false;
        for (long dim : shape) {
            if (dim == 0) {
                empty = true;
            } else {
                bytes = Math.multiplyExact(bytes, dim);
            }
        }
        return empty ? 0 : bytes;
    }
}
