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
        if (args.length < minArgs || args.length > maxArgs) {
            fail("usage: " + name + " " + usage);
        }
        try {
            body.run(args);
        } catch (IllegalArgumentException | IllegalStateException | CudaException | IOException | UncheckedIOException e) {
            fail(name + ": " + e.getMessage());
        }
    }

    /**
     * @param what the argument's name, e.g. {@code "EPOCHS"}
     * @param value its text
     * @return the value, &ge; 1
     * @throws IllegalArgumentException naming the argument if it is not a whole number &ge; 1
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
        throw new IllegalArgumentException(what + " must be a whole number >= 1, got '" + value + "'");
    }

    private static void fail(String line) {
        System.err.println(line);
        System.exit(2);
    }
}
