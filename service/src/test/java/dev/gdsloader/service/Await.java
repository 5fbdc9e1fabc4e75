package dev.gdsloader.service;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Waits on conditions instead of sleeping: a test polls the state it waits for (every millisecond) and fails only if
 * it does not come within {@link #HANG}, a deadline against hangs generous enough for a loaded runner. No test asserts
 * how long something took. Stateless; thread-safe.
 */
public final class Await {
    /** The deadline of every wait: against hangs only. */
    public static final Duration HANG = Duration.ofSeconds(60);

    private Await() {
    }

    /**
     * Polls {@code condition} until it holds.
     *
     * @param what what is waited for, said when the deadline passes (with the state then)
     * @param condition the condition
     * @throws AssertionError if it does not hold within {@link #HANG}
     */
    public static void until(Supplier<String> what, BooleanSupplier condition) {
        if (!within(condition)) {
            throw new AssertionError("not within " + HANG.toSeconds() + " s: " + what.get());
        }
    }

    /**
     * Polls {@code condition} until it holds or {@link #HANG} passes (or the thread is interrupted).
     *
     * @param condition the condition
     * @return whether it held
     */
    public static boolean within(BooleanSupplier condition) {
        long deadline = System.nanoTime() + HANG.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0 || Thread.currentThread().isInterrupted()) {
                return false;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        return true;
    }

    /**
     * Waits until a garbage collection has run: an object only weakly reachable is cleared ({@link System#gc()} asked
     * on each poll), so objects dropped before the call have been found unreachable.
     */
    public static void collected() {
        java.lang.ref.WeakReference<Object> garbage = new java.lang.ref.WeakReference<>(new Object());
        until("a garbage collection", () -> {
            System.gc();
            return garbage.get() == null;
        });
    }

    /**
     * @param what what is waited for
     * @param condition the condition
     * @throws AssertionError if it does not hold within {@link #HANG}
     */
    public static void until(String what, BooleanSupplier condition) {
        until(() -> what, condition);
    }
}
