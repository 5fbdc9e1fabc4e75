package dev.gdsloader.service.server;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gdsloader.service.protocol.BearerAuth;
import dev.gdsloader.service.protocol.ErrorCodes;
import dev.gdsloader.service.protocol.Part;
import dev.gdsloader.service.protocol.Protocol;
import dev.gdsloader.service.protocol.Request;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.arrow.flight.CallOptions;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;

/**
 * {@code GetFlightInfo} of a server in a {@link Cluster} (service/README.md, "Several machines"): asks every part's
 * server about its own part (this server answers for itself without a call; the others through a
 * {@code GetFlightInfo} whose command carries {@code "part": {"index": j, "parts": N}}, under a deadline), numbers the
 * parts' records one after another in cluster order (part j's first record = the records of parts 0..j-1), and
 * answers with one endpoint per part this rank has batches in, in part order: its ticket the request with the full
 * {@link Part}, its location the part's server. Stateless; thread-safe; a Flight client per peer call, closed after it.
 * A cluster over TLS ({@link Cluster#tls()}) calls its peers over TLS, verifying each peer's certificate and host name
 * against {@link Peers}' trusted certificates.
 */
final class ClusterInfo {
    /** Deadline of a peer's GetFlightInfo, ms. */
    static final long PEER_TIMEOUT_MILLIS = 10_000;

    /**
     * How this server calls the other members: the bearer token it sends, and over TLS the certificates it trusts and
     * the certificate it presents (its own, for members that require client certificates). Immutable; thread-safe.
     */
    static final class Peers {
        private final String token;
        private final byte[] trusted;
        private final byte[] certificate;
        private final byte[] key;

        /**
         * @param token the bearer token the other members admit, or null for none
         * @param trustedPem PEM certificates a peer's certificate must chain to (the members' shared certificate, or
         *     their CA), or null to call the peers in plaintext; copied
         * @param certificatePem this member's PEM certificate chain, presented as its client certificate over TLS, or
         *     null; copied
         * @param keyPem the chain's PEM PKCS#8 key, or null; copied
         */
        Peers(String token, byte[] trustedPem, byte[] certificatePem, byte[] keyPem) {
            this.token = token;
            this.trusted = trustedPem == null ? null : trustedPem.clone();
            this.certificate = certificatePem == null ? null : certificatePem.clone();
            this.key = keyPem == null ? null : keyPem.clone();
        }

        /** @return a Flight client for a peer's location, with the token and TLS trust set */
        FlightClient connect(BufferAllocator a, Location loc) {
            FlightClient.Builder fb = FlightClient.builder(a, loc);
            if (trusted != null) {
                fb.useTls().trustedCertificates(new ByteArrayInputStream(trusted));
                if (certificate != null && key != null) {
                    fb.clientCertificate(new ByteArrayInputStream(certificate), new ByteArrayInputStream(key));
                }
            }
            if (token != null) {
                fb.intercept(BearerAuth.client(token));
            }
            return fb.build();
        }
    }

    private ClusterInfo() {
    }

    /**
     * @param cluster the cluster, this server being {@code cluster.self()}
     * @param descriptor the client's descriptor (echoed)
     * @param request the client's request (no part)
     * @param local this server's answer for its own part (an ask)
     * @param arrow allocator for the peer clients' buffers
     * @param peers how to call the other members (token, TLS trust)
     * @return the cluster's FlightInfo for the request
     * @throws FlightRuntimeException UNAVAILABLE naming the part and location of a peer that cannot be reached in
     *     time, the peer's own status and message (prefixed by its part and location) for a peer's refusal, or
     *     INVALID_ARGUMENT if the parts' columns differ
     */
    static FlightInfo gather(Cluster cluster, FlightDescriptor descriptor, Request request, Function<Part, FlightInfo> local,
                             BufferAllocator arrow, Peers peers) {
        int n = cluster.size();
        List<FlightInfo> infos = new ArrayList<>(n);
        for (int j = 0; j < n; j++) {
            infos.add(j == cluster.self() ? local.apply(Part.ask(j, n)) : askPeer(cluster, j, request, arrow, peers));
        }
        FlightInfo mine = infos.get(cluster.self());
        List<FlightEndpoint> endpoints = new ArrayList<>();
        ArrayNode parts = Protocol.JSON.createArrayNode();
        long first = 0;
        long rankRecords = 0;
        long batches = 0;
        int slots = 0;
        for (int j = 0; j < n; j++) {
            FlightInfo fi = infos.get(j);
            String loc = cluster.location(j).getUri().toString();
            if (!fi.getSchemaOptional().equals(mine.getSchemaOptional())) {
                throw CallStatus.INVALID_ARGUMENT.withDescription("dataset '" + request.dataset() + "': part " + j + " at " + loc
                        + " has the schema " + fi.getSchemaOptional().map(Object::toString).orElse("(none)") + " but part "
                        + cluster.self() + " has " + mine.getSchemaOptional().map(Object::toString).orElse("(none)")
                        + ": every part must hold the same columns").toRuntimeException();
            }
            JsonNode m = meta(fi, j, loc);
            long partRecords = m.path("datasetRecords").asLong();
            int partBatches = m.path("batchesPerEpoch").asInt();
            Part p = new Part(j, n, first, partRecords, loc);
            ObjectNode e = p.toJson();
            e.put("rankRecords", fi.getRecords());
            e.put("batchesPerEpoch", partBatches);
            e.put("pathTaken", m.path("pathTaken").asText());
            parts.add(e);
            if (partBatches > 0) {
                endpoints.add(FlightEndpoint.builder(new Ticket(new Part.Ticket(request, p).toBytes()), cluster.location(j))
                        .setAppMetadata(e.toString().getBytes(StandardCharsets.UTF_8)).build());
            }
            first += partRecords;
            rankRecords += fi.getRecords();
            batches += partBatches;
            slots = Math.max(slots, m.path("slots").asInt());
        }
        ObjectNode meta = (ObjectNode) meta(mine, cluster.self(), "this server");
        meta.put("batchesPerEpoch", batches);
        meta.put("slots", slots);
        meta.put("datasetRecords", first);
        meta.set("parts", parts);
        return FlightInfo.builder(mine.getSchemaOptional().orElseThrow(), descriptor, endpoints).setRecords(rankRecords)
                .setBytes(-1).setAppMetadata(meta.toString().getBytes(StandardCharsets.UTF_8)).build();
    }

    private static JsonNode meta(FlightInfo fi, int part, String loc) {
        byte[] m = fi.getAppMetadata();
        try {
            JsonNode n = Protocol.JSON.readTree(m == null ? new byte[0] : m);
            if (n == null || !n.isObject() || !n.has("datasetRecords")) {
                throw new java.io.IOException("no 'datasetRecords'");
            }
            return n;
        } catch (java.io.IOException e) {
            throw CallStatus.INTERNAL.withDescription("part " + part + " at " + loc + " answered GetFlightInfo without the "
                    + "app_metadata of a gdsloader prefetch server (" + e.getMessage() + ")").toRuntimeException();
        }
    }

    private static FlightInfo askPeer(Cluster cluster, int j, Request request, BufferAllocator arrow, Peers peers) {
        Location loc = cluster.location(j);
        String where = "part " + j + " of " + cluster.size() + " at " + loc.getUri();
        byte[] command = new Part.Ticket(request, Part.ask(j, cluster.size())).toBytes();
        try (BufferAllocator a = arrow.newChildAllocator("cluster peer " + j, 0, Long.MAX_VALUE)) {
            FlightClient c = peers.connect(a, loc);
            try {
                return c.getInfo(FlightDescriptor.command(command), CallOptions.timeout(PEER_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS));
            } catch (FlightRuntimeException e) {
                FlightStatusCode code = e.status().code();
                if (code == FlightStatusCode.UNAVAILABLE || code == FlightStatusCode.TIMED_OUT) {
                    throw CallStatus.UNAVAILABLE.withDescription(where + " (cluster member '" + cluster.members().get(j)
                            + "') is unreachable: " + ErrorCodes.withCause(e)).toRuntimeException();
                }
                throw e.status().withDescription(where + ": " + e.getMessage()).toRuntimeException();
            } finally {
                try {
                    c.close();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }

    /**
     * Checks that a request's part is this server's.
     *
     * @param cluster this server's cluster, or null
     * @param part the request's part, or null (a request for this server's dataset alone)
     * @throws IllegalArgumentException if there is a part but this server is in no cluster, or owns another part
     */
    static void requireOwn(Cluster cluster, Part part) {
        if (part == null) {
            return;
        }
        if (cluster == null) {
            throw new IllegalArgumentException("the request is for part " + part.index() + " of " + part.parts()
                    + " of a cluster, but this server was started without a cluster (serve --cluster)");
        }
        if (part.parts() != cluster.size() || part.index() != cluster.self()) {
            throw new IllegalArgumentException("the request is for part " + part.index() + " of " + part.parts()
                    + ", but this server is part " + cluster.self() + " of " + cluster.size() + " (" + cluster.members()
                    + "): ask GetFlightInfo for the endpoints");
        }
    }

    /**
     * Checks a stream's part against its session and makes the session number its records globally.
     *
     * @param cluster this server's cluster, or null
     * @param part the ticket's part, or null (the server's dataset alone, record indices its own)
     * @param s the stream's session, over this server's dataset
     * @throws IllegalArgumentException if the part is not this server's ({@link #requireOwn}), is an ask (no records,
     *     no location: tickets come from GetFlightInfo), or holds another number of records than this server's dataset
     *     (the data changed since the client's GetFlightInfo)
     */
    static void streamPart(Cluster cluster, Part part, Session s) {
        requireOwn(cluster, part);
        if (part == null) {
            return;
        }
        if (part.isAsk()) {
            throw new IllegalArgumentException("the ticket's part " + part.index() + " of " + part.parts() + " has no 'firstRecord', "
                    + "'records' and 'location': use the tickets of GetFlightInfo's endpoints");
        }
        long have = s.loader().dataset().recordCount();
        if (have != part.records()) {
            throw new IllegalArgumentException("the ticket is for " + part.describe() + " of '" + s.request().dataset()
                    + "', but this server's dataset holds " + have + " records: the data changed; ask GetFlightInfo again");
        }
        s.offsetRecords(part.firstRecord());
    }
}
