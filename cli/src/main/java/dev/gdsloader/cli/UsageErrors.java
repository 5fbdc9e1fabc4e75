package dev.gdsloader.cli;

import java.io.PrintWriter;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import picocli.CommandLine;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.OptionSpec;

/**
 * picocli's parameter-exception handler for every command: instead of the whole usage text, one line
 * {@code gdsloader COMMAND: OPTION: what was wrong, what is accepted} and a pointer to {@code --help}, exit 2. The line
 * is built from what picocli's exception carries (the option, the value, the converter's typed refusal, the enum's
 * constants), never from picocli's message text; a whole number or size that does not fit the option's Java type is
 * said against the option's declared {@link Checks.Range} where it has one ({@link Checks.Range#declared}). Stateless
 * and thread-safe.
 */
final class UsageErrors implements CommandLine.IParameterExceptionHandler {
    /**
     * Prints the one line and the pointer to {@code --help} on the command's error stream; with
     * {@code -Dgdsloader.debug=true} also the stack trace.
     *
     * @param ex what picocli could not parse
     * @param args the command line
     * @return 2
     */
    @Override
    public int handleParseException(CommandLine.ParameterException ex, String[] args) {
        CommandLine cmd = ex.getCommandLine();
        PrintWriter err = cmd.getErr();
        err.println(GdsLoaderMain.prefix(cmd) + ": " + message(ex, args));
        err.println("(see " + GdsLoaderMain.prefix(cmd) + " --help)");
        if (Boolean.getBoolean("gdsloader.debug")) {
            ex.printStackTrace(err);
        }
        return 2;
    }

    /**
     * @param ex what picocli could not parse
     * @param args the command line it parsed
     * @return the option (or parameter) and what was wrong with it, without Java class names, e.g.
     *     {@code --threads: '99999999999' is out of range: must be 1..256}
     */
    static String message(CommandLine.ParameterException ex, String[] args) {
        if (ex instanceof CommandLine.MissingParameterException mp && !mp.getMissing().isEmpty()) {
            ArgSpec a = mp.getMissing().get(0);
            if (a instanceof OptionSpec o && given(o, args)) {
                return name(a) + ": needs a value";
            }
            return name(a) + ": missing; " + (a.isOption() ? "this option is required" : "this argument is required");
        }
        if (ex instanceof CommandLine.UnmatchedArgumentException u && !u.getUnmatched().isEmpty()) {
            String first = u.getUnmatched().get(0);
            return first + ": " + (first.startsWith("-") ? "unknown option" : "unexpected argument");
        }
        ArgSpec a = ex.getArgSpec();
        String m = ex.getMessage() == null ? ex.toString() : ex.getMessage();
        if (a == null) {
            return m;
        }
        String option = name(a);
        Optional<Checks.Range> declared = Checks.Range.declared(ex.getCommandLine().getCommand(), option);
        Throwable cause = ex.getCause();
        if (cause instanceof ByteSize.Refused r) {
            if (r.refusal() != ByteSize.Refusal.NOT_A_SIZE && declared.isPresent()) { // as the command's own check says it
                return declared.get().option() + " must be " + declared.get().text() + ", got " + r.value();
            }
            return option + ": " + r.getMessage();
        }
        if (cause instanceof WholeNumber.Refused w) { // the option's own range, not its Java type's
            return option + ": '" + w.value() + "' is " + (declared.isEmpty() ? "not a whole number in " + w.typeRange()
                    : (w.outOfRange() ? "out of range: must be " : "not a whole number in ") + declared.get().text());
        }
        if (cause instanceof CommandLine.TypeConversionException && a.converters().length > 0) {
            return option + ": " + cause.getMessage(); // the option's own converter's words
        }
        Class<?> type = elementType(a);
        if (cause instanceof CommandLine.TypeConversionException && type.isEnum()) {
            return option + ": '" + ex.getValue() + "' is not one of " + Arrays.stream(type.getEnumConstants())
                    .map(String::valueOf).collect(Collectors.joining(", ")) + " (upper case)";
        }
        if (cause != null) { // picocli's converter of a JDK type (a double, a path with a NUL): the type, no class names
            return option + ": '" + ex.getValue() + "' is not a " + type.getSimpleName().toLowerCase(java.util.Locale.ROOT);
        }
        return option + ": " + m;
    }

    /** @return whether the option's name stands on the command line (alone, or as {@code NAME=VALUE}) */
    private static boolean given(OptionSpec o, String[] args) {
        List<String> names = List.of(o.names());
        return args != null && Arrays.stream(args).anyMatch(s -> names.contains(s.contains("=") ? s.substring(0, s.indexOf('=')) : s));
    }

    /** @return the type of one value of the option: the element type of a list or array option */
    private static Class<?> elementType(ArgSpec a) {
        Class<?>[] aux = a.auxiliaryTypes();
        return aux.length > 0 ? aux[aux.length - 1] : a.type();
    }

    private static String name(ArgSpec a) {
        return a instanceof OptionSpec o ? o.longestName() : a.paramLabel();
    }
}
