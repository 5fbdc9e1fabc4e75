package dev.gdsloader.formats.manifest;

import java.util.Arrays;
import java.util.List;

/**
 * The shard file formats a {@link DatasetManifest} can list. Immutable and thread-safe.
 */
public enum ShardFormat {
    /** NumPy {@code .npy} files ({@link dev.gdsloader.formats.npy.NpyShard}). */
    NPY("npy"),
    /** safetensors files ({@link dev.gdsloader.formats.safetensors.SafetensorsFile}). */
    SAFETENSORS("safetensors"),
    /** raw record files with JSON sidecars ({@link dev.gdsloader.formats.raw.RawShard}). */
    RAW("raw"),
    /** Arrow IPC files ({@code .arrow}); every record batch is a shard of each fixed-width column. */
    ARROW("arrow");

    private final String jsonName;

    ShardFormat(String jsonName) {
        this.jsonName = jsonName;
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
