package dev.gdsloader.loader.plan;

/**
 * Arithmetic on the 4 KiB boundaries that {@code O_DIRECT} and cuFile's DMA path need (offsets, lengths
 * and buffer addresses multiples of the logical block size; 4096 covers every NVMe format in use).
 * Stateless.
 */
public final class Alignment {
    /** The alignment, bytes. */
    public static final long BLOCK = 4096;

    private Alignment() {
    }

    /**
     * @param v a byte offset or length, &ge; 0
     * @return {@code v} rounded down to a multiple of {@link #BLOCK}
     */
    public static long down(long v) {
        return v & -BLOCK;
    }

    /**
     * @param v a byte offset or length, &ge; 0
     * @return {@code v} rounded up to a multiple of {@link #BLOCK}
     * @throws ArithmeticException if rounding up overflows a long
     */
    public static long up(long v) {
        return Math.addExact(v, BLOCK - 1) & -BLOCK;
    }

    /**
     * @param v a byte offset or length
     * @return true if {@code v} is a multiple of {@link #BLOCK}
     */
    public static boolean isAligned(long v) {
        return (v & (BLOCK - 1)) == 0;
    }
}
