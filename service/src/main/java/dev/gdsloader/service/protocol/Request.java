package dev.gdsloader.service.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gdsloader.loader.LoaderOptions;
import dev.gdsloader.loader.LoaderState;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * A client's request: one epoch of one dataset, as the UTF-8 JSON object that is both the {@code FlightDescriptor}
 * command and the {@code Ticket} ({@code {"version": 4, "dataset": "train", "options": {...}, "delivery": "HOST",
 * "epoch": 0, "state": {...}}}, service/README.md). Immutable.
 *
 * @param dataset dataset directory or shard, relative to the server's root
 * @param options the session loader's options ({@link LoaderOptions} JSON; batch size required by the server)
 * @param delivery how batches travel
 * @param epoch the epoch to stream, from 0
 * @param state where to resume (the state of the last batch received), or null for the epoch's start
 */
public record Request(String dataset, LoaderOptions options, Delivery delivery, long epoch, LoaderState state) {
    private static final List<String> FIELDS = List.of("version", "dataset", "options", "delivery", "epoch", "state");

    /**
     * @throws NullPointerException if dataset, options or delivery is null
     * @throws IllegalArgumentException if {@code epoch} is negative or {@link Long#MAX_VALUE} (no epoch could follow it:
     *     the next state's epoch would overflow)
     */
    public Request {
        Objects.requireNonNull(dataset, "dataset");
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(delivery, "delivery");
        if (epoch < 0 || epoch >= Long.MAX_VALUE) {
            throw new IllegalArgumentException("epoch must be 0.." + (Long.MAX_VALUE - 1) + " (an epoch that another can follow), got "
                    + epoch);
        }
    }

    /**
     * @param s the state to resume after, or null
     * @return this request resuming after {@code s} (its epoch taken from the state when it is not null)
     */
    public Request resumingAfter(LoaderState s) {
        return new Request(dataset, options, delivery, s == null ? epoch : s.epoch(), s);
    }

    /**
     * @param e the epoch
     * @return this request for epoch {@code e}, from its start
     */
    public Request forEpoch(long e) {
        return new Request(dataset, options, delivery, e, null);
    }

    /** @return the request as UTF-8 JSON bytes (the command and ticket) */
    public byte[] toBytes() {
        ObjectNode n = Protocol.JSON.createObjectNode();
        n.put("version", Protocol.VERSION);
        n.put("dataset", dataset);
        n.set("options", Messages.tree(options.toJson()));
        n.put("delivery", delivery.name());
        n.put("epoch", epoch);
        if (state != null) {
            n.set("state", Messages.tree(state.toJson()));
        }
        return n.toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Reads a request, strictly: unknown fields are refused by name, {@code version} must be the integer
     * {@value Protocol#VERSION}.
     *
     * @param bytes a command or ticket
     * @return the request
     * @throws IllegalArgumentException naming what is wrong: not a JSON object, a version other than 3 (naming both),
     *     an unknown field, a field of the wrong type, an invalid option or state
     */
    public static Request parse(byte[] bytes) {
        JsonNode n;
        try {
            n = Protocol.JSON.readTree(bytes);
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("request is not JSON: " + firstLine(e.getMessage()));
        }
        if (n == null || !n.isObject()) {
            throw new IllegalArgumentException("request must be a JSON object {\"version\": " + Protocol.VERSION
                    + ", \"dataset\": NAME, \"options\": {...}, ...}");
        }
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!FIELDS.contains(f)) {
                throw new IllegalArgumentException("unknown request field '" + f + "': expected one of " + FIELDS);
            }
        }
        JsonNode v = n.get("version");
        if (v == null || !v.isIntegralNumber()) {
            throw new IllegalArgumentException("request field 'version' must be the integer " + Protocol.VERSION + ", got "
                    + (v == null ? "nothing" : v.toString()));
        }
        if (!v.canConvertToInt() || v.intValue() != Protocol.VERSION) {
            throw new IllegalArgumentException("protocol version " + v + " is not supported: this server speaks version "
                    + Protocol.VERSION);
        }
        JsonNode d = n.get("dataset");
        if (d != null && !d.isTextual()) {
            throw new IllegalArgumentException("request field 'dataset' must be a string, got " + d);
        }
        JsonNode o = n.get("options");
        if (o != null && !o.isObject()) {
            throw new IllegalArgumentException("request field 'options' must be a JSON object, got " + o);
        }
        LoaderOptions options = LoaderOptions.fromJson(o == null ? "{}" : o.toString());
        JsonNode del = n.get("delivery");
        Delivery delivery = Delivery.HOST;
        if (del != null) {
            try {
                delivery = Delivery.valueOf(del.asText().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("request field 'delivery' must be one of " + List.of(Delivery.values())
                        + ", got " + del);
            }
            if (!del.isTextual()) {
                throw new IllegalArgumentException("request field 'delivery' must be a string, got " + del);
            }
        }
        JsonNode e = n.get("epoch");
        if (e != null && (!e.isIntegralNumber() || !e.canConvertToLong() || e.longValue() < 0 || e.longValue() == Long.MAX_VALUE)) {
            throw new IllegalArgumentException("request field 'epoch' must be an integer 0.." + (Long.MAX_VALUE - 1)
                    + " (an epoch that another can follow), got " + e);
        }
        JsonNode s = n.get("state");
        LoaderState state = null;
        if (s != null && !s.isNull()) {
            if (!s.isObject()) {
                throw new IllegalArgumentException("request field 'state' must be a loader state object, got " + s);
            }
            state = LoaderState.fromJson(s.toString());
        }
        return new Request(d == null ? "" : d.asText(), options, delivery, e == null ? 0 : e.longValue(), state);
    }

    private static String firstLine(String s) {
        return s == null ? "" : s.lines().findFirst().orElse("");
    }
}
