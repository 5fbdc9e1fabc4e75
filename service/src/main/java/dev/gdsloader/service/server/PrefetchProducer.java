package dev.gdsloader.service.server;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.memory.MemoryBudgetException;
import dev.gdsloader.memory.NativeAllocator;
import dev.gdsloader.service.protocol.BatchSchema;
import dev.gdsloader.service.protocol.Part;
import dev.gdsloader.service.protocol.Protocol;
import dev.gdsloader.service.protocol.Request;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.ActionType;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightProducer;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.PutResult;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The Flight RPCs of a {@link PrefetchServer} (service/README.md): ListFlights, GetFlightInfo, DoGet and DoExchange
 * (each request's delivery mode, {@link ServerDelivery}: HOST is a DoGet, CUDA_IPC a DoExchange); DoPut and actions are
 * refused. Each
 * stream opens a {@link Session} or reuses a parked one ({@link ParkedSessions}: the session of the client's previous
 * epoch, or of its GetFlightInfo); failures become Flight statuses through {@link Errors}. Thread-safe.
 */
final class PrefetchProducer implements FlightProducer {
    private static final Logger LOG = Logger.getLogger(PrefetchProducer.class.getName());

    private final DatasetRoot root;
    private final NativeAllocator memory;
    private final BufferAllocator arrow;
    private final Executor cleanup;
    private final Set<Session> sessions;
    private final BooleanSupplier closing;
    private final Supplier<Location> self;
    private final AtomicLong ids = new AtomicLong();
    /** The servers this one is part of, or null for a single server (service/README.md, "Several machines"). */
    private final Cluster cluster;
    /** How this server calls the other members of its cluster (token, TLS trust); null without a cluster. */
    private final ClusterInfo.Peers peers;
    /** Sessions kept between a client's streams, owned by the server. */
    private final ParkedSessions parked;
    /** What a session may ask for, and the I/O pool every session reads on; owned by the server. */
    private final SessionCeilings ceilings;

    PrefetchProducer(DatasetRoot root, NativeAllocator memory, BufferAllocator arrow, Executor cleanup, Set<Session> sessions,
                     BooleanSupplier closing, Supplier<Location> self, Cluster cluster, ClusterInfo.Peers peers, ParkedSessions parked,
                     SessionCeilings ceilings) {
        this.parked = parked;
        this.ceilings = ceilings;
        this.cluster = cluster;
        this.peers = peers;
        this.root = root;
        this.memory = memory;
        this.arrow = arrow;
        this.cleanup = cleanup;
        this.sessions = sessions;
        this.closing = closing;
        this.self = self;
    }

    /** @return sessions opened since the server started (each DoGet or DoExchange that got past its checks) */
    long sessionsOpened() {
        return ids.get();
    }

    /**
     * The session of a stream: the one parked under {@code key} (its next epoch, or a GetFlightInfo's), else a new one.
     */
    private Session session(ParkedSessions.Key key) throws IOException {
        Session s = parked.take(key);
        if (s == null) {
            return open(key.request());
        }
        s.serve(key.request());
        return s;
    }

    /** Opens a new session; when the memory budget refuses it while sessions are parked, frees those and tries again. */
    private Session open(Request r) throws IOException {
        if (closing.getAsBoolean()) {
            throw Errors.shuttingDown();
        }
        Session s;
        try {
            try {
                s = newSession(r);
            } catch (MemoryBudgetException e) {
                if (!evictParked()) {
                    throw e;
                }
                s = newSession(r);
            }
        } catch (IllegalStateException e) {
            // the loader's "not possible here" (a path this machine cannot take): the request's fault, not the server's
            throw new IllegalArgumentException(e.getMessage(), e);
        }
        sessions.add(s);
        return s;
    }

    private Session newSession(Request r) throws IOException {
        return Session.open(Long.toString(ids.incrementAndGet()), r, root, memory, arrow, ceilings, cleanup, sessions::remove);
    }

    /** @return whether parked sessions were freed (their memory back in the budget) */
    private boolean evictParked() {
        try {
            return parked.evictAll(Session.DRAIN_MILLIS + 1_000) > 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    @Override
    public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
        stream(ServerDelivery.Rpc.DO_GET, ticket.getBytes(), context, null, listener);
    }

    @Override
    public void doExchange(CallContext context, FlightStream reader, ServerStreamListener writer) {
        FlightDescriptor d = reader.getDescriptor();
        stream(ServerDelivery.Rpc.DO_EXCHANGE, d == null || !d.isCommand() ? null : d.getCommand(), context, reader, writer);
    }

    /**
     * One stream: its request's session (a parked one, or a new one) streamed through the request's delivery mode, then
     * parked for the client's next epoch where the mode says so; failures go to the client as a status.
     *
     * @param rpc the RPC called
     * @param command the ticket or command, or null if the call has none
     * @param fromClient the client's messages (DoExchange), or null
     */
    private void stream(ServerDelivery.Rpc rpc, byte[] command, CallContext context, FlightStream fromClient,
                        ServerStreamListener toClient) {
        Session s = null;
        String what = rpc.toString();
        try {
            if (command == null) {
                throw new IllegalArgumentException(rpc + " needs a command descriptor holding the request");
            }
            Part.Ticket t = Part.Ticket.parse(command);
            Request r = t.request();
            what = rpc + " of '" + r.dataset() + "'" + byClient(context);
            ServerDelivery delivery = ServerDelivery.of(r.delivery());
            if (delivery.rpc() != rpc) {
                throw new IllegalArgumentException(rpc + " streams " + rpc.modes() + " delivery; delivery " + r.delivery()
                        + " is a " + delivery.rpc());
            }
            s = session(new ParkedSessions.Key(r, t.part(), context.peerIdentity()));
            String started = what + ": session " + s.id();
            LOG.fine(() -> "gdsloader: " + started);
            ClusterInfo.streamPart(cluster, t.part(), s);
            delivery.serve(s, fromClient, toClient, closing);
            if (delivery.parksAfterEpoch()) {
                parked.park(new ParkedSessions.Key(r.forEpoch(r.epoch() + 1), t.part(), context.peerIdentity()), s, true);
                s = null;
            }
        } catch (Throwable t) {
            fail(toClient, t, what);
        } finally {
            if (s != null) {
                s.unhold();
            }
        }
    }

    /**
     * @return {@code " by client 'NAME'"}, the name of the token the call was admitted with (BearerAuth; the server's
     *     log lines name it), or empty without authentication
     */
    private static String byClient(CallContext context) {
        String name = context.peerIdentity();
        return name == null || name.isEmpty() ? "" : " by client '" + name + "'";
    }

    private void fail(ServerStreamListener listener, Throwable t, String what) {
        FlightRuntimeException e = Errors.toStatus(t, root, what);
        if (listener.isCancelled()) {
            LOG.log(Level.FINE, "gdsloader: " + what + " ended: the client cancelled", t);
            return;
        }
        try {
            listener.error(e);
        } catch (RuntimeException again) {
            LOG.log(Level.FINE, "gdsloader: " + what + ": could not send the error " + e.getMessage(), again);
        }
        if (t instanceof Error err && !(t instanceof OutOfMemoryError)) {
            throw err;
        }
    }

    @Override
    public FlightInfo getFlightInfo(CallContext context, FlightDescriptor descriptor) {
        String what = "GetFlightInfo";
        try {
            if (!descriptor.isCommand()) {
                throw new IllegalArgumentException("GetFlightInfo needs a command descriptor holding the request (ListFlights gives "
                        + "the dataset names)");
            }
            Part.Ticket t = Part.Ticket.parse(descriptor.getCommand());
            Request r = t.request();
            what = "GetFlightInfo of '" + r.dataset() + "'" + byClient(context);
            ClusterInfo.requireOwn(cluster, t.part());
            if (cluster != null && t.part() == null) {
                return ClusterInfo.gather(cluster, descriptor, r, p -> localInfo(descriptor, r, p, null), arrow, peers);
            }
            // a single server keeps the session for the stream the client opens next
            return localInfo(descriptor, r, t.part(), cluster == null ? context.peerIdentity() : null);
        } catch (Throwable t) {
            throw Errors.toStatus(t, root, what);
        }
    }

    /**
     * This server's FlightInfo for {@code r} (of its own part {@code part}, an ask, when it is in a cluster); its session
     * is parked for {@code r} under {@code peer}, or freed when {@code peer} is null.
     */
    private FlightInfo localInfo(FlightDescriptor descriptor, Request r, Part part, String peer) {
        try {
            // the session's own checks and budget, its loader built and closed at once
            Session s = open(r);
            try {
                GdsLoader l = s.loader();
                long rankRecords = l.sampler().recordsOf(l.options().sampler().rank());
                long records = l.options().sampler().dropLast() ? (long) l.batchesPerEpoch() * l.options().batchSize() : rankRecords;
                ObjectNode meta = Protocol.JSON.createObjectNode();
                meta.put("pathTaken", l.pathTaken().name());
                meta.put("pathReason", root.forClients(l.pathReason()));
                meta.put("batchesPerEpoch", l.batchesPerEpoch());
                meta.put("slots", l.slots());
                meta.put("datasetRecords", l.dataset().recordCount());
                FlightEndpoint endpoint = new FlightEndpoint(new Ticket(new Part.Ticket(r, part).toBytes()),
                        part == null ? self.get() : cluster.location(part.index()));
                Schema schema = ServerDelivery.of(r.delivery()).schema(l);
                return FlightInfo.builder(schema, descriptor, List.of(endpoint))
                        .setRecords(records).setBytes(-1).setAppMetadata(meta.toString().getBytes(StandardCharsets.UTF_8)).build();
            } finally {
                if (peer != null) {
                    parked.park(new ParkedSessions.Key(r, part, peer), s, false);
                } else {
                    s.unhold();
                }
            }
        } catch (IOException e) {
            throw Errors.toStatus(e, root, "GetFlightInfo of '" + r.dataset() + "'");
        }
    }

    @Override
    public void listFlights(CallContext context, Criteria criteria, StreamListener<FlightInfo> listener) {
        try {
            List<String> names = new ArrayList<>();
            try (DirectoryStream<Path> dir = Files.newDirectoryStream(root.path())) {
                for (Path p : dir) {
                    names.add(p.getFileName().toString());
                }
            }
            names.sort(null);
            for (String name : names) {
                Dataset ds;
                try {
                    Path p = root.resolve(name);
                    if (!Files.isDirectory(p)) {
                        continue;
                    }
                    ds = Dataset.open(p);
                    root.requireInside(ds, name);
                } catch (IOException | RuntimeException e) {
                    LOG.log(Level.FINE, "gdsloader: ListFlights skips '" + name + "'", e);
                    continue; // not a dataset, or refused: not listed
                }
                listener.onNext(FlightInfo.builder(BatchSchema.of(ds.columns()), FlightDescriptor.path(name), List.of())
                        .setRecords(ds.recordCount()).setBytes(ds.dataBytes()).build());
            }
            listener.onCompleted();
        } catch (Throwable t) {
            listener.onError(Errors.toStatus(t, root, "ListFlights"));
        }
    }

    @Override
    public Runnable acceptPut(CallContext context, FlightStream flightStream, StreamListener<PutResult> ackStream) {
        return () -> ackStream.onError(CallStatus.UNIMPLEMENTED.withDescription("DoPut: the prefetch service is read-only")
                .toRuntimeException());
    }

    @Override
    public void doAction(CallContext context, Action action, StreamListener<Result> listener) {
        listener.onError(CallStatus.UNIMPLEMENTED.withDescription("action '" + action.getType() + "': the prefetch service has none")
                .toRuntimeException());
    }

    @Override
    public void listActions(CallContext context, StreamListener<ActionType> listener) {
        listener.onCompleted();
    }
}
