package dev.gdsloader.cli;

import java.util.function.Function;
import picocli.CommandLine;

/**
 * picocli converters for the whole-number option types ({@code int}, {@code Integer}, {@code long}, {@code Long}),
 * registered on the command line by {@link #registerOn}: they accept what picocli's own accept (decimal digits with an
 * optional sign, {@link Integer#valueOf(String)}, {@link Long#valueOf(String)}) and refuse the rest with a
 * {@link Refused} that carries the value and the type's bounds, so that the usage message can name the option's
 * declared {@link Checks.Range} instead of the Java type ({@link UsageErrors}). Stateless.
 */
final class WholeNumber {
    private WholeNumber() {
    }

    /**
     * A value that is not a whole number of the option's type. picocli puts it as the cause of its
     * {@link CommandLine.ParameterException}. Immutable.
     */
    static final class Refused extends CommandLine.TypeConversionException {
        private static final long serialVersionUID = 1L;
        private final String value;
        private final long min;
        private final long max;

        Refused(String value, long min, long max) {
            super("'" + value + "' is not a whole number in " + min + ".." + max);
            this.value = value;
            this.min = min;
            this.max = max;
        }

        /** @return the value as given on the command line */
        String value() {
            return value;
        }

        /** @return the type's bounds, {@code min..max} */
        String typeRange() {
            return min + ".." + max;
        }

        /** @return whether the value is written as a whole number (digits with an optional sign), only too large */
        boolean outOfRange() {
            String s = value.strip();
            int first = s.startsWith("+") || s.startsWith("-") ? 1 : 0;
            if (s.length() == first) {
                return false;
            }
            for (int i = first; i < s.length(); i++) {
                if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                    return false;
                }
            }
            return true;
        }
    }

    /**
     * Registers the converters on a command line and the subcommands it has now (picocli's
     * {@link CommandLine#registerConverter}); an option with its own {@code converter} keeps it.
     *
     * @param cl the command line, with its subcommands added
     */
    static void registerOn(CommandLine cl) {
        CommandLine.ITypeConverter<Integer> ints = v -> parse(v, Integer::valueOf, Integer.MIN_VALUE, Integer.MAX_VALUE);
        CommandLine.ITypeConverter<Long> longs = v -> parse(v, Long::valueOf, Long.MIN_VALUE, Long.MAX_VALUE);
        cl.registerConverter(Integer.class, ints);
        cl.registerConverter(Integer.TYPE, ints);
        cl.registerConverter(Long.class, longs);
        cl.registerConverter(Long.TYPE, longs);
    }

    private static <T> T parse(String value, Function<String, T> valueOf, long min, long max) {
        try {
            return valueOf.apply(value);
        } catch (NumberFormatException e) {
            throw new Refused(value, min, max);
        }
    }
}
