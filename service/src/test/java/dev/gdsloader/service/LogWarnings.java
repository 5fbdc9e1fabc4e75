package dev.gdsloader.service;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * Records what one logger (and its children) logs at WARNING and above, from {@link #on} until {@link #close()}, which
 * takes the handler off again. Thread-safe.
 */
public final class LogWarnings extends Handler implements AutoCloseable {
    private final Logger logger;
    private final List<LogRecord> records = new ArrayList<>();

    private LogWarnings(Logger logger) {
        this.logger = logger;
    }

    /**
     * @param loggerName the logger to watch ({@code ""}: every logger)
     * @return the recorder, added to it
     */
    public static LogWarnings on(String loggerName) {
        LogWarnings w = new LogWarnings(Logger.getLogger(loggerName));
        w.logger.addHandler(w);
        return w;
    }

    @Override
    public synchronized void publish(LogRecord r) {
        if (r.getLevel().intValue() >= Level.WARNING.intValue()) {
            records.add(r);
        }
    }

    /** @return the records so far */
    public synchronized List<LogRecord> records() {
        return List.copyOf(records);
    }

    /** @return each record so far as {@code LOGGER: MESSAGE[: THROWN]} */
    public synchronized List<String> messages() {
        return records.stream().map(r -> r.getLoggerName() + ": " + r.getMessage() + (r.getThrown() == null ? "" : ": " + r.getThrown()))
                .toList();
    }

    @Override
    public void flush() {
        // nothing buffered
    }

    /** Takes the handler off its logger. */
    @Override
    public void close() {
        logger.removeHandler(this);
    }
}
