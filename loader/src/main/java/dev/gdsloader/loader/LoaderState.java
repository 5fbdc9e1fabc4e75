package dev.gdsloader.loader;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gdsloader.loader.sampler.SamplerOptions;
import java.util.List;
import java.util.Objects;

/**
 * Where a consumer is in the data: the epoch and how many of its batches the consumer has received, plus
 * the batch size and sampler settings that define the order, so a loader built from it continues with the next
 * record (the order is a pure function of these). Immutable.
 *
 * <p>Serialised as a small JSON object, version {@value #VERSION}, the sampler nested as in
 * {@link LoaderOptions}: {@code {"version":2,"epoch":0,"batchesConsumed":5,"records":100,"batchSize":1,
 * "sampler":{"shuffle":"GLOBAL","seed":5,"blockRecords":1,"rank":0,"worldSize":1,"partition":"EXACT_ONCE",
 * "dropLast":false}}}. {@link #fromJson(String)} also reads version 1, which earlier builds wrote with the
 * sampler's fields flat beside the others.
 *
 * @param epoch the epoch in progress, from 0
 * @param batchesConsumed batches of that epoch the consumer has received
 * @param records records in the dataset (a different dataset cannot resume from this state)
 * @param batchSize records per batch
 * @param sampler the sampler settings, block size resolved (never 0)
 */
@JsonPropertyOrder({"version", "epoch", "batchesConsumed", "records", "batchSize", "sampler"})
@JsonIgnoreProperties(value = "version", allowGetters = true)
public record LoaderState(long epoch, long batchesConsumed, long records, int batchSize, SamplerOptions sampler) {
    /** The JSON format version {@link #toJson()} writes. */
    public static final int VERSION = 2;
    /** The fields of a version-1 state that are not the sampler's. */
    private static final List<String> V1_OWN_FIELDS = List.of("version", "epoch", "batchesConsumed", "records", "batchSize");

    /** @throws NullPointerException if {@code sampler} is null */
    public LoaderState {
        Objects.requireNonNull(sampler, "sampler");
    }

    /** @return {@value #VERSION}, the format version written into the JSON */
    @JsonProperty("version")
    public int version() {
        return VERSION;
    }

    /** @return this state as one line of JSON, format version {@value #VERSION} */
    public String toJson() {
        try {
            return LoaderOptions.JSON.writeValueAsString(this);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot serialise loader state: " + e.getMessage(), e);
        }
    }

    /**
     * @param json what {@link #toJson()} wrote, in this build (version 2) or an earlier one (version 1)
     * @return the state
     * @throws IllegalArgumentException if the text is not a loader state of version 1 or 2 (with the parser's
     *     reason, naming the field)
     */
    public static LoaderState fromJson(String json) {
        try {
            JsonNode n = LoaderOptions.JSON.readTree(json);
            if (n == null || !n.isObject()) {
                throw new IllegalArgumentException("not a loader state: expected a JSON object, got: " + json);
            }
            int version = n.path("version").asInt(-1);
            return switch (version) {
                case 2 -> LoaderOptions.JSON.treeToValue(n, LoaderState.class);
                case 1 -> {
                    ObjectNode sampler = ((ObjectNode) n).deepCopy();
                    sampler.remove(V1_OWN_FIELDS);
                    yield new LoaderState(v1(n, "epoch").asLong(), v1(n, "batchesConsumed").asLong(), v1(n, "records").asLong(),
                            v1(n, "batchSize").asInt(), LoaderOptions.JSON.treeToValue(sampler, SamplerOptions.class));
                }
                default -> throw new IllegalArgumentException("loader state version " + n.get("version")
                        + " is not supported (expected 1 or " + VERSION + ")");
            };
        } catch (JsonProcessingException e) {
            throw LoaderOptions.invalid("loader state", e);
        }
    }

    private static JsonNode v1(JsonNode state, String field) {
        JsonNode v = state.get(field);
        if (v == null || !v.isIntegralNumber()) {
            throw new IllegalArgumentException("not a loader state: version 1 field '" + field + "' is missing or not an integer");
        }
        return v;
    }
}
