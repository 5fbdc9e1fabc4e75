package dev.gdsloader.service.server;

import dev.gdsloader.memory.MemoryBudgetException;
import dev.gdsloader.posix.RefusedFileException;
import dev.gdsloader.service.protocol.ErrorCodes;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.FlightRuntimeException;

/**
 * Maps what went wrong on the server to a Flight status with a one-line message for the client (service/README.md,
 * "Errors"): INVALID_ARGUMENT (a bad request or option, an unreadable dataset), NOT_FOUND (no such dataset),
 * PERMISSION_DENIED (Flight's UNAUTHORIZED: a dataset name refused: it escapes the root, or is not a safe relative name;
 * or a shard refused when opened: swapped for a link or another file since the check), RESOURCE_EXHAUSTED
 * (a memory budget), UNAVAILABLE (server shutting down), INTERNAL (anything else, e.g. an {@code OutOfMemoryError}).
 * Every message goes through {@link DatasetRoot#forClients} (no root path, no file bytes). Stateless; thread-safe.
 */
final class Errors {
    private static final Logger LOG = Logger.getLogger(Errors.class.getName());

    private Errors() {
    }

    /**
     * @param t what went wrong
     * @param root the server's root, whose path the message must not reveal
     * @param what the call, for the server's log (e.g. {@code "DoGet of 'train'"})
     * @return the status exception to send
     */
    static FlightRuntimeException toStatus(Throwable t, DatasetRoot root, String what) {
        if (t instanceof FlightRuntimeException f) {
            return f;
        }
        String m = root.forClients(String.valueOf(t.getMessage()));
        CallStatus s;
        if (t instanceof MemoryBudgetException) {
            s = CallStatus.RESOURCE_EXHAUSTED;
        } else if (t instanceof IllegalArgumentException) {
            if (m.startsWith("unknown dataset '")) {
                s = CallStatus.NOT_FOUND;
            } else if (m.startsWith("dataset '") && m.contains("' refused: ")) {
                s = CallStatus.UNAUTHORIZED;
            } else {
                s = CallStatus.INVALID_ARGUMENT;
            }
        } else if (refused(t)) { // a shard swapped or hard-linked since the check: no retry serves it
            LOG.warning("gdsloader: " + what + " refused a file: " + oneLine(t));
            s = CallStatus.UNAUTHORIZED;
        } else if (t instanceof Error) {
            LOG.log(Level.SEVERE, "gdsloader: " + what + " failed", t);
            s = CallStatus.INTERNAL;
            m = root.forClients(what + " failed: " + t) + "; the server closed this session";
        } else {
            // one line on the server's console (a bad or changed file is not a server bug); the stack for FINE
            LOG.warning("gdsloader: " + what + " failed: " + oneLine(t));
            LOG.log(Level.FINE, "gdsloader: " + what + " failed", t);
            s = CallStatus.INTERNAL;
            m = root.forClients(what + " failed: " + t);
        }
        return s.withDescription(m).toRuntimeException();
    }

    /** @return true if {@code t} or a cause is a file refused beneath the root ({@link RefusedFileException}) */
    @SuppressWarnings("ReferenceEquality") // a cause chain ends where a cause is itself: the same object
    private static boolean refused(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof RefusedFileException) {
                return true;
            }
        }
        return false;
    }

    /** @return {@code t} and each cause whose message adds something, in one line */
    @SuppressWarnings("ReferenceEquality") // a cause chain ends where a cause is itself: the same object
    static String oneLine(Throwable t) {
        StringBuilder b = new StringBuilder(String.valueOf(t));
        for (Throwable c = t.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            String m = c.getMessage();
            if (m != null && !b.toString().contains(m)) {
                b.append(": ").append(m);
            }
        }
        return b.toString().replace('\n', ' ');
    }

    /** @return the UNAVAILABLE status a stream gets when the server closes under it */
    static FlightRuntimeException shuttingDown() {
        return CallStatus.UNAVAILABLE.withDescription(ErrorCodes.SHUTTING_DOWN + ": reconnect to a server and resume from the last state")
                .toRuntimeException();
    }
}
