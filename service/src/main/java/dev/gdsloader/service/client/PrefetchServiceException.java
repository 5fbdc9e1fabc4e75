package dev.gdsloader.service.client;

import org.apache.arrow.flight.FlightStatusCode;

/**
 * The prefetch service refused a request or the connection failed; the message names the server and what was wrong
 * (the server's one-line reason), and {@link #code()} the Flight status code.
 */
public final class PrefetchServiceException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    /** The status code; null where none applies (e.g. interrupted). */
    private final transient FlightStatusCode code;

    /**
     * @param message what was wrong
     * @param cause the underlying failure, or null
     * @param code the Flight status code, or null
     */
    public PrefetchServiceException(String message, Throwable cause, FlightStatusCode code) {
        super(message, cause);
        this.code = code;
    }

    /** @return the Flight status code (e.g. NOT_FOUND, PERMISSION_DENIED, UNAVAILABLE, TIMED_OUT), or null */
    public FlightStatusCode code() {
        return code;
    }
}
