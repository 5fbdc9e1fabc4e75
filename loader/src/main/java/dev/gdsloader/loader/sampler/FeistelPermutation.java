package dev.gdsloader.loader.sampler;

/**
 * A keyed pseudo-random permutation of {@code [0, n)} computed point by point in O(1) memory: a six-round
 * balanced Feistel network over the smallest even number of bits covering {@code n}, with cycle walking
 * (re-encrypting values that fall outside {@code [0, n)}) to stay in the domain (Black and Rogaway,
 * "Ciphers with Arbitrary Finite Domains", CT-RSA 2002). The round function is SplitMix64's finaliser.
 * Used so that shuffling an epoch allocates nothing per record. Stateless and thread-safe.
 */
final class FeistelPermutation {
    private static final int ROUNDS = 6;

    private FeistelPermutation() {
    }

    /**
     * @param n domain size, &ge; 1
     * @param key the permutation's key (seed, epoch and purpose mixed together)
     * @param x a position in {@code [0, n)}
     * @return the value at position {@code x}; distinct positions give distinct values in {@code [0, n)}
     */
    static long apply(long n, long key, long x) {
        int bits = Math.max(2, 64 - Long.numberOfLeadingZeros(n - 1));
        int half = (bits + 1) / 2;
        long mask = (1L << half) - 1;
        long v = x;
        do {
            long l = v >>> half;
            long r = v & mask;
            for (int round = 0; round < ROUNDS; round++) {
                long t = l ^ (mix(key + round * 0x9E3779B97F4A7C15L + r) & mask);
                l = r;
                r = t;
            }
            v = (l << half) | r;
        } while (v >= n);
        return v;
    }

    /** SplitMix64's finaliser (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014). */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
