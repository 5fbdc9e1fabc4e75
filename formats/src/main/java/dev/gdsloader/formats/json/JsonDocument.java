package dev.gdsloader.formats.json;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.NullNode;
import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A JSON document whose top level is an object, parsed with Jackson into one
 * {@link JsonNode} tree per member, with the byte offset of every member value and of every
 * element of top-level arrays, so that {@link FormatException}s can point into the file.
 *
 * <p>Support code shared by this module's safetensors, raw-shard and manifest readers; not a
 * stable API. Parsing is strict JSON (RFC 8259: no comments, no trailing commas, no
 * {@code NaN}); duplicate keys at any level, content after the top-level object other than
 * whitespace, invalid UTF-8, and unpaired UTF-16 surrogates in keys or strings are refused. The
 * Jackson limits on string and name length are lifted (callers bound the document size);
 * nesting depth stays limited to Jackson's default of 1000, which no valid document approaches.
 *
 * <p>Instances are immutable after {@link #parse} and thread-safe; the {@link JsonNode}s
 * returned must not be modified.
 */
public final class JsonDocument {

    /** Strict mapper: duplicate keys refused, no length limits (the callers bound the input). */
    private static final ObjectMapper MAPPER = new ObjectMapper(JsonFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxStringLength(Integer.MAX_VALUE)
                    .maxNameLength(Integer.MAX_VALUE)
                    .build())
            .build());

    /** Longest text of a found value quoted in a message. */
    private static final int QUOTE_LIMIT = 60;

    private final Path file;
    private final long base;
    private final Map<String, Member> members;

    /**
     * A member of the top-level object.
     *
     * @param name the key
     * @param value the value, never {@code null} (JSON null is a {@link NullNode})
     * @param offset absolute byte offset of the value's first byte in the file
     * @param elementOffsets when the value is an array, the absolute byte offset of each element;
     *     otherwise empty
     */
    public record Member(String name, JsonNode value, long offset, List<Long> elementOffsets) {

        /**
         * Returns where element {@code i} of an array value starts.
         *
         * @param i element index
         * @return absolute byte offset, or {@link #offset()} when unknown
         */
        public long elementOffset(int i) {
            return i >= 0 && i < elementOffsets.size() ? elementOffsets.get(i) : offset;
        }
    }

    private JsonDocument(Path file, long base, Map<String, Member> members) {
        this.file = file;
        this.base = base;
        this.members = members;
    }

    /**
     * Parses {@code json} as one JSON object.
     *
     * @param json the document bytes, UTF-8; only read, not retained
     * @param file the file it was read from, for exception messages
     * @param base absolute byte offset of {@code json[0]} in the file
     * @param expectedWhat what the document is, for the message when the top level is not an
     *     object, e.g. {@code "a safetensors header (a JSON object)"}
     * @return the document
     * @throws FormatException if the bytes are not valid UTF-8, not valid JSON, not a single
     *     object, or hold a duplicate key; the offset is where the problem was found
     */
    public static JsonDocument parse(byte[] json, Path file, long base, String expectedWhat)
            throws FormatException {
        checkUtf8(json, file, base);
        Map<String, Member> members = new LinkedHashMap<>();
        try (JsonParser p = MAPPER.createParser(json)) {
            JsonToken t = p.nextToken();
            if (t != JsonToken.START_OBJECT) {
                throw new FormatException(file, base + at(p), expectedWhat,
                        t == null ? "no JSON value" : "JSON " + tokenName(t));
            }
            while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                checkSurrogates(name, file, base + at(p));
                p.nextToken();
                long offset = base + at(p);
                JsonNode value;
                List<Long> elementOffsets = List.of();
                if (p.currentToken() == JsonToken.START_ARRAY) {
                    ArrayNode array = JsonNodeFactory.instance.arrayNode();
                    List<Long> offsets = new ArrayList<>();
                    while (p.nextToken() != JsonToken.END_ARRAY) {
                        offsets.add(base + at(p));
                        array.add(readValue(p));
                    }
                    value = array;
                    elementOffsets = Collections.unmodifiableList(offsets);
                } else {
                    value = readValue(p);
                }
                checkStrings(value, file, offset);
                if (members.put(name, new Member(name, value, offset, elementOffsets)) != null) {
                    throw new FormatException(file, offset, "unique keys", "duplicate key '"
                            + quote(name) + "'");
                }
            }
            if (t != JsonToken.END_OBJECT) {
                throw new FormatException(file, base + at(p), "a key or '}'",
                        t == null ? "end of input" : "JSON " + tokenName(t));
            }
            JsonToken after = p.nextToken();
            if (after != null) {
                throw new FormatException(file, base + at(p), "only whitespace after the JSON "
                        + "object", "JSON " + tokenName(after));
            }
        } catch (FormatException e) {
            throw e; // already names the file and offset: not to be prefixed again as malformed JSON
        } catch (JacksonException e) {
            JsonLocation loc = e.getLocation();
            long off = loc == null || loc.getByteOffset() < 0 ? 0 : loc.getByteOffset();
            String where = loc == null || loc.getLineNr() < 1 ? "" : " (line " + loc.getLineNr() + ", column "
                    + loc.getColumnNr() + ")";
            throw new FormatException(file, base + Math.min(off, json.length),
                    "malformed JSON" + where + ": " + jacksonDetail(e), e);
        } catch (java.io.IOException e) {
            // Unreachable for an in-memory byte array; reported as malformed input all the same.
            throw new FormatException(file, base, "malformed JSON: " + e.getMessage(), e);
        }
        return new JsonDocument(file, base, Collections.unmodifiableMap(members));
    }

    /** Jackson's source locations ({@code [Source: REDACTED ...; line: 1, column: 29]}), to say as line and column. */
    private static final java.util.regex.Pattern JACKSON_SOURCE = java.util.regex.Pattern.compile(
            "\\[Source: [^\\]]*?line: (\\d+), column: (\\d+)\\]");

    /** Jackson's message without its source descriptions or line breaks, e.g. "was expecting a colon ...". */
    private static String jacksonDetail(JacksonException e) {
        String m = e.getOriginalMessage() == null ? e.getClass().getSimpleName() : e.getOriginalMessage();
        m = JACKSON_SOURCE.matcher(m).replaceAll("line $1, column $2");
        return m.replaceAll("\\s*\\R\\s*", " ").trim();
    }

    private static JsonNode readValue(JsonParser p) throws java.io.IOException {
        JsonNode node = MAPPER.readTree(p);
        return node == null ? NullNode.getInstance() : node;
    }

    private static long at(JsonParser p) {
        long off = p.currentTokenLocation().getByteOffset();
        return Math.max(off, 0);
    }

    private static String tokenName(JsonToken t) {
        return switch (t) {
            case START_ARRAY -> "array";
            case START_OBJECT -> "object";
            case VALUE_STRING -> "string";
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> "number";
            case VALUE_TRUE, VALUE_FALSE -> "boolean";
            case VALUE_NULL -> "null";
            default -> t.asString() == null ? t.name() : "'" + t.asString() + "'";
        };
    }

    /** Refuses invalid UTF-8 (overlong forms, surrogates, code points above U+10FFFF). */
    private static void checkUtf8(byte[] b, Path file, long base) throws FormatException {
        int i = 0;
        while (i < b.length) {
            int c = b[i] & 0xFF;
            if (c < 0x80) {
                i++;
                continue;
            }
            int n;
            int min;
            if (c >= 0xC2 && c <= 0xDF) {
                n = 1;
                min = 0x80;
            } else if (c >= 0xE0 && c <= 0xEF) {
                n = 2;
                min = 0x800;
            } else if (c >= 0xF0 && c <= 0xF4) {
                n = 3;
                min = 0x10000;
            } else {
                throw badUtf8(file, base + i, c);
            }
            if (i + n >= b.length) {
                throw new FormatException(file, base + i, "valid UTF-8",
                        "a sequence cut short by the end of the text");
            }
            int cp = c & (0x3F >> n);
            for (int k = 1; k <= n; k++) {
                int cc = b[i + k] & 0xFF;
                if ((cc & 0xC0) != 0x80) {
                    throw badUtf8(file, base + i + k, cc);
                }
                cp = (cp << 6) | (cc & 0x3F);
            }
            if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
                throw new FormatException(file, base + i, "valid UTF-8", String.format(
                        "an invalid encoding of U+%04X", cp));
            }
            i += n + 1;
        }
    }

    private static FormatException badUtf8(Path file, long offset, int b) {
        return new FormatException(file, offset, "valid UTF-8", String.format("byte 0x%02x", b));
    }

    /** Refuses unpaired surrogates (from {@code \\uD800} escapes) in all strings and keys. */
    private static void checkStrings(JsonNode node, Path file, long offset)
            throws FormatException {
        // Iterative: nesting is bounded by Jackson's depth limit, but no recursion is needed.
        List<JsonNode> stack = new ArrayList<>();
        stack.add(node);
        while (!stack.isEmpty()) {
            JsonNode n = stack.removeLast();
            if (n.isTextual()) {
                checkSurrogates(n.textValue(), file, offset);
            } else if (n.isObject()) {
                for (Map.Entry<String, JsonNode> e : n.properties()) {
                    checkSurrogates(e.getKey(), file, offset);
                    stack.add(e.getValue());
                }
            } else if (n.isArray()) {
                for (JsonNode child : n) {
                    stack.add(child);
                }
            }
        }
    }

    private static void checkSurrogates(String s, Path file, long offset) throws FormatException {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length()
                    && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new FormatException(file, offset, "strings of Unicode scalar values",
                        String.format("an unpaired surrogate \\u%04x escape", (int) c));
            }
        }
    }

    /**
     * Returns the file the document was read from.
     *
     * @return the file given to {@link #parse}
     */
    public Path file() {
        return file;
    }

    /**
     * Returns where the document starts.
     *
     * @return absolute byte offset of the document's first byte
     */
    public long base() {
        return base;
    }

    /**
     * Returns the members of the top-level object.
     *
     * @return an unmodifiable map in document order
     */
    public Map<String, Member> members() {
        return members;
    }

    /**
     * Returns a required member.
     *
     * @param name the key
     * @param what how the document is called in the message, e.g. {@code "the manifest"}
     * @return the member
     * @throws FormatException if the key is absent (offset: the start of the document)
     */
    public Member require(String name, String what) throws FormatException {
        Member m = members.get(name);
        if (m == null) {
            throw new FormatException(file, base, what + " with a \"" + name + "\" key",
                    "keys " + quoteKeys(members.keySet()));
        }
        return m;
    }

    /**
     * Refuses keys of the top level outside {@code allowed}.
     *
     * @param allowed the permitted keys
     * @param what how the document is called in the message
     * @throws FormatException naming the first unknown key, at its value's offset
     */
    public void refuseUnknownKeys(Set<String> allowed, String what) throws FormatException {
        for (Member m : members.values()) {
            if (!allowed.contains(m.name())) {
                throw new FormatException(file, m.offset(), what + " with only the keys "
                        + quoteKeys(allowed), "unknown key \"" + quote(m.name()) + "\"");
            }
        }
    }

    // ---- value helpers, usable on any node ----

    /**
     * Refuses keys of an object node outside {@code allowed}, and requires all of
     * {@code required}.
     *
     * @param node the object node
     * @param allowed the permitted keys
     * @param required the keys that must be present (a subset of {@code allowed})
     * @param what how the object is called in the message, e.g. {@code "tensor 'w'"}
     * @param file file for the message
     * @param offset offset for the message
     * @throws FormatException if {@code node} is not an object, holds an unknown key or lacks a
     *     required one
     */
    public static void checkKeys(JsonNode node, Set<String> allowed, Set<String> required,
            String what, Path file, long offset) throws FormatException {
        if (!node.isObject()) {
            throw new FormatException(file, offset, what + " to be a JSON object", describe(node));
        }
        for (Map.Entry<String, JsonNode> e : node.properties()) {
            String key = e.getKey();
            if (!allowed.contains(key)) {
                throw new FormatException(file, offset, what + " with only the keys "
                        + quoteKeys(allowed), "unknown key \"" + quote(key) + "\"");
            }
        }
        for (String key : required) {
            if (!node.has(key)) {
                throw new FormatException(file, offset, what + " with a \"" + key + "\" key",
                        "keys " + quoteKeys(node.properties().stream().map(Map.Entry::getKey)
                                .toList()));
            }
        }
    }

    /**
     * Reads a non-negative integer that fits a signed 64-bit long.
     *
     * @param node the value
     * @param what what the value is, for the message, e.g. {@code "\"count\""}
     * @param file file for the message
     * @param offset offset for the message
     * @return the value, {@code >= 0}
     * @throws FormatException if the node is not an integer (floats such as {@code 2.0} included),
     *     is negative or exceeds {@link Long#MAX_VALUE}
     */
    public static long nonNegativeLong(JsonNode node, String what, Path file, long offset)
            throws FormatException {
        if (node == null || !node.isIntegralNumber() || !node.canConvertToLong()
                || node.longValue() < 0) {
            throw new FormatException(file, offset, what + " to be a non-negative integer of at "
                    + "most " + Long.MAX_VALUE, describe(node));
        }
        return node.longValue();
    }

    /**
     * Reads an array of non-negative longs, e.g. a shape.
     *
     * @param node the value
     * @param what what the value is, for the message
     * @param file file for the message
     * @param offset offset for the message
     * @return a fresh array
     * @throws FormatException if the node is not an array or an element is not a non-negative
     *     long (the message names its index)
     */
    public static long[] nonNegativeLongs(JsonNode node, String what, Path file, long offset)
            throws FormatException {
        if (node == null || !node.isArray()) {
            throw new FormatException(file, offset, what + " to be an array of integers",
                    describe(node));
        }
        long[] out = new long[node.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = nonNegativeLong(node.get(i), what + " entry " + i, file, offset);
        }
        return out;
    }

    /**
     * Reads a string.
     *
     * @param node the value
     * @param what what the value is, for the message
     * @param file file for the message
     * @param offset offset for the message
     * @return the string
     * @throws FormatException if the node is not a JSON string
     */
    public static String string(JsonNode node, String what, Path file, long offset)
            throws FormatException {
        if (node == null || !node.isTextual()) {
            throw new FormatException(file, offset, what + " to be a string", describe(node));
        }
        return node.textValue();
    }

    /**
     * Reads a safetensors dtype name (see {@link DType#fromSafetensorsName}).
     *
     * @param node the value
     * @param what what the value is, for the message
     * @param file file for the message
     * @param offset offset for the message
     * @return the type
     * @throws FormatException if the node is not a string or not a known name
     */
    public static DType dtype(JsonNode node, String what, Path file, long offset)
            throws FormatException {
        String name = string(node, what, file, offset);
        try {
            return DType.fromSafetensorsName(name, file, offset);
        } catch (FormatException e) {
            throw new FormatException(file, offset, what + ": " + e.detail(), e);
        }
    }

    /**
     * Describes a found value briefly for a message, never quoting more than 60 characters.
     *
     * @param node the value, or {@code null} for an absent one
     * @return e.g. {@code "the string \"abc\""}, {@code "the number 2.5"},
     *     {@code "an array of 3 elements"}, {@code "an object"}, {@code "null"}, {@code "nothing"}
     */
    public static String describe(JsonNode node) {
        if (node == null || node.isMissingNode()) {
            return "nothing";
        }
        if (node.isNull()) {
            return "null";
        }
        if (node.isTextual()) {
            return "the string \"" + quote(node.textValue()) + "\"";
        }
        if (node.isNumber()) {
            return "the number " + quote(node.asText());
        }
        if (node.isBoolean()) {
            return node.asText();
        }
        if (node.isArray()) {
            return "an array of " + node.size() + " elements";
        }
        if (node.isObject()) {
            return "an object";
        }
        return "a " + node.getNodeType();
    }

    /**
     * Shortens a string for a message to at most 60 characters and escapes control characters.
     *
     * @param s the text
     * @return the text, cut with {@code "... (N chars)"} when longer
     */
    public static String quote(String s) {
        String cut = s.length() <= QUOTE_LIMIT ? s
                : s.substring(0, QUOTE_LIMIT) + "... (" + s.length() + " chars)";
        StringBuilder sb = new StringBuilder(cut.length());
        for (int i = 0; i < cut.length(); i++) {
            char c = cut.charAt(i);
            if (c < 0x20 || c == 0x7F) {
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        return sb.toString();
    }

    private static String quoteKeys(Iterable<String> keys) {
        StringBuilder sb = new StringBuilder("[");
        int n = 0;
        for (String k : keys) {
            if (n == 10) {
                sb.append(", ...");
                break;
            }
            sb.append(n++ == 0 ? "" : ", ").append('"').append(quote(k)).append('"');
        }
        return sb.append(']').toString();
    }
}
