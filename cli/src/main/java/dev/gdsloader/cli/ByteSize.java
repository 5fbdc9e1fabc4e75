package dev.gdsloader.cli;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * Parses sizes such as {@code 4096}, {@code 64KiB}, {@code 8MiB}, {@code 1GiB}, {@code 2TiB}, {@code 1PiB} (powers of
 * 1024) and {@code 1GB} ... {@code 1PB} (powers of 1000) into bytes, for command-line options; a size beyond a
 * {@code long} ({@value Long#MAX_VALUE} bytes, 8 EiB) is refused as too large, and a negative one as negative, naming
 * the value (the usage message then names the option's declared {@link Checks.Range} where it has one).
 */
final class ByteSize implements CommandLine.ITypeConverter<Long> {
    private static final Pattern P = Pattern.compile("(\\d+)\\s*([kmgtp]i?b?|b)?", Pattern.CASE_INSENSITIVE);

    @Override
    public Long convert(String value) {
        Matcher m = P.matcher(value.trim());
        if (!m.matches() && value.trim().startsWith("-") && P.matcher(value.trim().substring(1)).matches()) {
            // said as negative, so that the usage message can name the option's own range (GdsLoaderMain)
            throw new CommandLine.TypeConversionException("'" + value + "' is negative (a size is 0 or more bytes, e.g. 4096, 64KiB, 8MiB, 1GiB)");
        }
        if (!m.matches()) {
            throw new CommandLine.TypeConversionException("'" + value + "' is not a size: use e.g. 4096, 64KiB, 8MiB, 1GiB, 1TiB, 1PiB or 1GB");
        }
        long n;
        try {
            n = Long.parseLong(m.group(1));
        } catch (NumberFormatException e) {
            throw new CommandLine.TypeConversionException("'" + value + "' is too large (at most " + Long.MAX_VALUE + " bytes)");
        }
        String u = m.group(2) == null ? "b" : m.group(2).toLowerCase(Locale.ROOT);
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
            throw new CommandLine.TypeConversionException("'" + value + "' is too large (at most " + Long.MAX_VALUE + " bytes)");
        }
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
