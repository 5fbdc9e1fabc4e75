package dev.gdsloader.formats;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * Element types of shard arrays, all stored little-endian.
 *
 * <p>The descr strings are those of the NumPy array-interface type strings written by
 * {@code numpy.lib.format} (NEP 1, "A Simple File Format for NumPy Arrays"): a byte-order
 * character ({@code '<'} little-endian, {@code '>'} big-endian, {@code '|'} not applicable,
 * {@code '='} native), a kind character ({@code b} bool, {@code i} signed integer, {@code u}
 * unsigned integer, {@code f} IEEE 754 float) and the item size in bytes.
 *
 * <p>{@link #BFLOAT16}, {@link #FLOAT8_E4M3} and {@link #FLOAT8_E5M2} have no NumPy descr (NumPy
 * has no such types): {@link #numpyDescr()} refuses them and {@link #fromNumpyDescr} never
 * returns them; they are stored in safetensors and raw shards only.
 *
 * <p>The safetensors names ({@link #safetensorsName()}) are those of the {@code Dtype} enum of
 * the reference implementation, https://github.com/huggingface/safetensors
 * ({@code safetensors/src/tensor.rs}), as they appear in the {@code "dtype"} field of a
 * safetensors header; the raw-shard sidecar and the dataset manifest use the same names.
 *
 * <p>Enum constants are immutable and thread-safe.
 */
public enum DType {
    /** NumPy {@code bool}: one byte, 0 or 1. Descr {@code '|b1'}, safetensors {@code BOOL}. */
    BOOL(1, 'b', "BOOL"),
    /** Signed 8-bit integer. Descr {@code '|i1'}, safetensors {@code I8}. */
    INT8(1, 'i', "I8"),
    /** Unsigned 8-bit integer. Descr {@code '|u1'}, safetensors {@code U8}. */
    UINT8(1, 'u', "U8"),
    /** Signed 16-bit integer, little-endian. Descr {@code '<i2'}, safetensors {@code I16}. */
    INT16(2, 'i', "I16"),
    /** Unsigned 16-bit integer, little-endian. Descr {@code '<u2'}, safetensors {@code U16}. */
    UINT16(2, 'u', "U16"),
    /** Signed 32-bit integer, little-endian. Descr {@code '<i4'}, safetensors {@code I32}. */
    INT32(4, 'i', "I32"),
    /** Unsigned 32-bit integer, little-endian. Descr {@code '<u4'}, safetensors {@code U32}. */
    UINT32(4, 'u', "U32"),
    /** Signed 64-bit integer, little-endian. Descr {@code '<i8'}, safetensors {@code I64}. */
    INT64(8, 'i', "I64"),
    /** Unsigned 64-bit integer, little-endian. Descr {@code '<u8'}, safetensors {@code U64}. */
    UINT64(8, 'u', "U64"),
    /**
     * IEEE 754 binary16 half-precision float, little-endian. Descr {@code '<f2'}, safetensors
     * {@code F16}.
     */
    FLOAT16(2, 'f', "F16"),
    /** IEEE 754 binary32 float, little-endian. Descr {@code '<f4'}, safetensors {@code F32}. */
    FLOAT32(4, 'f', "F32"),
    /** IEEE 754 binary64 float, little-endian. Descr {@code '<f8'}, safetensors {@code F64}. */
    FLOAT64(8, 'f', "F64"),
    /**
     * bfloat16 (the upper 16 bits of an IEEE 754 binary32: 1 sign, 8 exponent, 7 mantissa bits),
     * little-endian. No NumPy descr; safetensors {@code BF16}.
     */
    BFLOAT16(2, '\0', "BF16"),
    /**
     * 8-bit float with 4 exponent and 3 mantissa bits (the OCP FP8 E4M3 format, PyTorch
     * {@code float8_e4m3fn}). No NumPy descr; safetensors {@code F8_E4M3}.
     */
    FLOAT8_E4M3(1, '\0', "F8_E4M3"),
    /**
     * 8-bit float with 5 exponent and 2 mantissa bits (the OCP FP8 E5M2 format, PyTorch
     * {@code float8_e5m2}). No NumPy descr; safetensors {@code F8_E5M2}.
     */
    FLOAT8_E5M2(1, '\0', "F8_E5M2");

    private final int itemSize;
    /** NumPy kind character, or {@link #NO_NUMPY_KIND} for types NumPy does not have. */
    private final char kind;
    private final String safetensorsName;

    DType(int itemSize, char kind, String safetensorsName) {
        this.itemSize = itemSize;
        this.kind = kind;
        this.safetensorsName = safetensorsName;
    }

    /** The kind of the types without a NumPy descr (written as {@code '\0'} in the constants). */
    private static final char NO_NUMPY_KIND = '\0';

    /**
     * Returns the size of one element.
     *
     * @return item size in bytes (1, 2, 4 or 8)
     */
    public int itemSize() {
        return itemSize;
    }

    /**
     * Returns the little-endian NumPy descr, exactly as {@code numpy.lib.format} writes it.
     *
     * @return {@code '|'} + kind + size for 1-byte types (e.g. {@code "|u1"}), otherwise
     *     {@code '<'} + kind + size (e.g. {@code "<f4"})
     * @throws UnsupportedOperationException for {@link #BFLOAT16}, {@link #FLOAT8_E4M3} and
     *     {@link #FLOAT8_E5M2}, which NumPy does not have (the message names the type); see
     *     {@link #hasNumpyDescr()}
     */
    public String numpyDescr() {
        if (!hasNumpyDescr()) {
            throw new UnsupportedOperationException(name() + " (safetensors " + safetensorsName
                    + ") has no NumPy descr: NumPy has no such type, so it cannot be stored in a"
                    + " .npy file; use a safetensors or raw shard");
        }
        return (itemSize == 1 ? "|" : "<") + kind + itemSize;
    }

    /**
     * Tells whether NumPy has this type, i.e. whether {@link #numpyDescr()} succeeds.
     *
     * @return false for {@link #BFLOAT16}, {@link #FLOAT8_E4M3} and {@link #FLOAT8_E5M2}, true
     *     for all other types
     */
    public boolean hasNumpyDescr() {
        return kind != NO_NUMPY_KIND;
    }

    /**
     * Returns the name of this type in a safetensors header's {@code "dtype"} field (the
     * reference implementation's {@code Dtype} enum), also used by raw-shard sidecars and
     * dataset manifests.
     *
     * @return one of {@code F64, F32, F16, BF16, F8_E4M3, F8_E5M2, I64, I32, I16, I8, U64, U32,
     *     U16, U8, BOOL}
     */
    public String safetensorsName() {
        return safetensorsName;
    }

    /**
     * Parses a safetensors dtype name. Names are case-sensitive, as in the reference
     * implementation.
     *
     * @param name the name, e.g. {@code "F32"} or {@code "BF16"}
     * @param file the file it was read from, for the exception message (may be {@code null})
     * @param offset byte offset of the name in the file, for the exception message
     * @return the element type
     * @throws FormatException if {@code name} is null or not one of the names of
     *     {@link #safetensorsName()}; safetensors types this module does not support (e.g.
     *     {@code F8_E8M0}, {@code F4}, {@code C64}) are reported as "unknown dtype" with the list
     *     of supported names
     */
    public static DType fromSafetensorsName(String name, Path file, long offset)
            throws FormatException {
        if (name == null) {
            throw new FormatException(file, offset, "a safetensors dtype name", "nothing");
        }
        for (DType t : values()) {
            if (t.safetensorsName.equals(name)) {
                return t;
            }
        }
        throw new FormatException(file, offset, "unknown dtype '" + abbreviate(name)
                + "': only the safetensors dtypes " + Arrays.stream(values())
                        .map(DType::safetensorsName).collect(Collectors.joining(", "))
                + " are supported");
    }

    private static String abbreviate(String s) {
        return s.length() <= 64 ? s : s.substring(0, 64) + "... (" + s.length() + " chars)";
    }

    /**
     * Parses a NumPy descr string.
     *
     * <p>Accepted byte orders: {@code '<'} and {@code '|'}; {@code '='} (native, which is
     * little-endian on every platform this loader supports); no byte-order character (native, as
     * {@code numpy.dtype("f4")} accepts); and, for single-byte types only, any byte-order
     * character including {@code '>'}.
     *
     * @param descr the descr, e.g. {@code "<f4"}
     * @param file the file it was read from, for the exception message (may be {@code null})
     * @param offset byte offset of the descr in the file, for the exception message
     * @return the element type
     * @throws FormatException if the descr is big-endian with an item size above 1 (the message
     *     names the descr and suggests {@code arr.astype('<..')}), names an unsupported kind
     *     (object, byte or unicode string, void, structured, complex, datetime64, timedelta64;
     *     named in the message), or is not a recognised descr at all ("unknown dtype")
     */
    public static DType fromNumpyDescr(String descr, Path file, long offset) throws FormatException {
        if (descr == null) {
            throw new FormatException(file, offset, "a dtype descr string", "nothing");
        }
        String body = descr;
        char order = '=';
        if (!body.isEmpty() && "<>|=".indexOf(body.charAt(0)) >= 0) {
            order = body.charAt(0);
            body = body.substring(1);
        }
        String unsupported = unsupportedKind(descr, body);
        if (unsupported != null) {
            throw new FormatException(file, offset, unsupported + " '" + descr
                    + "' is not supported: only " + supportedList() + " are");
        }
        DType match = null;
        for (DType t : values()) {
            if (t.hasNumpyDescr() && body.equals(String.valueOf(t.kind) + t.itemSize)) {
                match = t;
            }
        }
        if (match == null) {
            throw new FormatException(file, offset, "unknown dtype '" + descr
                    + "': only " + supportedList() + " are supported");
        }
        if (order == '>' && match.itemSize > 1) {
            throw new FormatException(file, offset, "big-endian dtype '" + descr
                    + "' is not supported: convert with arr.astype('" + match.numpyDescr() + "')");
        }
        return match;
    }

    /** Names the kind of a NumPy descr this module refuses on purpose, or null. */
    private static String unsupportedKind(String descr, String body) {
        if (descr.startsWith("[") || descr.startsWith("(") || descr.startsWith("{")) {
            return "structured dtype";
        }
        if (body.isEmpty()) {
            return null;
        }
        String rest = body.substring(1);
        if (!rest.isEmpty() && !Character.isDigit(rest.charAt(0)) && rest.charAt(0) != '[') {
            return null; // e.g. "float32": a name, not a descr; reported as unknown
        }
        return switch (body.charAt(0)) {
            case 'O' -> "object dtype";
            case 'S', 'a' -> "byte-string dtype";
            case 'U' -> "unicode string dtype";
            case 'V' -> "void (raw bytes or structured) dtype";
            case 'c' -> "complex dtype";
            case 'M' -> "datetime64 dtype";
            case 'm' -> "timedelta64 dtype";
            default -> null;
        };
    }

    private static String supportedList() {
        return Arrays.stream(values()).filter(DType::hasNumpyDescr)
                .map(t -> "'" + t.numpyDescr() + "'")
                .collect(Collectors.joining(", "));
    }
}
