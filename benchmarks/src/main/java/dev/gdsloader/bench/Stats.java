package dev.gdsloader.bench;

import java.util.Arrays;

/** Order statistics of a few measurements. Stateless. */
final class Stats {
    private Stats() {
    }

    static double median(double[] v) {
        if (v.length == 0) {
            return 0;
        }
        double[] s = v.clone();
        Arrays.sort(s);
        int m = s.length / 2;
        return s.length % 2 == 1 ? s[m] : (s[m - 1] + s[m]) / 2;
    }

    static double min(double[] v) {
        return Arrays.stream(v).min().orElse(0);
    }

    static double max(double[] v) {
        return Arrays.stream(v).max().orElse(0);
    }
}
