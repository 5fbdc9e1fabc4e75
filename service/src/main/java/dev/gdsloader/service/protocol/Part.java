package dev.gdsloader.service.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.List;

/**
 * One server's part of a dataset in a {@link Cluster}: the {@code "part"} object of a multi-server ticket or command
 * (service/README.md, "Several machines"). In a ticket every field is set; in the command a server sends a peer to ask
 * about the peer's own part (an "ask") only {@code index} and {@code parts} are, the others being -1 / null.
 * Immutable.
 *
 * @param index the part, 0..parts-1 (the owning server's index in the cluster)
 * @param parts the cluster's size
 * @param firstRecord the global index of the part's first record (the records of the parts before it), or -1 in an ask
 * @param records the records the part holds (its server's dataset), or -1 in an ask
 * @param location the owning server's Flight location, {@code grpc+tcp://host:port}, or null in an ask
 */
public record Part(int index, int parts, long firstRecord, long records, String location) {
    private static final List<String> FIELDS = List.of("index", "parts", "firstRecord", "records", "location");

    /**
     * @throws IllegalArgumentException if {@code index} is outside 0..parts-1, or only some of firstRecord, records and
     *     location are set, or a count is negative
     */
    public Part {
        if (parts < 1 || index < 0 || index >= parts) {
            throw new IllegalArgumentException("part " + index + " of " + parts + ": index must be 0..parts-1, parts >= 1");
        }
        boolean ask = firstRecord == -1 && records == -1 && location == null;
        if (!ask && (firstRecord < 0 || records < 0 || location == null)) {
            throw new IllegalArgumentException("part " + index + " of " + parts + " needs 'firstRecord' >= 0, 'records' >= 0 and "
                    + "'location' (or none of them, to ask its server), got " + firstRecord + ", " + records + ", " + location);
        }
    }

    /**
     * @param index the part
     * @param parts the cluster's size
     * @return the part as a peer is asked about it (no records, no location)
     */
    public static Part ask(int index, int parts) {
        return new Part(index, parts, -1, -1, null);
    }

    /** @return true if this is an ask (no records or location yet) */
    public boolean isAsk() {
        return location == null;
    }

    /** @return e.g. {@code part 1 of 3 (records [40, 80) at grpc+tcp://127.0.0.1:8815)}, for messages */
    public String describe() {
        return "part " + index + " of " + parts + (isAsk() ? "" : " (records [" + firstRecord + ", " + (firstRecord + records)
                + ") at " + location + ")");
    }

    /** @return the part as its {@code "part"} JSON object (index and parts only for an ask) */
    public ObjectNode toJson() {
        ObjectNode n = Protocol.JSON.createObjectNode();
        n.put("index", index);
        n.put("parts", parts);
        if (!isAsk()) {
            n.put("firstRecord", firstRecord);
            n.put("records", records);
            n.put("location", location);
        }
        return n;
    }

    /**
     * @param n a {@code "part"} JSON object
     * @return the part
     * @throws IllegalArgumentException naming the field that is unknown, missing or of the wrong type
     */
    public static Part fromJson(JsonNode n) {
        if (!n.isObject()) {
            throw new IllegalArgumentException("request field 'part' must be a JSON object {\"index\": I, \"parts\": N, ...}, got " + n);
        }
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            String f = it.next();
            if (!FIELDS.contains(f)) {
                throw new IllegalArgumentException("unknown field 'part." + f + "': expected one of " + FIELDS);
            }
        }
        JsonNode loc = n.get("location");
        if (loc != null && !loc.isTextual()) {
            throw new IllegalArgumentException("field 'part.location' must be a string, got " + loc);
        }
        return new Part(intField(n, "index"), intField(n, "parts"), longField(n, "firstRecord"), longField(n, "records"),
                loc == null ? null : loc.asText());
    }

    private static int intField(JsonNode n, String f) {
        JsonNode v = n.get(f);
        if (v == null || !v.isIntegralNumber() || !v.canConvertToInt()) {
            throw new IllegalArgumentException("field 'part." + f + "' must be an integer, got " + (v == null ? "nothing" : v));
        }
        return v.intValue();
    }

    private static long longField(JsonNode n, String f) {
        JsonNode v = n.get(f);
        if (v == null) {
            return -1;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw new IllegalArgumentException("field 'part." + f + "' must be an integer, got " + v);
        }
        return v.longValue();
    }

    /**
     * A request with an optional part: the bytes of a multi-server ticket or command are a {@link Request}'s JSON with a
     * {@code "part"} object added. Immutable.
     *
     * @param request the request
     * @param part its part, or null for a single server's request
     */
    public record Ticket(Request request, Part part) {
        /**
         * @param bytes a ticket or command
         * @return the request and its part (null if none)
         * @throws IllegalArgumentException as {@link Request#parse} does, or naming a bad {@code part} field
         */
        public static Ticket parse(byte[] bytes) {
            JsonNode n;
            try {
                n = Protocol.JSON.readTree(bytes);
            } catch (java.io.IOException e) {
                return new Ticket(Request.parse(bytes), null); // Request.parse says what is wrong
            }
            if (n == null || !n.isObject() || !n.has("part")) {
                return new Ticket(Request.parse(bytes), null);
            }
            ObjectNode o = (ObjectNode) n;
            Part p = fromJson(o.remove("part"));
            return new Ticket(Request.parse(o.toString().getBytes(StandardCharsets.UTF_8)), p);
        }

        /** @return the request's JSON with {@code "part"} added (without it if the part is null) */
        public byte[] toBytes() {
            if (part == null) {
                return request.toBytes();
            }
            try {
                ObjectNode o = (ObjectNode) Protocol.JSON.readTree(request.toBytes());
                o.set("part", part.toJson());
                return o.toString().getBytes(StandardCharsets.UTF_8);
            } catch (java.io.IOException e) {
                throw new IllegalStateException("a request did not read back as JSON: " + e.getMessage(), e);
            }
        }
    }
}
