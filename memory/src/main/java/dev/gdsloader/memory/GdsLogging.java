package dev.gdsloader.memory;

import java.util.Locale;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The default level of gds-loader's own {@code java.util.logging} loggers (everything under {@code dev.gdsloader}):
 * {@code WARNING}, so a program using the library (and every build's tests) prints no INFO lines to stderr, which the
 * JDK's default configuration would. The system property {@value #LEVEL_PROPERTY} raises or lowers it
 * ({@code -Dgdsloader.log=INFO} prints, e.g., the loader's line saying which read path AUTO chose, {@code FINE} more);
 * a logging configuration that sets {@code dev.gdsloader.level} itself ({@code java.util.logging.config.file}) is left
 * alone. Applied once, by the library's entry points (the loader's builder, the prefetch client and server, the CLI).
 * Thread-safe.
 */
public final class GdsLogging {
    /** The system property naming the level: a {@link Level} name or number, e.g. {@code INFO}, {@code FINE}. */
    public static final String LEVEL_PROPERTY = "gdsloader.log";

    /** The level without the property or a configuration of its own: {@code WARNING}. */
    public static final String DEFAULT_LEVEL = "WARNING";

    /** Held strongly: {@code java.util.logging} keeps loggers weakly, and a collected one would lose its level. */
    private static final Logger ROOT = Logger.getLogger("dev.gdsloader");

    /** Whether {@link #init()} applied the level. */
    private static boolean applied;

    private GdsLogging() {
    }

    /**
     * Applies the level, once per JVM (later calls do nothing).
     *
     * @throws IllegalArgumentException naming {@value #LEVEL_PROPERTY} and its value, if that is no level (then
     *     nothing is applied, and every call throws the same)
     */
    public static synchronized void init() {
        if (applied) {
            return;
        }
        String given = System.getProperty(LEVEL_PROPERTY);
        if (given != null && !given.isBlank()) {
            ROOT.setLevel(parse(given));
        } else if (ROOT.getLevel() == null) { // no logging configuration named it
            ROOT.setLevel(Level.WARNING);
        }
        applied = true;
    }

    /**
     * @param value a level name (any case) or number
     * @return the level
     * @throws IllegalArgumentException naming the property and the value, if it is no level
     */
    static Level parse(String value) {
        try {
            return Level.parse(value.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(LEVEL_PROPERTY + " must be a java.util.logging level (SEVERE, WARNING, INFO, "
                    + "CONFIG, FINE, FINER, FINEST, OFF, ALL), got '" + value + "'", e);
        }
    }
}
