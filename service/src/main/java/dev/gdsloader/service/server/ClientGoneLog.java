package dev.gdsloader.service.server;

import io.netty.handler.codec.http2.Http2Exception;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Filter;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * A client that goes away mid-stream (killed, its connection reset) is one INFO line on the server's console, not a
 * WARNING with a stack trace. gRPC's {@code NettyServerHandler} logs every HTTP/2 stream error as {@code "Stream Error"}
 * at WARNING with the exception; when the connection dies while batches are still queued to a stream, Netty's flow
 * controller fails each queued write with a {@link Http2Exception.StreamException} {@value #CLOSED_BEFORE_WRITE}. Only
 * that record is rewritten (INFO, one line naming the stream, no stack); every other record of that logger, a real
 * stream error included, passes unchanged. The session itself is freed by gRPC's cancellation, as for any client that
 * closes. Installed once per process by {@link PrefetchServer}; thread-safe.
 */
final class ClientGoneLog {
    /** The logger gRPC's Netty server handler logs stream errors to. */
    static final String GRPC_LOGGER = "io.grpc.netty.NettyServerHandler";
    /** The start of the message of Netty's flow controller for a write queued to a stream that closed. */
    static final String CLOSED_BEFORE_WRITE = "Stream closed before write could take place";
    /** Held: java.util.logging keeps loggers weakly, and a collected logger would lose its filter. */
    private static final Logger GRPC = Logger.getLogger(GRPC_LOGGER);
    private static final AtomicBoolean INSTALLED = new AtomicBoolean();

    private ClientGoneLog() {
    }

    /** Adds the rewrite to {@value #GRPC_LOGGER}'s filter (before a filter already there); once per process. */
    static void install() {
        if (INSTALLED.compareAndSet(false, true)) {
            Filter previous = GRPC.getFilter();
            GRPC.setFilter(r -> {
                rewrite(r);
                return previous == null || previous.isLoggable(r);
            });
        }
    }

    /**
     * Makes a stream error of a client gone mid-stream one INFO line; leaves any other record as it is.
     *
     * @param r a record of {@value #GRPC_LOGGER}
     * @return whether it was rewritten
     */
    static boolean rewrite(LogRecord r) {
        if (r.getThrown() instanceof Http2Exception.StreamException e && e.getMessage() != null
                && e.getMessage().startsWith(CLOSED_BEFORE_WRITE) && r.getLevel().intValue() > Level.INFO.intValue()) {
            r.setLevel(Level.INFO);
            r.setMessage("gdsloader: a client went away mid-stream (HTTP/2 stream " + e.streamId()
                    + " closed with batches still queued to it); its session is freed");
            r.setParameters(null);
            r.setThrown(null);
            return true;
        }
        return false;
    }
}
