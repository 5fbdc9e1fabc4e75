package dev.gdsloader.formats.manifest;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.FormatException;
import dev.gdsloader.formats.json.JsonDocument;
import dev.gdsloader.formats.registry.ShardFileFormat;
import dev.gdsloader.formats.registry.ShardFormats;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * A dataset's manifest, the file {@value #FILE_NAME} in the dataset's directory, listing its
 * columns and shard files with their sizes and checksums. Its shape follows MosaicML Streaming's
 * {@code index.json} (https://github.com/mosaicml/streaming): a version, then one entry per
 * shard; the content is this project's own:
 * <pre>{@code
 * {"format": "npy", "version": 1,
 *  "columns": [{"name": "images", "dtype": "U8", "record_shape": [28, 28]}],
 *  "shards": [{"file": "images-00000.npy", "column": "images", "records": 10000,
 *              "bytes": 7840128, "crc32c": "0x1234abcd"}]}
 * }</pre>
 * {@code format} is {@code "npy"}, {@code "safetensors"}, {@code "raw"} or {@code "arrow"} ({@link ShardFormat});
 * {@code dtype} is a safetensors dtype name ({@link DType#safetensorsName()}); shard files are
 * relative to the manifest's directory (see {@link ShardEntry#pathProblem(String)}); {@code bytes}
 * is the size of the whole file and {@code crc32c} the CRC-32C ({@link CRC32C}) of all of its
 * bytes, as {@code "0x"} and 8 hex digits. Column names and shard files are unique, and every
 * shard names a declared column. All keys shown are required and no others are allowed.
 *
 * <p>Immutable and thread-safe (the lists are unmodifiable copies).
 *
 * @param format the format of all shard files
 * @param columns the columns, in order
 * @param shards the shard files, in order
 */
public record DatasetManifest(ShardFormat format, List<ColumnEntry> columns,
        List<ShardEntry> shards) {

    /** The manifest's file name inside the dataset directory. */
    public static final String FILE_NAME = "dataset.json";

    /** The manifest version this class reads and writes. */
    public static final int VERSION = 1;

    /** Largest manifest {@link #read} accepts, in bytes (256 MiB: about a million shards). */
    public static final long MANIFEST_CAP = 256L << 20;

    /** Chunk size of {@link #crc32c(Path)}: 1 MiB. */
    static final int CHUNK = 1 << 20;

    private static final ObjectMapper MAPPER = new ObjectMapper();
    private static final Pattern CRC = Pattern.compile("0x[0-9a-fA-F]{1,8}");
    private static final Set<String> TOP_KEYS = Set.of("format", "version", "columns", "shards");
    private static final Set<String> COLUMN_KEYS = Set.of("name", "dtype", "record_shape");
    private static final Set<String> SHARD_KEYS = Set.of("file", "column", "records", "bytes",
            "crc32c");

    /**
     * Validates and copies the lists.
     *
     * @throws NullPointerException if a component or list element is null
     * @throws IllegalArgumentException if two columns share a name, two shards share a file, or
     *     a shard names an undeclared column
     */
    public DatasetManifest {
        Objects.requireNonNull(format, "format");
        columns = List.copyOf(columns);
        shards = List.copyOf(shards);
        Set<String> names = new HashSet<>();
        for (ColumnEntry c : columns) {
            if (!names.add(c.name())) {
                throw new IllegalArgumentException("duplicate column '" + c.name() + "'");
            }
        }
        Set<String> files = new HashSet<>();
        for (ShardEntry s : shards) {
            if (!names.contains(s.column())) {
                throw new IllegalArgumentException("shard " + s.file() + " names column '"
                        + s.column() + "', which is not among the columns " + names);
            }
            if (!files.add(Path.of(s.file()).normalize().toString())) {
                throw new IllegalArgumentException("shard file " + s.file()
                        + " is listed twice");
            }
        }
    }

    /**
     * Starts a manifest whose shard sizes and checksums are computed from the files.
     *
     * @param format the format of all shard files
     * @return a new builder (not thread-safe)
     */
    public static Builder builder(ShardFormat format) {
        return new Builder(format);
    }

    /**
     * Returns a column by name.
     *
     * @param name the column name
     * @return the column
     * @throws IllegalArgumentException if there is none (the message lists the names)
     */
    public ColumnEntry column(String name) {
        for (ColumnEntry c : columns) {
            if (c.name().equals(name)) {
                return c;
            }
        }
        throw new IllegalArgumentException("no column '" + name + "'; the columns are "
                + columns.stream().map(ColumnEntry::name).toList());
    }

    /**
     * Returns the shards of one column.
     *
     * @param column the column name
     * @return the column's shards in manifest order (possibly empty)
     */
    public List<ShardEntry> shardsOf(String column) {
        return shards.stream().filter(s -> s.column().equals(column)).toList();
    }

    // ---------------------------------------------------------------- reading

    /**
     * Reads and validates a manifest.
     *
     * @param datasetJson the manifest file, usually {@code <dir>/dataset.json}; shard paths are
     *     relative to its directory
     * @return the manifest
     * @throws FormatException if the file is larger than {@link #MANIFEST_CAP}, not valid JSON,
     *     has a missing or unknown key, a version other than 1, an unknown format or dtype, a
     *     negative or non-integer count, a malformed checksum, an absolute shard path or one with
     *     a {@code ".."} segment, a duplicate column or shard file, or a shard of an undeclared
     *     column; the message names the file and the byte offset of the offending value
     * @throws IOException if the file cannot be read, or is not a regular file (a FIFO, which would block the
     *     read forever, a socket, a device or a directory)
     */
    public static DatasetManifest read(Path datasetJson) throws IOException {
        byte[] bytes = readCapped(datasetJson);
        Path f = datasetJson;
        JsonDocument doc = JsonDocument.parse(bytes, f, 0, "a dataset manifest (a JSON object)");
        String what = "the manifest";
        doc.refuseUnknownKeys(TOP_KEYS, what);

        JsonDocument.Member version = doc.require("version", what);
        JsonNode v = version.value();
        if (!v.isIntegralNumber() || !v.canConvertToInt() || v.intValue() != VERSION) {
            throw new FormatException(f, version.offset(), "\"version\": " + VERSION,
                    JsonDocument.describe(v));
        }
        JsonDocument.Member fm = doc.require("format", what);
        String formatName = JsonDocument.string(fm.value(), "\"format\"", f, fm.offset());
        ShardFormat format;
        try {
            format = ShardFormat.fromJsonName(formatName);
        } catch (IllegalArgumentException e) {
            throw new FormatException(f, fm.offset(), "\"format\" " + ShardFormat.jsonNames(),
                    JsonDocument.describe(fm.value()));
        }

        JsonDocument.Member cm = doc.require("columns", what);
        requireArray(cm, "\"columns\"", f);
        List<ColumnEntry> columns = new ArrayList<>();
        Map<String, Long> columnOffsets = new HashMap<>();
        for (int i = 0; i < cm.value().size(); i++) {
            long at = cm.elementOffset(i);
            JsonNode c = cm.value().get(i);
            String cw = "column " + i;
            JsonDocument.checkKeys(c, COLUMN_KEYS, COLUMN_KEYS, cw, f, at);
            String name = JsonDocument.string(c.get("name"), cw + " \"name\"", f, at);
            if (name.isEmpty()) {
                throw new FormatException(f, at, cw + " with a non-empty \"name\"",
                        "an empty name");
            }
            if (columnOffsets.putIfAbsent(name, at) != null) {
                throw new FormatException(f, at, "unique column names", cw + " named \""
                        + JsonDocument.quote(name) + "\" again (first at byte offset "
                        + columnOffsets.get(name) + ")");
            }
            DType dtype = JsonDocument.dtype(c.get("dtype"), cw + " \"dtype\"", f, at);
            long[] shape = JsonDocument.nonNegativeLongs(c.get("record_shape"),
                    cw + " \"record_shape\"", f, at);
            try {
                columns.add(new ColumnEntry(name, dtype, shape));
            } catch (IllegalArgumentException e) {
                throw new FormatException(f, at, cw + " \"" + JsonDocument.quote(name) + "\": "
                        + e.getMessage(), e);
            }
        }

        JsonDocument.Member sm = doc.require("shards", what);
        requireArray(sm, "\"shards\"", f);
        List<ShardEntry> shards = new ArrayList<>();
        Map<String, Long> fileOffsets = new HashMap<>();
        for (int i = 0; i < sm.value().size(); i++) {
            long at = sm.elementOffset(i);
            JsonNode s = sm.value().get(i);
            String sw = "shard " + i;
            JsonDocument.checkKeys(s, SHARD_KEYS, SHARD_KEYS, sw, f, at);
            String file = JsonDocument.string(s.get("file"), sw + " \"file\"", f, at);
            String problem = ShardEntry.pathProblem(file);
            if (problem != null) {
                throw new FormatException(f, at, sw + " \"file\" relative to the manifest's "
                        + "directory", "\"" + JsonDocument.quote(file) + "\": " + problem);
            }
            String key = Path.of(file).normalize().toString();
            if (fileOffsets.putIfAbsent(key, at) != null) {
                throw new FormatException(f, at, "each shard file listed once", sw
                        + " listing \"" + JsonDocument.quote(file) + "\" again (first at byte offset "
                        + fileOffsets.get(key) + ")");
            }
            String column = JsonDocument.string(s.get("column"), sw + " \"column\"", f, at);
            if (!columnOffsets.containsKey(column)) {
                throw new FormatException(f, at, sw + " \"column\" naming one of the declared "
                        + "columns " + columns.stream().map(ColumnEntry::name).toList(),
                        "\"" + JsonDocument.quote(column) + "\"");
            }
            long records = JsonDocument.nonNegativeLong(s.get("records"), sw + " \"records\"",
                    f, at);
            long size = JsonDocument.nonNegativeLong(s.get("bytes"), sw + " \"bytes\"", f, at);
            String crcText = JsonDocument.string(s.get("crc32c"), sw + " \"crc32c\"", f, at);
            if (!CRC.matcher(crcText).matches()) {
                throw new FormatException(f, at, sw + " \"crc32c\" as \"0x\" and up to 8 hex "
                        + "digits", "\"" + JsonDocument.quote(crcText) + "\"");
            }
            long crc = Long.parseLong(crcText.substring(2), 16);
            shards.add(new ShardEntry(file, column, records, size, crc));
        }
        return new DatasetManifest(format, columns, shards);
    }

    private static void requireArray(JsonDocument.Member m, String what, Path f)
            throws FormatException {
        if (!m.value().isArray()) {
            throw new FormatException(f, m.offset(), what + " to be an array",
                    JsonDocument.describe(m.value()));
        }
    }

    private static byte[] readCapped(Path file) throws IOException {
        // opening a FIFO for reading blocks until a writer comes: refuse it before the open
        dev.gdsloader.formats.ShardFiles.requireRegularFile(file, "a dataset manifest");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (size > MANIFEST_CAP) {
                throw new FormatException(file, 0, "a manifest of at most " + MANIFEST_CAP
                        + " bytes", size + " bytes");
            }
            ByteBuffer buf = ByteBuffer.allocate((int) size);
            while (buf.hasRemaining()) {
                if (ch.read(buf, buf.position()) < 0) {
                    throw new FormatException(file, buf.position(), size + " bytes",
                            "end of file: the file shrank while being read");
                }
            }
            return buf.array();
        }
    }

    // ---------------------------------------------------------------- writing

    /**
     * Writes (or replaces) {@code <dir>/dataset.json}: through a temporary file in {@code dir}
     * renamed over the manifest (atomically where the file system allows), so readers never see
     * a partial manifest. One shard per line; the directory is created if needed.
     *
     * @param dir the dataset directory
     * @throws IOException if writing fails (the old manifest, if any, is then left in place)
     */
    public void write(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path target = dir.resolve(FILE_NAME);
        byte[] bytes = toJson().getBytes(StandardCharsets.UTF_8);
        dev.gdsloader.formats.AtomicFiles.replace(target, bytes);
    }

    /**
     * Encodes the manifest as {@link #write} writes it.
     *
     * @return the JSON text, ending with a newline
     */
    public String toJson() {
        try {
            StringBuilder sb = new StringBuilder("{\n");
            sb.append("  \"format\": ").append(MAPPER.writeValueAsString(format.jsonName()))
                    .append(",\n  \"version\": ").append(VERSION).append(",\n  \"columns\": [");
            for (int i = 0; i < columns.size(); i++) {
                ColumnEntry c = columns.get(i);
                ObjectNode o = JsonNodeFactory.instance.objectNode();
                o.put("name", c.name());
                o.put("dtype", c.dtype().safetensorsName());
                ArrayNode shape = o.putArray("record_shape");
                for (long d : c.recordShape()) {
                    shape.add(d);
                }
                sb.append(i == 0 ? "\n    " : ",\n    ").append(MAPPER.writeValueAsString(o));
            }
            sb.append(columns.isEmpty() ? "],\n" : "\n  ],\n").append("  \"shards\": [");
            for (int i = 0; i < shards.size(); i++) {
                ShardEntry s = shards.get(i);
                ObjectNode o = JsonNodeFactory.instance.objectNode();
                o.put("file", s.file());
                o.put("column", s.column());
                o.put("records", s.records());
                o.put("bytes", s.bytes());
                o.put("crc32c", s.crc32cHex());
                sb.append(i == 0 ? "\n    " : ",\n    ").append(MAPPER.writeValueAsString(o));
            }
            return sb.append(shards.isEmpty() ? "]\n}\n" : "\n  ]\n}\n").toString();
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e); // not reached for strings and numbers
        }
    }

    // ---------------------------------------------------------------- checking

    /**
     * Recomputes each shard's size and checksum and compares them with the manifest, then asks the shard's format
     * (the registry's verifier, {@link ShardFileFormat#verify}) whether the file holds the listed records, dtype and
     * record shape; lists shard files in {@code dir} the manifest does not list.
     *
     * @param dir the dataset directory the shard paths are relative to
     * @return one line per problem, in manifest order; empty when every file is present with the
     *     listed size, checksum, record count, dtype and record shape. A line names the file and either that it is
     *     missing (or not a regular file), both sizes (the checksum is then not computed), both checksums, that its
     *     name is no registered format's, the first header mismatch, or that it is a shard file the manifest does
     *     not list; at most one line per listed shard
     * @throws IOException if a present file cannot be read
     */
    public List<String> verify(Path dir) throws IOException {
        List<String> problems = new ArrayList<>();
        for (ShardEntry s : shards) {
            Path p = s.resolve(dir);
            if (!Files.isRegularFile(p)) {
                problems.add(p + ": missing (" + (Files.exists(p) ? "not a regular file"
                        : "no such file") + "); the manifest lists " + s.bytes() + " bytes, crc32c "
                        + s.crc32cHex());
                continue;
            }
            long size = Files.size(p);
            if (size != s.bytes()) {
                problems.add(p + ": size " + size + " bytes, but the manifest lists " + s.bytes()
                        + " bytes");
                continue;
            }
            long crc = crc32c(p);
            if (crc != s.crc32c()) {
                problems.add(p + ": crc32c " + ShardEntry.hex(crc) + ", but the manifest lists "
                        + s.crc32cHex());
                continue;
            }
            java.util.Optional<ShardFileFormat> f = ShardFormats.of(p);
            if (f.isEmpty()) {
                problems.add(p + ": not a shard file name the loader reads (expected " + ShardFormats.suffixList()
                        + "), so it would not be loaded");
                continue;
            }
            ColumnEntry c = column(s.column());
            f.get().verify(p, s.column(), s.records(), c.dtype(), c.recordShape()).ifPresent(problems::add);
        }
        Set<Path> listed = new HashSet<>();
        for (ShardEntry s : shards) {
            listed.add(s.resolve(dir).normalize());
        }
        try (java.util.stream.Stream<Path> files = Files.list(dir)) {
            for (Path f : files.sorted().toList()) {
                // hidden files are never shards (the loader skips them: probes, editors' temporary files)
                boolean shardLike = ShardFormats.of(f).isPresent() && !f.getFileName().toString().startsWith(".");
                if (shardLike && !listed.contains(f.normalize())) {
                    problems.add(f + ": a shard file the manifest does not list (it would be ignored when loading)");
                }
            }
        }
        return problems;
    }

    /**
     * Computes the CRC-32C of a whole file, reading it in 1 MiB chunks.
     *
     * @param file the file
     * @return the checksum, {@code 0..0xFFFFFFFF} ({@code 0} for an empty file)
     * @throws IOException if the file cannot be read
     */
    public static long crc32c(Path file) throws IOException {
        CRC32C crc = new CRC32C();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer buf = ByteBuffer.allocate(CHUNK);
            while (ch.read(buf) >= 0) {
                buf.flip();
                crc.update(buf);
                buf.clear();
            }
        }
        return crc.getValue();
    }

    /**
     * Builds a {@link DatasetManifest} from shard files on disk, computing their sizes and
     * checksums. Not thread-safe.
     */
    public static final class Builder {

        private final ShardFormat format;
        private final List<ColumnEntry> columns = new ArrayList<>();
        private final List<String[]> shardSpecs = new ArrayList<>();
        private final List<Long> shardRecords = new ArrayList<>();

        private Builder(ShardFormat format) {
            this.format = Objects.requireNonNull(format, "format");
        }

        /**
         * Declares a column.
         *
         * @param name the column name, not empty, unique
         * @param dtype element type
         * @param recordShape shape of one record in elements; copied
         * @return this builder
         * @throws IllegalArgumentException as for {@link ColumnEntry}
         */
        public Builder column(String name, DType dtype, long... recordShape) {
            columns.add(new ColumnEntry(name, dtype, recordShape));
            return this;
        }

        /**
         * Adds a shard; its size and checksum are computed by {@link #build(Path)}.
         *
         * @param file path relative to the dataset directory (see
         *     {@link ShardEntry#pathProblem(String)})
         * @param column the column it holds
         * @param records number of records in it, {@code >= 0}
         * @return this builder
         * @throws IllegalArgumentException if the path is not acceptable or {@code records} is
         *     negative (checked now, before any file is read)
         */
        public Builder shard(String file, String column, long records) {
            new ShardEntry(file, column, records, 0, 0); // validates
            shardSpecs.add(new String[] {file, column});
            shardRecords.add(records);
            return this;
        }

        /**
         * Reads every shard file to compute its size and CRC-32C (streamed in 1 MiB chunks).
         *
         * @param dir the dataset directory the shard paths are relative to
         * @return the manifest (not yet written: see {@link DatasetManifest#write(Path)})
         * @throws IllegalArgumentException as for the {@link DatasetManifest} constructor
         * @throws IOException if a shard file is missing or cannot be read
         */
        public DatasetManifest build(Path dir) throws IOException {
            return build(dir::resolve);
        }

        /**
         * As {@link #build(Path)}, reading each shard where {@code locate} says it is now (a staged file not yet
         * renamed to its listed name: {@link dev.gdsloader.formats.StagedFiles#locate}).
         *
         * @param locate maps a shard's listed path (relative to the dataset directory) to the file to read
         * @return the manifest, listing the shards by their given paths
         * @throws IllegalArgumentException as for the {@link DatasetManifest} constructor
         * @throws IOException if a shard file is missing or cannot be read
         */
        public DatasetManifest build(java.util.function.Function<String, Path> locate) throws IOException {
            List<ShardEntry> placeholders = new ArrayList<>();
            for (int i = 0; i < shardSpecs.size(); i++) {
                placeholders.add(new ShardEntry(shardSpecs.get(i)[0], shardSpecs.get(i)[1],
                        shardRecords.get(i), 0, 0));
            }
            new DatasetManifest(format, columns, placeholders); // validates before reading files
            List<ShardEntry> shards = new ArrayList<>();
            for (int i = 0; i < shardSpecs.size(); i++) {
                String[] spec = shardSpecs.get(i);
                Path p = locate.apply(spec[0]);
                shards.add(new ShardEntry(spec[0], spec[1], shardRecords.get(i), Files.size(p),
                        crc32c(p)));
            }
            return new DatasetManifest(format, columns, shards);
        }
    }
}
