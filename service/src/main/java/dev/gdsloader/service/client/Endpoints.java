package dev.gdsloader.service.client;

import dev.gdsloader.service.protocol.Part;
import dev.gdsloader.service.protocol.Request;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.Location;

/**
 * The endpoints a {@link PrefetchClient} reads, in order, each epoch: one for a single server, one per part (with
 * batches for this rank) for a {@link Cluster} (service/README.md, "Several machines"), and a connection (Flight client) per
 * server location, made when first needed and replaced by {@link #reconnect}. Owns those clients; not thread-safe
 * (the client's one consumer thread).
 */
final class Endpoints implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(Endpoints.class.getName());

    /**
     * One endpoint.
     *
     * @param part the part it reads, or null for a single server
     * @param location the server to read it from
     */
    record Target(Part part, Location location) {
        /** @return e.g. {@code prefetch server 127.0.0.1:8815 (part 1 of 3 (records [40, 80) at grpc+tcp://...))} */
        String describe() {
            URI u = location.getUri();
            return "prefetch server " + u.getHost() + ":" + u.getPort() + (part == null ? "" : " (" + part.describe() + ")");
        }

        /**
         * @param r the request for the epoch (or resuming after a state of this endpoint's stream)
         * @return the ticket bytes: the request, with this endpoint's part
         */
        byte[] ticket(Request r) {
            return new Part.Ticket(r, part).toBytes();
        }
    }

    private final List<Target> targets;
    private final Function<Location, Connection> connect;
    private final Map<URI, Connection> clients = new HashMap<>();

    private Endpoints(List<Target> targets, Function<Location, Connection> connect) {
        this.targets = List.copyOf(targets);
        this.connect = connect;
    }

    /**
     * @param info the server's answer to the client's GetFlightInfo
     * @param asked the server asked (a single server's endpoint is read from it, whatever address it names itself by)
     * @param connect makes a new connection to a location (with the client's TLS and credentials, if any); the
     *     clients it returns are owned here
     * @return the endpoints, in the order of the answer
     * @throws IllegalArgumentException if an endpoint's ticket is not a request, or a part's endpoint has no location
     */
    static Endpoints of(FlightInfo info, Location asked, Function<Location, Connection> connect) {
        List<Target> ts = new ArrayList<>();
        for (FlightEndpoint e : info.getEndpoints()) {
            Part p = Part.Ticket.parse(e.getTicket().getBytes()).part();
            if (p == null) {
                ts.add(new Target(null, asked));
            } else if (e.getLocations().isEmpty()) {
                throw new IllegalArgumentException("the endpoint of " + p.describe() + " names no location");
            } else {
                ts.add(new Target(p, e.getLocations().get(0)));
            }
        }
        return new Endpoints(ts, connect);
    }

    /** @return the endpoints in reading order */
    List<Target> targets() {
        return targets;
    }

    /** @return true if the endpoints are parts of a cluster */
    boolean cluster() {
        return targets.stream().anyMatch(t -> t.part() != null);
    }

    /**
     * @param t an endpoint
     * @return the connection to its location (made at the first call)
     */
    Connection client(Target t) {
        return clients.computeIfAbsent(t.location().getUri(), u -> connect.apply(t.location()));
    }

    /**
     * Drops the connection to {@code t}'s server, so that the next {@link #client} makes a new one (gRPC's channel would
     * wait out its own backoff before trying a restarted server).
     *
     * @param t an endpoint whose stream broke
     */
    void reconnect(Target t) {
        Connection c = clients.remove(t.location().getUri());
        if (c != null) {
            closeQuietly(c);
        }
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (RuntimeException e) {
            LOG.log(Level.FINE, "gdsloader: closing a connection", e);
        }
    }

    /** Closes every connection made here. Idempotent. */
    @Override
    public void close() {
        for (Connection c : clients.values()) {
            closeQuietly(c);
        }
        clients.clear();
    }
}
