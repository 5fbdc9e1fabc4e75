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

    /** @return {@code v} rounded down to a multiple of {@link #BLOCK} */
    public static long down(long v) {
        return v & -BLOCK;
    }

    /** @return {@code v} rounded up to a multiple of {@link #BLOCK} */
    public static long up(long v) {
        return Math.addExact(v, BLOCK - 1) & -BLOCK;
    }

    /** @return true if {@code v} is a multiple of {@link #BLOCK} */
    public static boolean isAligned(long v) {
        return (v & (BLOCK - 1)) == 0;
    }
}
