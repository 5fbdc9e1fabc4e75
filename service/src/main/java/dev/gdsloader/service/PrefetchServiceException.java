package dev.gdsloader.service;

/**
 * The prefetch service refused a request or the connection failed; the message says what was wrong (from the
 * server's {@code ERROR} frame, or naming the peer and the failure).
 */
public final class PrefetchServiceException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * @param message what was wrong
     */
    public PrefetchServiceException(String message) {
        super(message);
    }

    /**
     * @param message what was wrong
     * @param cause the underlying failure
     */
    public PrefetchServiceException(String message, Throwable cause) {
        super(message, cause);
    }
}
