package dev.gdsloader.cli;

import java.util.Locale;
import java.util.Set;
import picocli.CommandLine;

/**
 * Parses sizes such as {@code 4096}, {@code 64KiB}, {@code 8MiB}, {@code 1GiB}, {@code 2TiB}, {@code 1PiB} (powers of
 * 1024) and {@code 1GB} ... {@code 1PB} (powers of 1000) into bytes, for command-line options; a size beyond a
 * {@code long} ({@value Long#MAX_VALUE} bytes, 8 EiB) is refused as too large, and a negative one as negative, naming
 * the value. A refusal is a {@link Refused} that says which of these it is, so that the usage message can name the
 * option's declared {@link Checks.Range} instead ({@link UsageErrors}). Stateless and thread-safe.
 */
final class ByteSize implements CommandLine.ITypeConverter<Long> {
    /** The unit suffixes accepted after the digits (lower case; matched ignoring ASCII case). */
    private static final Set<String> UNITS = units();

    /** Why a value is not a size. */
    enum Refusal {
        /** Digits and a unit after a minus sign: a size is 0 or more bytes. */
        NEGATIVE,
        /** Neither digits with an optional unit, nor such a size negated. */
        NOT_A_SIZE,
        /** A size beyond {@link Long#MAX_VALUE} bytes. */
        TOO_LARGE
    }

    /**
     * A value {@link ByteSize} refuses, with the value as given and why; picocli puts it as the cause of its
     * {@link CommandLine.ParameterException}. Immutable.
     */
    static final class Refused extends CommandLine.TypeConversionException {
        private static final long serialVersionUID = 1L;
        private final String value;
        private final Refusal refusal;

        Refused(String value, Refusal refusal) {
            super(switch (refusal) {
                case NEGATIVE -> "'" + value + "' is negative (a size is 0 or more bytes, e.g. 4096, 64KiB, 8MiB, 1GiB)";
                case NOT_A_SIZE -> "'" + value + "' is not a size: use e.g. 4096, 64KiB, 8MiB, 1GiB, 1TiB, 1PiB or 1GB";
                case TOO_LARGE -> "'" + value + "' is too large (at most " + Long.MAX_VALUE + " bytes)";
            });
            this.value = value;
            this.refusal = refusal;
        }

        /** @return the value as given on the command line */
        String value() {
            return value;
        }

        /** @return why it was refused */
        Refusal refusal() {
            return refusal;
        }
    }

    /** Digits and a unit suffix, as given (the unit in lower case, empty if none). */
    private record Parts(String digits, String unit) {
    }

    @Override
    public Long convert(String value) {
        String v = value.trim();
        Parts p = parts(v);
        if (p == null) {
            // said as negative, so that the usage message can name the option's own range (UsageErrors)
            throw new Refused(value, v.startsWith("-") && parts(v.substring(1)) != null ? Refusal.NEGATIVE : Refusal.NOT_A_SIZE);
        }
        long n;
        try {
            n = Long.parseLong(p.digits());
        } catch (NumberFormatException e) {
            throw new Refused(value, Refusal.TOO_LARGE);
        }
        String u = p.unit().isEmpty() ? "b" : p.unit();
        boolean binary = u.contains("i") || u.length() == 1;
        long base = binary ? 1024 : 1000;
        int power = switch (u.charAt(0)) {
            case 'k' -> 1;
            case 'm' -> 2;
            case 'g' -> 3;
            case 't' -> 4;
            case 'p' -> 5;
            default -> 0;
        };
        long mult = 1;
        for (int i = 0; i < power; i++) {
            mult *= base;
        }
        try {
            return Math.multiplyExact(n, mult);
        } catch (ArithmeticException e) {
            throw new Refused(value, Refusal.TOO_LARGE);
        }
    }

    /**
     * @param s a trimmed value
     * @return its ASCII digits and unit suffix ({@code b}, or one of {@code k m g t p}, then an optional {@code i}, then
     *     an optional {@code b}; blanks allowed between), or null if it is not that
     */
    private static Parts parts(String s) {
        int i = 0;
        while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
            i++;
        }
        if (i == 0) {
            return null;
        }
        String digits = s.substring(0, i);
        while (i < s.length() && " \t\n\u000B\f\r".indexOf(s.charAt(i)) >= 0) {
            i++;
        }
        StringBuilder unit = new StringBuilder(s.length() - i);
        for (; i < s.length(); i++) {
            char c = s.charAt(i);
            unit.append(c >= 'A' && c <= 'Z' ? (char) (c + ('a' - 'A')) : c); // ASCII only: no other letter is a unit
        }
        return unit.isEmpty() || UNITS.contains(unit.toString()) ? new Parts(digits, unit.toString()) : null;
    }

    private static Set<String> units() {
        Set<String> units = new java.util.HashSet<>(Set.of("b"));
        for (String p : new String[] {"k", "m", "g", "t", "p"}) {
            units.addAll(Set.of(p, p + "i", p + "b", p + "ib"));
        }
        return Set.copyOf(units);
    }

    /**
     * @param bytes a size, at least 0
     * @return it in the largest binary unit it reaches ({@code "3.00 PiB"}, {@code "1023.00 GiB"}, {@code "8.0 MiB"}), or
     *     the next one up where rounding would print 1024 of the smaller ({@code "1.00 PiB"}, not {@code "1024.00 TiB"});
     *     under 1 MiB in bytes
     */
    static String format(long bytes) {
        String[] units = {"PiB", "TiB", "GiB", "MiB"};
        for (int i = 0; i < units.length; i++) {
            int shift = 50 - 10 * i;
            if (bytes >= 1L << shift) {
                String v = String.format(Locale.ROOT, i == units.length - 1 ? "%.1f" : "%.2f", bytes / (double) (1L << shift));
                return i > 0 && Double.parseDouble(v) >= 1024 ? "1.00 " + units[i - 1] : v + " " + units[i];
            }
        }
        return bytes + " bytes";
    }
}
