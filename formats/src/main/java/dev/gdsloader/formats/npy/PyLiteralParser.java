package dev.gdsloader.formats.npy;

import dev.gdsloader.formats.FormatException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.Charset;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Parses the subset of Python literal syntax that NumPy writes in {@code .npy} headers: a dict
 * literal whose values are strings, ints, {@code True}/{@code False}/{@code None}, tuples, lists
 * and nested dicts (what {@code ast.literal_eval} in {@code numpy.lib.format} accepts for the
 * values NumPy ever writes).
 *
 * <p>Parsing works on the raw header bytes, so that error offsets are byte offsets in the file;
 * string literal contents are decoded with the given charset (ISO-8859-1 for format versions 1.0
 * and 2.0, UTF-8 for 3.0). Values are returned as {@link String}, {@link Long}, {@link Boolean},
 * {@link #NONE}, {@link Tuple}, {@link PyList} and {@link Map} of {@link Entry}.
 *
 * <p>Not thread-safe; one instance parses one header. Nesting deeper than {@value #MAX_DEPTH} is
 * refused so hostile headers cannot overflow the stack.
 */
final class PyLiteralParser {

    /** Deepest nesting of brackets accepted. */
    static final int MAX_DEPTH = 32;

    /** The Python {@code None} value. */
    static final Object NONE = new Object() {
        @Override
        public String toString() {
            return "None";
        }
    };

    /**
     * A parsed Python tuple.
     *
     * @param items the elements, in order
     */
    record Tuple(List<Object> items) {
    }

    /**
     * A parsed Python list.
     *
     * @param items the elements, in order
     */
    record PyList(List<Object> items) {
    }

    /**
     * A value together with the file offset where its literal begins.
     *
     * @param value the parsed value
     * @param offset byte offset in the file of the value's first character
     */
    record Entry(Object value, long offset) {
    }

    private final byte[] bytes;
    private final int end;
    private final long baseOffset;
    private final Path file;
    private final Charset charset;
    private final boolean allowLongSuffix;
    private int pos;
    private int depth;

    /**
     * Creates a parser over {@code bytes[0..end)}.
     *
     * @param bytes the header bytes
     * @param end number of bytes of {@code bytes} to parse
     * @param baseOffset file offset of {@code bytes[0]}
     * @param file the file, for error messages
     * @param charset charset of string literal contents
     * @param allowLongSuffix accept Python 2 long literals such as {@code 3L} (format 1.0/2.0,
     *     as {@code numpy.lib.format._filter_header} does)
     */
    PyLiteralParser(byte[] bytes, int end, long baseOffset, Path file, Charset charset,
            boolean allowLongSuffix) {
        this.bytes = bytes;
        this.end = end;
        this.baseOffset = baseOffset;
        this.file = file;
        this.charset = charset;
        this.allowLongSuffix = allowLongSuffix;
    }

    /**
     * Parses a dict literal that, apart from surrounding whitespace, makes up all the input.
     *
     * @return the dict's entries, keyed by their string keys, in file order
     * @throws FormatException on any syntax error, non-string or duplicate key, or trailing text
     */
    Map<String, Entry> parseDict() throws FormatException {
        skipWhitespace();
        if (peek() != '{') {
            throw error("a '{' starting the header dict");
        }
        Map<String, Entry> dict = dict();
        skipWhitespace();
        if (pos != end) {
            throw error("only whitespace after the header dict");
        }
        return dict;
    }

    private Object value() throws FormatException {
        skipWhitespace();
        int c = peek();
        return switch (c) {
            case '{' -> dict();
            case '(' -> tupleOrParenthesized();
            case '[' -> list();
            case '\'', '"' -> string();
            case '-' -> integer();
            default -> {
                if (c >= '0' && c <= '9') {
                    yield integer();
                }
                if (isNameChar(c)) {
                    yield name();
                }
                throw error("a Python literal");
            }
        };
    }

    private Map<String, Entry> dict() throws FormatException {
        enter();
        pos++; // '{'
        Map<String, Entry> result = new LinkedHashMap<>();
        while (true) {
            skipWhitespace();
            if (peek() == '}') {
                break;
            }
            long keyOffset = offset();
            if (peek() != '\'' && peek() != '"') {
                throw error("a string key or '}'");
            }
            String key = string();
            if (result.containsKey(key)) {
                throw new FormatException(file, keyOffset, "each key once in the header dict",
                        "key '" + key + "' twice");
            }
            skipWhitespace();
            expect(':', "':' after key '" + key + "'");
            skipWhitespace();
            long valueOffset = offset();
            result.put(key, new Entry(value(), valueOffset));
            skipWhitespace();
            if (peek() == ',') {
                pos++;
            } else if (peek() != '}') {
                throw error("',' or '}' in the header dict");
            }
        }
        pos++; // '}'
        depth--;
        return result;
    }

    private Object tupleOrParenthesized() throws FormatException {
        enter();
        pos++; // '('
        skipWhitespace();
        if (peek() == ')') {
            pos++;
            depth--;
            return new Tuple(List.of());
        }
        Object first = value();
        skipWhitespace();
        if (peek() == ')') {
            pos++;
            depth--;
            return first; // "(3)" is the int 3, not a tuple
        }
        expect(',', "',' or ')'");
        List<Object> items = new ArrayList<>();
        items.add(first);
        items.addAll(sequenceRest(')'));
        depth--;
        return new Tuple(List.copyOf(items));
    }

    private PyList list() throws FormatException {
        enter();
        pos++; // '['
        List<Object> items = new ArrayList<>();
        skipWhitespace();
        if (peek() == ']') {
            pos++;
        } else {
            items.add(value());
            skipWhitespace();
            if (peek() == ']') {
                pos++;
            } else {
                expect(',', "',' or ']'");
                items.addAll(sequenceRest(']'));
            }
        }
        depth--;
        return new PyList(items);
    }

    /** Parses {@code [value (',' value)* [',']] close}, after a ','. */
    private List<Object> sequenceRest(char close) throws FormatException {
        List<Object> items = new ArrayList<>();
        while (true) {
            skipWhitespace();
            if (peek() == close) {
                pos++;
                return items;
            }
            items.add(value());
            skipWhitespace();
            if (peek() == ',') {
                pos++;
            } else if (peek() != close) {
                throw error("',' or '" + close + "'");
            }
        }
    }

    private String string() throws FormatException {
        long start = offset();
        int quote = bytes[pos++];
        StringBuilder sb = new StringBuilder();
        int runStart = pos;
        while (true) {
            int c = peek();
            if (c < 0 || c == '\n' || c == '\r') {
                throw new FormatException(file, offset(), "the closing " + (char) quote
                        + " of the string starting at byte offset " + start, describe(c));
            }
            if (c == quote) {
                sb.append(decode(runStart, pos));
                pos++;
                return sb.toString();
            }
            if (c == '\\') {
                sb.append(decode(runStart, pos));
                pos++;
                sb.append(escape());
                runStart = pos;
            } else {
                pos++;
            }
        }
    }

    private char escape() throws FormatException {
        int c = peek();
        pos++;
        return switch (c) {
            case '\\' -> '\\';
            case '\'' -> '\'';
            case '"' -> '"';
            case 'n' -> '\n';
            case 'r' -> '\r';
            case 't' -> '\t';
            case '0' -> '\0';
            case 'x' -> (char) hexDigits(2);
            case 'u' -> (char) hexDigits(4);
            default -> {
                pos--;
                throw error("a supported string escape (\\\\, \\', \\\", \\n, \\r, \\t, \\0, \\xhh,"
                        + " \\uhhhh)");
            }
        };
    }

    private int hexDigits(int n) throws FormatException {
        int v = 0;
        for (int i = 0; i < n; i++) {
            int d = Character.digit(peek(), 16);
            if (peek() < 0 || d < 0) {
                throw error("a hexadecimal digit");
            }
            v = v * 16 + d;
            pos++;
        }
        return v;
    }

    private String decode(int from, int to) throws FormatException {
        CharsetDecoder decoder = charset.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        try {
            return decoder.decode(ByteBuffer.wrap(bytes, from, to - from)).toString();
        } catch (CharacterCodingException e) {
            throw new FormatException(file, baseOffset + from, "a " + charset.name()
                    + " string", "bytes that are not valid " + charset.name());
        }
    }

    private Long integer() throws FormatException {
        long start = offset();
        boolean negative = false;
        if (peek() == '-') {
            negative = true;
            pos++;
            skipWhitespace();
        }
        int first = peek();
        if (first < '0' || first > '9') {
            throw error("a digit");
        }
        int digitsStart = pos;
        long value = 0;
        while (peek() >= '0' && peek() <= '9') {
            int d = peek() - '0';
            // Accumulate negatively so that Long.MIN_VALUE is representable.
            if (value < (Long.MIN_VALUE + d) / 10) {
                throw new FormatException(file, start, "an integer that fits in 64 bits",
                        "'" + text(digitsStart, runEnd(digitsStart)) + "'");
            }
            value = value * 10 - d;
            pos++;
        }
        if (bytes[digitsStart] == '0' && pos - digitsStart > 1 && value != 0) {
            throw new FormatException(file, start, "a Python 3 integer literal",
                    "'" + text(digitsStart, pos) + "' (leading zero)");
        }
        if (allowLongSuffix && (peek() == 'L' || peek() == 'l')) {
            pos++;
        }
        if (isNameChar(peek()) || peek() == '.') {
            throw error("the end of the integer literal");
        }
        if (!negative) {
            if (value == Long.MIN_VALUE) {
                throw new FormatException(file, start, "an integer that fits in 64 bits",
                        "'" + text(digitsStart, pos) + "'");
            }
            value = -value;
        }
        return value;
    }

    private Object name() throws FormatException {
        long start = offset();
        int from = pos;
        while (isNameChar(peek())) {
            pos++;
        }
        String name = text(from, pos);
        return switch (name) {
            case "True" -> true;
            case "False" -> false;
            case "None" -> NONE;
            default -> throw new FormatException(file, start, "True, False, None or another"
                    + " Python literal", "'" + name + "'");
        };
    }

    private void enter() throws FormatException {
        if (++depth > MAX_DEPTH) {
            throw error("brackets nested at most " + MAX_DEPTH + " deep");
        }
    }

    private void expect(char c, String what) throws FormatException {
        if (peek() != c) {
            throw error(what);
        }
        pos++;
    }

    private void skipWhitespace() {
        while (pos < end) {
            byte b = bytes[pos];
            if (b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f') {
                pos++;
            } else {
                return;
            }
        }
    }

    private int peek() {
        return pos < end ? bytes[pos] & 0xFF : -1;
    }

    private long offset() {
        return baseOffset + pos;
    }

    private int runEnd(int from) {
        int i = from;
        while (i < end && bytes[i] >= '0' && bytes[i] <= '9') {
            i++;
        }
        return i;
    }

    private String text(int from, int to) {
        return new String(bytes, from, to - from, java.nio.charset.StandardCharsets.ISO_8859_1);
    }

    private FormatException error(String expected) {
        return new FormatException(file, offset(), expected, describe(peek()));
    }

    private static boolean isNameChar(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    }

    /**
     * Renders a header byte for an error message.
     *
     * @param c the byte (0..255), or -1 for the end of the header
     * @return e.g. {@code "'x'"}, {@code "byte 0x93"} or {@code "the end of the header"}
     */
    static String describe(int c) {
        if (c < 0) {
            return "the end of the header";
        }
        if (c >= 0x20 && c < 0x7F) {
            return "'" + (char) c + "'";
        }
        return String.format("byte 0x%02x", c);
    }
}
