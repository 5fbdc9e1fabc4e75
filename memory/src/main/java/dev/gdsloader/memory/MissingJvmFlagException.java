package dev.gdsloader.memory;

/**
 * A JVM flag gds-loader needs was not given when this JVM started, so a part that depends on it would fail later with
 * an error that does not name the cause (e.g. the prefetch client's "Failed to read message"). Thrown once, at the
 * first use of that part ({@link JvmFlags}). Immutable.
 */
public final class MissingJvmFlagException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /** The exact flag, as written on the {@code java} command line. */
    private final String flag;

    /**
     * @param flag the exact flag, e.g. {@code --add-opens=java.base/java.nio=ALL-UNNAMED}
     * @param message the whole message, naming the flag and what needs it
     */
    public MissingJvmFlagException(String flag, String message) {
        super(message);
        this.flag = flag;
    }

    /** @return the missing flag, exactly as {@code java} takes it */
    public String flag() {
        return flag;
    }
}
