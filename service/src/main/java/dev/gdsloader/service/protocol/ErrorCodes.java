package dev.gdsloader.service.protocol;

import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;

/**
 * The Flight status codes of the protocol (service/README.md, "Errors"), as both sides read them. A server answers
 * INVALID_ARGUMENT (a bad request or option, an unreadable dataset), NOT_FOUND (no such dataset), PERMISSION_DENIED
 * (Flight's UNAUTHORIZED: a dataset name refused), UNAUTHENTICATED (no or another bearer token), RESOURCE_EXHAUSTED (a
 * memory budget or limit), UNAVAILABLE (shutting down: {@value #SHUTTING_DOWN}, or a cluster member unreachable) and
 * INTERNAL (anything else), each with a one-line message. A client retries UNAVAILABLE, INTERNAL and UNKNOWN (a server
 * gone or restarting: {@link #retryable}) and no other. Stateless; thread-safe.
 */
public final class ErrorCodes {
    /** Prefix of the UNAVAILABLE message a closing server sends its streams. */
    public static final String SHUTTING_DOWN = "server shutting down";

    /**
     * Trailer key of the RESOURCE_EXHAUSTED status a server sends on a connection it refused (beyond its connection
     * limits; the value is the message): transient, a client retries the call on a new connection within its reconnect
     * timeout ({@link #retryable(FlightRuntimeException)}). Session, call and memory budget refusals do not carry it.
     */
    public static final String LIMIT_KEY = "gdsloader-limit";
    /**
     * Prefix of the message of that RESOURCE_EXHAUSTED (e.g. {@code connection limit reached: 64 authenticated
     * connections at once from 127.0.0.1 (...)}): how a client without access to trailers (pyarrow) recognises it.
     */
    public static final String CONNECTION_LIMIT = "connection limit reached";

    private ErrorCodes() {
    }

    /**
     * @param e a failed call
     * @return true if a client reconnects and retries it: a {@link #retryable(FlightStatusCode) retryable code}, or the
     *     RESOURCE_EXHAUSTED of a refused connection ({@link #LIMIT_KEY})
     */
    public static boolean retryable(FlightRuntimeException e) {
        return retryable(e.status().code()) || connectionRefused(e);
    }

    /**
     * @param e a failed call
     * @return true if it is the RESOURCE_EXHAUSTED of a connection the server refused ({@link #LIMIT_KEY})
     */
    public static boolean connectionRefused(FlightRuntimeException e) {
        return e.status().code() == FlightStatusCode.RESOURCE_EXHAUSTED && e.status().metadata() != null
                && e.status().metadata().containsKey(LIMIT_KEY);
    }

    /**
     * @param code a call's status code
     * @return true for the codes a client reconnects and resumes after (UNAVAILABLE, INTERNAL, UNKNOWN: a server killed,
     *     restarting or shutting down), false for refusals
     */
    public static boolean retryable(FlightStatusCode code) {
        return code == FlightStatusCode.UNAVAILABLE || code == FlightStatusCode.INTERNAL || code == FlightStatusCode.UNKNOWN;
    }

    /**
     * @param e a failed call
     * @return its status message, with the transport's own reason (the root cause's message) where gRPC says only
     *     e.g. "io exception"
     */
    @SuppressWarnings("ReferenceEquality") // a cause chain ends where a cause is itself: the same object
    public static String withCause(FlightRuntimeException e) {
        Throwable c = e;
        while (c.getCause() != null && c.getCause() != c) {
            c = c.getCause();
        }
        String why = c == e ? null : c.getMessage();
        return why == null || why.isBlank() || e.getMessage().contains(why) ? e.getMessage() : e.getMessage() + ": " + why;
    }
}
