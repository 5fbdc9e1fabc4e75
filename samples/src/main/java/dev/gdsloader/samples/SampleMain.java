package dev.gdsloader.samples;

import dev.gdsloader.cuda.CudaException;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * How every sample's {@code main} handles what a user gets wrong: a wrong argument count prints the usage, a
 * bad argument or a missing requirement (no GPU, no such file, a malformed shard) prints one line naming the
 * sample and the reason; both exit with status 2 and no stack trace. Anything else is a bug and propagates
 * with its stack trace. Stateless.
 */
final class SampleMain {
    /** Held so the level set on it stays (java.util.logging keeps loggers weakly): Arrow Java's INFO chatter. */
    private static final java.util.logging.Logger QUIET_ARROW = java.util.logging.Logger.getLogger("org.apache.arrow");
    /** The loader's INFO line (which path AUTO chose): a sample prints what it wants on stdout itself. */
    private static final java.util.logging.Logger QUIET_LOADER = java.util.logging.Logger.getLogger("dev.gdsloader");

    private SampleMain() {
    }

    /** A sample's body, given its arguments. */
    @FunctionalInterface
    interface Body {
        /**
         * @param args the command-line arguments, already counted
         * @throws Exception what the sample may fail with
         */
        void run(String[] args) throws Exception;
    }

    /**
     * Runs {@code body}, or exits 2 with one line.
     *
     * @param name the sample's class name, the prefix of every message
     * @param usage the arguments, e.g. {@code "DATASET_DIR COLUMN"}
     * @param minArgs fewest arguments
     * @param maxArgs most arguments
     * @param args the command-line arguments
     * @param body the sample
     * @throws Exception what {@code body} throws that is not a user's error (a bug)
     */
    static void run(String name, String usage, int minArgs, int maxArgs, String[] args, Body body) throws Exception {
        QUIET_ARROW.setLevel(java.util.logging.Level.WARNING);
        QUIET_LOADER.setLevel(java.util.logging.Level.WARNING);
        if (args.length < minArgs || args.length > maxArgs) {
            fail("usage: " + name + " " + usage);
        }
        try {
            body.run(args);
        } catch (IllegalArgumentException | IllegalStateException | CudaException | IOException | UncheckedIOException e) {
            fail(name + ": " + dev.gdsloader.loader.ErrorMessages.of(e));
        }
    }

    /**
     * @param what the argument's name, e.g. {@code "EPOCHS"}
     * @param value its text
     * @return the value, 1..{@link Integer#MAX_VALUE}
     * @throws IllegalArgumentException naming the argument and the range if it is not a whole number in it
     */
    static int positive(String what, String value) {
        try {
            int n = Integer.parseInt(value);
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(what + " must be a whole number in 1.." + Integer.MAX_VALUE + ", got '" + value + "'");
    }

    /**
     * @param what the argument's name, e.g. {@code "PATH"}
     * @param value its text, any case
     * @param allowed the values accepted
     * @return the read path named
     * @throws IllegalArgumentException naming the argument and the values accepted
     */
    static dev.gdsloader.loader.path.ReadPath readPath(String what, String value, java.util.List<dev.gdsloader.loader.path.ReadPath> allowed) {
        for (dev.gdsloader.loader.path.ReadPath p : allowed) {
            if (p.name().equalsIgnoreCase(value.strip())) {
                return p;
            }
        }
        String names = allowed.stream().map(Enum::name).toList().toString();
        names = names.substring(1, names.length() - 1);
        int last = names.lastIndexOf(", ");
        names = last < 0 ? names : names.substring(0, last) + " or " + names.substring(last + 2);
        throw new IllegalArgumentException(what + " must be " + names + ", got '" + value + "'");
    }

    private static void fail(String line) {
        System.err.println(line);
        System.exit(2);
    }
}
