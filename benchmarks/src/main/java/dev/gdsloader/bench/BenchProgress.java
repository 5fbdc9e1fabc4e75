package dev.gdsloader.bench;

import java.io.PrintStream;

/**
 * Where a benchmark run reports its steps: told the number of steps once, then each step as it starts.
 * The CLI shows a progress bar; {@link #lines(PrintStream)} prints one line per step.
 */
public interface BenchProgress {
    /**
     * @param steps how many steps the run has
     */
    void start(int steps);

    /**
     * @param what the step that starts now, e.g. "round 1: path BOUNCE"
     */
    void step(String what);

    /** Called once when the run ends. */
    default void finish() {
    }

    /**
     * @param out where to print
     * @return progress printed as one line per step
     */
    static BenchProgress lines(PrintStream out) {
        return new BenchProgress() {
            @Override
            public void start(int steps) {
            }

            @Override
            public void step(String what) {
                out.println(what + " ...");
            }
        };
    }
}
