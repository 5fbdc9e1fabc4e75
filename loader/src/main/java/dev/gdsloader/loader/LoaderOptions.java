package dev.gdsloader.loader;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import com.fasterxml.jackson.databind.exc.ValueInstantiationException;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.plan.Alignment;
import dev.gdsloader.loader.sampler.SamplerOptions;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * The options of one loader: the one type that {@link GdsLoader.Builder} fronts, that a {@link LoaderState}
 * takes its sampler part from, that the prefetch service's {@code OPEN} request carries as JSON and that the
 * command line builds from its flags. Immutable and thread-safe; start from {@link #defaults()} and change
 * fields with the {@code with...} methods. Every field is checked here, when a copy is made (the canonical
 * constructor, which JSON reading goes through too); the one check that waits for {@link #requireBatchSize()}
 * is that a batch size was set at all.
 *
 * <p>As JSON ({@link #toJson()}, {@link #fromJson(String)}) an object with these component names, the sampler
 * nested: {@code {"batchSize":256,"sampler":{"shuffle":"GLOBAL","seed":7,"blockRecords":0,"rank":0,
 * "worldSize":1,"partition":"EXACT_ONCE","dropLast":false},"path":"AUTO","device":0,"prefetchDepth":4,
 * "ioThreads":4,"maxIoBytes":8388608,"directIo":null,"columns":[],"ioTimeoutMillis":60000,
 * "gdsThresholdBytes":null}}. Reading fills
 * absent fields from {@link #defaults()}, accepts enum names in any case, and refuses unknown fields.
 *
 * @param batchSize records per batch, &gt; 0; 0 while not set yet (a loader refuses to build with it)
 * @param sampler order, shuffle, rank sharding and drop-last
 * @param path requested read path
 * @param device CUDA device ordinal, &ge; 0
 * @param prefetchDepth slots in the ring, 1..{@value #MAX_PREFETCH_DEPTH}; 2 or more overlap reads with the
 *     consumer (double buffering), 1 does not and serves as a baseline
 * @param ioThreads threads issuing reads, 1..{@value #MAX_IO_THREADS}
 * @param maxIoBytes largest single read, bytes: a multiple of 4096 in 4096..{@value #MAX_IO_BYTES}
 * @param directIo whether the staged paths (bounce, host) open shards with {@code O_DIRECT}; null lets
 *     {@link dev.gdsloader.loader.io.DirectIoPolicy} decide from the dataset's size (the options a loader
 *     reports in {@link GdsLoader#options()} hold its decision)
 * @param columns columns to load, in any order; empty for all
 * @param ioTimeoutMillis how long the consumer waits for one batch's reads before the epoch fails naming
 *     the shards and byte ranges, ms, &gt; 0
 * @param gdsThresholdBytes on the GDS path, pieces (runs of consecutive records of one shard) smaller than this go
 *     through pinned staging and one copy per run instead of {@code cuFileRead} (kvikio's {@code gds_threshold}),
 *     bytes, &ge; 0; 0 sends every piece through cuFile; null takes the environment variable
 *     {@code GDSLOADER_GDS_THRESHOLD}, else 1 MiB (the options a loader reports hold the value in force)
 */
public record LoaderOptions(int batchSize, SamplerOptions sampler, ReadPath path, int device, int prefetchDepth,
                            int ioThreads, long maxIoBytes, Boolean directIo, List<String> columns, long ioTimeoutMillis,
                            Long gdsThresholdBytes) {
    /** Most slots a ring may have. */
    public static final int MAX_PREFETCH_DEPTH = 64;
    /** Most I/O threads. */
    public static final int MAX_IO_THREADS = 256;
    /** Largest single read, bytes (1 GiB). */
    public static final long MAX_IO_BYTES = 1L << 30;
    /**
     * Records per batch when none is given: 256, the default batch size of PyTorch's ImageNet training example
     * ({@code pytorch/examples imagenet/main.py --batch-size}), a common size for image classification that fits a
     * GPU's memory for 224x224x3 uint8 records (38.5 MB per batch).
     */
    public static final int DEFAULT_BATCH_SIZE = 256;

    /**
     * @param records a batch size asked for explicitly
     * @return {@code records}
     * @throws IllegalArgumentException if not positive (naming the default, which an unset batch size takes)
     */
    static int requirePositiveBatchSize(int records) {
        if (records < 1) {
            throw new IllegalArgumentException("batchSize must be > 0 records, got " + records
                    + " (leave it unset for the default, " + DEFAULT_BATCH_SIZE + ")");
        }
        return records;
    }

    /** The one JSON mapping of options and saved states: case-insensitive enums, strict numbers, unknown fields refused. */
    static final ObjectMapper JSON = JsonMapper.builder()
            .enable(MapperFeature.ACCEPT_CASE_INSENSITIVE_ENUMS)
            .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES)
            .enable(DeserializationFeature.FAIL_ON_MISSING_CREATOR_PROPERTIES)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .disable(DeserializationFeature.ACCEPT_FLOAT_AS_INT)
            .build();

    /**
     * @throws IllegalArgumentException naming the first invalid option, its unit and the value given
     * @throws NullPointerException naming {@code sampler}, {@code path} or {@code columns} if null
     */
    public LoaderOptions {
        if (batchSize < 0) {
            throw new IllegalArgumentException("batchSize must be > 0 records, got " + batchSize);
        }
        Objects.requireNonNull(sampler, "option 'sampler' is null");
        Objects.requireNonNull(path, "option 'path' is null");
        if (device < 0) {
            throw new IllegalArgumentException("device must be >= 0, got " + device);
        }
        if (prefetchDepth < 1 || prefetchDepth > MAX_PREFETCH_DEPTH) {
            throw new IllegalArgumentException("prefetchDepth must be 1.." + MAX_PREFETCH_DEPTH + " slots, got " + prefetchDepth);
        }
        if (ioThreads < 1 || ioThreads > MAX_IO_THREADS) {
            throw new IllegalArgumentException("ioThreads must be 1.." + MAX_IO_THREADS + ", got " + ioThreads);
        }
        if (maxIoBytes <= 0 || !Alignment.isAligned(maxIoBytes) || maxIoBytes > MAX_IO_BYTES) {
            throw new IllegalArgumentException("maxIoBytes must be a multiple of 4096 in 4096.." + MAX_IO_BYTES
                    + " bytes, got " + maxIoBytes);
        }
        Objects.requireNonNull(columns, "option 'columns' is null (use an empty list for all columns)");
        columns = List.copyOf(columns);
        if (ioTimeoutMillis <= 0) {
            throw new IllegalArgumentException("ioTimeoutMillis must be > 0 ms, got " + ioTimeoutMillis);
        }
        if (gdsThresholdBytes != null && gdsThresholdBytes < 0) {
            throw new IllegalArgumentException("gdsThresholdBytes must be >= 0 bytes (0: every piece through cuFile), got "
                    + gdsThresholdBytes);
        }
    }

    /**
     * @return batch size not set (0), sequential order with block size = the batch size, rank 0 of 1,
     *     {@link ReadPath#AUTO}, device 0, prefetch depth 4, 4 I/O threads, 8 MiB reads, {@code O_DIRECT}
     *     decided by the dataset's size, all columns, 60 s I/O timeout
     */
    public static LoaderOptions defaults() {
        return new LoaderOptions(0, SamplerOptions.sequential(), ReadPath.AUTO, 0, 4, 4, 8L << 20, null, List.of(), 60_000, null);
    }

    /**
     * @param records records per batch, &gt; 0
     * @return a copy with this batch size
     * @throws IllegalArgumentException if {@code records < 0}
     */
    public LoaderOptions withBatchSize(int records) {
        return new LoaderOptions(records, sampler, path, device, prefetchDepth, ioThreads, maxIoBytes, directIo, columns, ioTimeoutMillis, gdsThresholdBytes);
    }

    /**
     * @param options sampler settings
     * @return a copy with these sampler settings
     */
    public LoaderOptions withSampler(SamplerOptions options) {
        return new LoaderOptions(batchSize, options, path, device, prefetchDepth, ioThreads, maxIoBytes, directIo, columns, ioTimeoutMillis, gdsThresholdBytes);
    }

    /**
     * @param requested requested read path
     * @return a copy with this path
     */
    public LoaderOptions withPath(ReadPath requested) {
        return new LoaderOptions(batchSize, sampler, requested, device, prefetchDepth, ioThreads, maxIoBytes, directIo, columns, ioTimeoutMillis, gdsThresholdBytes);
    }

    /**
     * @param ordinal CUDA device ordinal, &ge; 0
     * @return a copy with this device
     * @throws IllegalArgumentException if negative
     */
    public LoaderOptions withDevice(int ordinal) {
        return new LoaderOptions(batchSize, sampler, path, ordinal, prefetchDepth, ioThreads, maxIoBytes, directIo, columns, ioTimeoutMillis, gdsThresholdBytes);
    }

    /**
     * @param slots slots in the ring, 1..{@value #MAX_PREFETCH_DEPTH}
     * @return a copy with this prefetch depth
     * @throws IllegalArgumentException if out of range
     */
    public LoaderOptions withPrefetchDepth(int slots) {
        return new LoaderOptions(batchSize, sampler, path, device, slots, ioThreads, maxIoBytes, directIo, columns, ioTimeoutMillis, gdsThresholdBytes);
    }

    /**
     * @param threads threads issuing reads, 1..{@value #MAX_IO_THREADS}
     * @return a copy with this many I/O threads
     * @throws IllegalArgumentException if out of range
     */
    public LoaderOptions withIoThreads(int threads) {
        return new LoaderOptions(batchSize, sampler, path, device, prefetchDepth, threads, maxIoBytes, directIo, columns, ioTimeoutMillis, gdsThresholdBytes);
    }

    /**
     * @param bytes largest single read, a multiple of 4096 in 4096..{@value #MAX_IO_BYTES}
     * @return a copy with this read size
     * @throws IllegalArgumentException if not such a multiple
     */
    public LoaderOptions withMaxIoBytes(long bytes) {
        return new LoaderOptions(batchSize, sampler, path, device, prefetchDepth, ioThreads, bytes, directIo, columns, ioTimeoutMillis, gdsThresholdBytes);
    }

    /**
     * @param direct whether staged paths read with {@code O_DIRECT}; null: decided by the dataset's size
     * @return a copy with this choice
     */
    public LoaderOptions withDirectIo(Boolean direct) {
        return new LoaderOptions(batchSize, sampler, path, device, prefetchDepth, ioThreads, maxIoBytes, direct, columns, ioTimeoutMillis, gdsThresholdBytes);
    }

    /**
     * @param names columns to load; empty for all
     * @return a copy with this column selection
     */
    public LoaderOptions withColumns(List<String> names) {
        return new LoaderOptions(batchSize, sampler, path, device, prefetchDepth, ioThreads, maxIoBytes, directIo, names, ioTimeoutMillis, gdsThresholdBytes);
    }

    /**
     * @param millis how long the consumer waits for one batch's reads, ms, &gt; 0
     * @return a copy with this timeout
     * @throws IllegalArgumentException if not positive
     */
    public LoaderOptions withIoTimeoutMillis(long millis) {
        return new LoaderOptions(batchSize, sampler, path, device, prefetchDepth, ioThreads, maxIoBytes, directIo, columns, millis, gdsThresholdBytes);
    }

    /**
     * @param bytes the GDS path's threshold (see {@link #gdsThresholdBytes()}), &ge; 0, or null for the environment's
     *     or the default
     * @return a copy with this threshold
     * @throws IllegalArgumentException if negative
     */
    public LoaderOptions withGdsThresholdBytes(Long bytes) {
        return new LoaderOptions(batchSize, sampler, path, device, prefetchDepth, ioThreads, maxIoBytes, directIo, columns,
                ioTimeoutMillis, bytes);
    }

    /**
     * @return these options
     * @throws IllegalArgumentException naming {@code batchSize} if it was not set
     */
    public LoaderOptions requireBatchSize() {
        if (batchSize == 0) {
            throw new IllegalArgumentException("batchSize must be > 0 records, got 0 (not set)");
        }
        return this;
    }

    /** @return these options as one line of JSON, every field written */
    public String toJson() {
        try {
            return JSON.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise loader options: " + e.getMessage(), e);
        }
    }

    /**
     * @param json a JSON object of options, as {@link #toJson()} writes; absent fields (also inside
     *     {@code "sampler"}) take the values of {@link #defaults()}
     * @return the options
     * @throws IllegalArgumentException if the text is not a JSON object, names an unknown option, or an option
     *     has a wrong type or an invalid value; the message names the option
     */
    public static LoaderOptions fromJson(String json) {
        JsonNode given;
        try {
            given = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw invalid("loader options", e);
        }
        if (given == null || !given.isObject()) {
            throw new IllegalArgumentException("loader options must be a JSON object, got: " + json);
        }
        ObjectNode merged = JSON.valueToTree(defaults());
        merge(merged, given);
        try {
            return JSON.treeToValue(merged, LoaderOptions.class);
        } catch (JsonProcessingException e) {
            throw invalid("loader options", e);
        }
    }

    private static void merge(ObjectNode into, JsonNode from) {
        for (var e : from.properties()) {
            if (into.get(e.getKey()) instanceof ObjectNode inner && e.getValue().isObject()) {
                merge(inner, e.getValue());
            } else {
                into.set(e.getKey(), e.getValue());
            }
        }
    }

    /**
     * Turns a Jackson failure into an {@link IllegalArgumentException} that names the option: the field path
     * for wrong types and unknown fields, the constructor's own message for invalid values.
     *
     * @param what what was being read, e.g. "loader options"
     * @param e the failure
     * @return the exception to throw
     */
    static IllegalArgumentException invalid(String what, JsonProcessingException e) {
        String field = e instanceof JsonMappingException m
                ? m.getPath().stream().map(r -> r.getFieldName() != null ? r.getFieldName() : "[" + r.getIndex() + "]")
                        .collect(Collectors.joining("."))
                : "";
        String where = field.isEmpty() ? "" : " option '" + field + "'";
        if (e instanceof ValueInstantiationException && e.getCause() instanceof RuntimeException c
                && (c instanceof IllegalArgumentException || c instanceof NullPointerException)) {
            return new IllegalArgumentException("bad " + what + (where.isEmpty() ? "" : ":" + where) + ": " + c.getMessage(), e);
        }
        if (e instanceof UnrecognizedPropertyException u) {
            return new IllegalArgumentException("bad " + what + ": unknown option '" + field + "' (known: "
                    + new java.util.TreeSet<>(u.getKnownPropertyIds().stream().map(String::valueOf).toList()) + ")", e);
        }
        return new IllegalArgumentException("bad " + what + (where.isEmpty() ? "" : ":" + where) + ": " + e.getOriginalMessage(), e);
    }
}
