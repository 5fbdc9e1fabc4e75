package dev.gdsloader.formats.manifest;

import dev.gdsloader.formats.registry.ShardFileFormat;
import dev.gdsloader.formats.registry.ShardFormats;
import java.util.Arrays;
import java.util.List;

/**
 * The shard file formats a {@link DatasetManifest}'s {@code "format"} names: the formats the project writes. Each is
 * one entry of the format registry ({@link #fileFormat()}), which reads, writes, inspects and verifies its files.
 * Immutable and thread-safe.
 */
public enum ShardFormat {
    /** NumPy {@code .npy} files ({@link dev.gdsloader.formats.npy.NpyShard}). */
    NPY("npy", ShardFormats.NPY),
    /** safetensors files ({@link dev.gdsloader.formats.safetensors.SafetensorsFile}). */
    SAFETENSORS("safetensors", ShardFormats.SAFETENSORS),
    /** raw record files with JSON sidecars ({@link dev.gdsloader.formats.raw.RawShard}). */
    RAW("raw", ShardFormats.RAW),
    /** Arrow IPC files ({@code .arrow}); every record batch is a shard of each fixed-width column. */
    ARROW("arrow", ShardFormats.ARROW);

    private final String jsonName;
    @SuppressWarnings("ImmutableEnumChecker") // ShardFileFormat implementations are stateless (its contract)
    private final ShardFileFormat fileFormat;

    ShardFormat(String jsonName, ShardFileFormat fileFormat) {
        this.jsonName = jsonName;
        this.fileFormat = fileFormat;
    }

    /**
     * @return the registry's entry for this format: its suffixes, reader, writer, inspector and verifier
     */
    public ShardFileFormat fileFormat() {
        return fileFormat;
    }

    /**
     * @return the suffix this format's writer gives its files, e.g. {@code ".npy"} (the entry's first suffix)
     */
    public String suffix() {
        return fileFormat.suffixes().get(0);
    }

    /**
     * @return the format's writer
     * @throws IllegalStateException if the registry's entry has none (every manifest format is one the project writes)
     */
    public dev.gdsloader.formats.registry.ShardWriter writer() {
        return fileFormat.writer().orElseThrow(() -> new IllegalStateException(jsonName + " has no writer"));
    }

    /**
     * Returns the name used in the manifest's {@code "format"} field.
     *
     * @return {@code "npy"}, {@code "safetensors"}, {@code "raw"} or {@code "arrow"}
     */
    public String jsonName() {
        return jsonName;
    }

    /**
     * Lists every format's manifest name, for messages; derived from the constants so that it cannot drift.
     *
     * @return e.g. {@code "npy", "safetensors", "raw" or "arrow"}
     */
    public static String jsonNames() {
        List<String> q = Arrays.stream(values()).map(f -> '"' + f.jsonName + '"').toList();
        return q.size() == 1 ? q.get(0) : String.join(", ", q.subList(0, q.size() - 1)) + " or " + q.get(q.size() - 1);
    }

    /**
     * Looks a format up by its manifest name (case-sensitive).
     *
     * @param name a {@link #jsonName()}, e.g. {@code "npy"}
     * @return the format
     * @throws IllegalArgumentException if the name is none of these (the message lists them)
     */
    public static ShardFormat fromJsonName(String name) {
        for (ShardFormat f : values()) {
            if (f.jsonName.equals(name)) {
                return f;
            }
        }
        throw new IllegalArgumentException("unknown shard format '" + name + "': expected one of "
                + Arrays.stream(values()).map(ShardFormat::jsonName).toList());
    }
}
