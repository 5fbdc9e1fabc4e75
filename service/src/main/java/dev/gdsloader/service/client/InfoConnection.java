package dev.gdsloader.service.client;

import dev.gdsloader.service.protocol.ErrorCodes;
import dev.gdsloader.service.protocol.Request;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.arrow.flight.CallOptions;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.flight.Location;

/**
 * The connection to the server a client was built for, and its {@code GetFlightInfo}, retried as a broken stream
 * reconnects: an UNAVAILABLE server (not listening yet, or shutting down: GOAWAY), or one that refused the connection
 * (RESOURCE_EXHAUSTED, {@link ErrorCodes#connectionRefused}: at its connection limits), is asked again on a new
 * connection every {@value Reconnects#PAUSE_MILLIS} ms for up to the reconnect timeout, with one log line when it
 * starts retrying; other refusals are not retried. Owns its
 * connection; the consumer's thread only.
 */
final class InfoConnection implements AutoCloseable {
    private static final Logger LOG = Logger.getLogger(InfoConnection.class.getName());

    private final String peer;
    private final Location location;
    private final Function<Location, Connection> connect;
    private Connection flight;

    /**
     * @param peer {@code host:port}, for messages
     * @param location the server
     * @param connect makes a new connection (the client's TLS, token and window)
     */
    InfoConnection(String peer, Location location, Function<Location, Connection> connect) {
        this.peer = peer;
        this.location = location;
        this.connect = connect;
        this.flight = connect.apply(location);
    }

    /**
     * @param request the request (asked for epoch 0)
     * @param timeoutMillis the call's deadline, ms
     * @param reconnectMillis how long an UNAVAILABLE server, or a refused connection, is retried, ms
     * @return the server's answer
     * @throws PrefetchServiceException naming the server: its refusal, with the status code, or
     *     {@code prefetch server HOST:PORT unavailable: ... (retried for N ms)}
     */
    FlightInfo fetch(Request request, long timeoutMillis, long reconnectMillis) {
        long t0 = System.nanoTime();
        long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(reconnectMillis);
        FlightRuntimeException first = null;
        while (true) {
            try {
                return flight.flight().getInfo(FlightDescriptor.command(request.forEpoch(0).toBytes()),
                        CallOptions.timeout(timeoutMillis, TimeUnit.MILLISECONDS));
            } catch (FlightRuntimeException e) {
                if (e.status().code() != FlightStatusCode.UNAVAILABLE && !ErrorCodes.connectionRefused(e)) {
                    throw new PrefetchServiceException("prefetch server " + peer + ": " + e.getMessage(), e, e.status().code());
                }
                if (first == null) {
                    first = e;
                    LOG.log(Level.INFO, "gdsloader: prefetch server " + peer + " unavailable (" + e.getMessage()
                            + "); retrying for up to " + reconnectMillis + " ms");
                }
                if (System.nanoTime() - deadline >= 0) {
                    throw new PrefetchServiceException("prefetch server " + peer + " unavailable: " + Reconnects.gaveUp(first, e)
                            + " (retried for " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms)", e,
                            e.status().code());
                }
                Reconnects.pause(Math.min(Reconnects.PAUSE_MILLIS,
                        Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))));
                flight.close(); // a new channel: gRPC's own would wait out its reconnect backoff (1 s and more)
                flight = connect.apply(location);
            }
        }
    }

    /** Closes the connection. */
    @Override
    public void close() {
        flight.close();
    }
}
