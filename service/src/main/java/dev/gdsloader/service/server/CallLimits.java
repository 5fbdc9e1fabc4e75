package dev.gdsloader.service.server;

import dev.gdsloader.service.protocol.ErrorCodes;
import io.grpc.ForwardingServerCall;
import io.grpc.ForwardingServerCallListener;
import io.grpc.Grpc;
import io.grpc.Metadata;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerInterceptor;
import io.grpc.Status;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The per-call limits of {@link ServerLimits}, as a gRPC server interceptor in front of every Flight RPC: sessions
 * (DoGet and DoExchange calls in progress) on the server and per client address, and calls of any kind in progress
 * per connection. A call beyond one of them is closed at once with RESOURCE_EXHAUSTED naming the limit and its value
 * (e.g. {@code session limit reached: 64 streams at once on this server (ServerLimits.sessions, serve --max-sessions)});
 * the producer never sees it. Every call on a connection {@link ConnectionGuard} refused is closed so too, naming the
 * connection limit, with {@link ErrorCodes#LIMIT_KEY} in its trailers: clients retry that one on a new connection
 * within their reconnect timeout (an authenticated connection of another client may have closed by then); the session
 * and call limits are refusals of what the client itself holds, not retried.
 * A call counts from its start until gRPC reports it complete or cancelled. Also tells {@link ConnectionGuard} whether
 * a connection has a call in progress, and that a call on it passed authentication (was not closed UNAUTHENTICATED
 * while it started, where Flight's authentication runs). Thread-safe.
 */
final class CallLimits implements ServerInterceptor {
    private final ServerLimits limits;
    private final ConnectionGuard guard;
    private final Counts<String> sessions = new Counts<>();
    private final Counts<InetAddress> perClient = new Counts<>();
    private final Counts<SocketAddress> perConnection = new Counts<>();

    /**
     * @param limits the limits
     * @param guard told of each connection whose call passed authentication; asked whether a connection was refused
     */
    CallLimits(ServerLimits limits, ConnectionGuard guard) {
        this.limits = limits;
        this.guard = guard;
    }

    /** @return sessions (streams) in progress, as counted here */
    int sessionsInProgress() {
        return sessions.get("server");
    }

    /**
     * @param remote a connection's remote address
     * @return calls in progress on it
     */
    int callsOn(SocketAddress remote) {
        return perConnection.get(remote);
    }

    @Override
    public <Q, R> ServerCall.Listener<Q> interceptCall(ServerCall<Q, R> call, Metadata headers, ServerCallHandler<Q, R> next) {
        SocketAddress remote = call.getAttributes().get(Grpc.TRANSPORT_ATTR_REMOTE_ADDR);
        String method = call.getMethodDescriptor().getBareMethodName();
        boolean session = "DoGet".equals(method) || "DoExchange".equals(method);
        List<Runnable> undo = new ArrayList<>(3);
        String refusal = guard.refusal(remote); // a connection beyond ServerLimits.connections: every call told why
        boolean connectionRefused = refusal != null;
        if (refusal == null && remote != null) {
            if (perConnection.tryAdd(remote, limits.callsPerConnection())) {
                undo.add(() -> perConnection.remove(remote));
            } else {
                refusal = "call limit reached: " + limits.callsPerConnection() + " calls at once on one connection "
                        + "(ServerLimits.callsPerConnection, serve --max-calls-per-connection)";
            }
        }
        if (refusal == null && session) {
            if (sessions.tryAdd("server", limits.sessions())) {
                undo.add(() -> sessions.remove("server"));
                InetAddress client = remote instanceof InetSocketAddress a ? a.getAddress() : null;
                if (client != null) {
                    if (perClient.tryAdd(client, limits.sessionsPerClient())) {
                        undo.add(() -> perClient.remove(client));
                    } else {
                        refusal = "session limit reached: " + limits.sessionsPerClient() + " streams at once from one client ("
                                + client.getHostAddress() + ") (ServerLimits.sessionsPerClient, serve --max-sessions-per-client)";
                    }
                }
            } else {
                refusal = "session limit reached: " + limits.sessions() + " streams at once on this server "
                        + "(ServerLimits.sessions, serve --max-sessions)";
            }
        }
        AtomicBoolean released = new AtomicBoolean();
        Runnable release = () -> {
            if (released.compareAndSet(false, true)) {
                undo.forEach(Runnable::run);
            }
        };
        if (refusal != null) {
            release.run();
            call.close(Status.RESOURCE_EXHAUSTED.withDescription(refusal), connectionRefused ? limitTrailers(refusal)
                    : new Metadata());
            return new ServerCall.Listener<>() { };
        }
        AuthWatch<Q, R> watched = new AuthWatch<>(call);
        ServerCall.Listener<Q> listener;
        try {
            listener = next.startCall(watched, headers); // Flight's authentication runs in it, closing a call it refuses
        } catch (RuntimeException | Error e) {
            release.run();
            throw e;
        }
        if (!watched.unauthenticated) {
            guard.authenticated(remote);
        }
        return new ForwardingServerCallListener.SimpleForwardingServerCallListener<>(listener) {
            @Override
            public void onComplete() {
                try {
                    super.onComplete();
                } finally {
                    release.run();
                }
            }

            @Override
            public void onCancel() {
                try {
                    super.onCancel();
                } finally {
                    release.run();
                }
            }
        };
    }

    /**
     * @param message the refusal (ASCII)
     * @return trailers marking a RESOURCE_EXHAUSTED status as a refused connection ({@link ErrorCodes#LIMIT_KEY})
     */
    private static Metadata limitTrailers(String message) {
        Metadata m = new Metadata();
        m.put(Metadata.Key.of(ErrorCodes.LIMIT_KEY, Metadata.ASCII_STRING_MARSHALLER), message);
        return m;
    }

    /** Notes whether the call was closed UNAUTHENTICATED (Flight's authentication closes it within startCall). */
    private static final class AuthWatch<Q, R> extends ForwardingServerCall.SimpleForwardingServerCall<Q, R> {
        volatile boolean unauthenticated;

        AuthWatch(ServerCall<Q, R> call) {
            super(call);
        }

        @Override
        public void close(Status status, Metadata trailers) {
            if (status.getCode() == Status.Code.UNAUTHENTICATED) {
                unauthenticated = true;
            }
            super.close(status, trailers);
        }
    }

    /** Counters by key; a key at 0 is removed. */
    private static final class Counts<K> {
        private final ConcurrentHashMap<K, Integer> counts = new ConcurrentHashMap<>();

        int get(K key) {
            return counts.getOrDefault(key, 0);
        }

        boolean tryAdd(K key, int limit) {
            boolean[] added = {false};
            counts.compute(key, (k, n) -> {
                int have = n == null ? 0 : n;
                if (have >= limit) {
                    return n;
                }
                added[0] = true;
                return have + 1;
            });
            return added[0];
        }

        void remove(K key) {
            counts.computeIfPresent(key, (k, n) -> n <= 1 ? null : n - 1);
        }
    }
}
