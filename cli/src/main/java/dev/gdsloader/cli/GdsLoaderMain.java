package dev.gdsloader.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code gdsloader}: the command line over the library. Each subcommand is a thin shell over library
 * calls; exit status 0 on success, 1 when a check failed (a checksum mismatch), 2 on bad usage or input.
 */
@Command(name = "gdsloader", mixinStandardHelpOptions = true, version = "gdsloader 0.1.0",
        description = "GPUDirect Storage data loader: sharded training data from NVMe into GPU memory.",
        subcommands = {DoctorCommand.class, GenerateCommand.class, ConvertCommand.class, BenchCommand.class,
            ChecksumCommand.class, OverlapCommand.class, RanksCommand.class,
            LatencyCommand.class, RandomCommand.class, P2pCommand.class, FanOutCommand.class, SweepCommand.class, PlotCommand.class, InspectCommand.class, VerifyCommand.class,
            ServeCommand.class,
            ServeBenchCommand.class,
            CommandLine.HelpCommand.class})
public final class GdsLoaderMain {
    /** Held so the level set on it stays (java.util.logging keeps loggers weakly). */
    private static final java.util.logging.Logger QUIET_ARROW = java.util.logging.Logger.getLogger("org.apache.arrow");
    /**
     * gRPC logs a client's bad message (e.g. larger than {@code serve --max-message}) with its stack trace; the client is
     * told why (RESOURCE_EXHAUSTED ...), so the server's console gets one line, not a trace per bad message.
     */
    private static final java.util.logging.Logger ONE_LINE_GRPC = java.util.logging.Logger.getLogger("io.grpc.netty.NettyServerStream");

    private GdsLoaderMain() {
    }

    /**
     * @param args command-line arguments
     */
    public static void main(String[] args) {
        // one line per log record: "INFO: gdsloader path ..." (java.util.logging.SimpleFormatter)
        System.setProperty("java.util.logging.SimpleFormatter.format", "%4$s: %5$s%6$s%n");
        QUIET_ARROW.setLevel(java.util.logging.Level.WARNING); // Arrow Java's allocator chatter
        ONE_LINE_GRPC.setFilter(r -> {
            if (r.getThrown() != null) {
                r.setMessage(r.getMessage() + ": " + r.getThrown().getMessage());
                r.setThrown(null);
            }
            return true;
        });
        CommandLine cl = new CommandLine(new GdsLoaderMain());
        cl.setExpandAtFiles(false); // "@FILE" is an option's value (serve --cluster @FILE), not picocli's argument file
        cl.setExecutionExceptionHandler(GdsLoaderMain::failed);
        cl.setParameterExceptionHandler(GdsLoaderMain::badUsage);
        int status;
        try {
            status = cl.execute(args);
        } catch (OutOfMemoryError e) {
            System.err.println("gdsloader: " + message(e));
            status = 2;
        } catch (ExceptionInInitializerError e) {
            // a bad -D setting read once per JVM (e.g. gdsloader.memory.hostLimit): one line, not a stack trace
            System.err.println("gdsloader: " + message(e.getCause() != null ? e.getCause() : e));
            status = 2;
        }
        System.exit(status);
    }

    /**
     * The execution-exception handler: one line {@code gdsloader SUBCOMMAND: what went wrong}, exit 2.
     *
     * @param ex what the command threw
     * @param cmd the (sub)command that threw it
     * @param parsed the parse result
     * @return 2
     */
    static int failed(Exception ex, CommandLine cmd, CommandLine.ParseResult parsed) {
        cmd.getErr().println(prefix(cmd) + ": " + message(ex));
        if (Boolean.getBoolean("gdsloader.debug")) {
            ex.printStackTrace(cmd.getErr());
        }
        return 2;
    }

    /**
     * The parameter-exception handler: instead of the whole usage text, one line
     * {@code gdsloader COMMAND: OPTION: what was wrong, what is accepted} and a pointer to {@code --help}, exit 2.
     *
     * @param ex what picocli could not parse
     * @param args the command line
     * @return 2
     */
    static int badUsage(CommandLine.ParameterException ex, String[] args) {
        CommandLine cmd = ex.getCommandLine();
        java.io.PrintWriter err = cmd.getErr();
        err.println(prefix(cmd) + ": " + usageMessage(ex));
        err.println("(see " + prefix(cmd) + " --help)");
        if (Boolean.getBoolean("gdsloader.debug")) {
            ex.printStackTrace(err);
        }
        return 2;
    }

    private static final java.util.regex.Pattern INVALID = java.util.regex.Pattern.compile(
            "Invalid value for (?:option|positional parameter at index \\S+) '?([^':]+?)'?(?: \\([^)]*\\))?: (.*)", java.util.regex.Pattern.DOTALL);
    private static final java.util.regex.Pattern ENUM = java.util.regex.Pattern.compile(
            "expected one of \\[(.*)\\] \\(case-sensitive\\) but was '(.*)'", java.util.regex.Pattern.DOTALL);
    private static final java.util.regex.Pattern NOT_A = java.util.regex.Pattern.compile("'(.*)' is not an? (int|long|short|byte)");
    /** A {@link ByteSize} refusal of a size outside every option's range: negative, or beyond a long. */
    private static final java.util.regex.Pattern SIZE_OUT = java.util.regex.Pattern.compile("'(.*)' is (?:negative|too large) \\(.*\\)");
    private static final java.util.regex.Pattern CLASS_NAMES = java.util.regex.Pattern.compile(
            "\\s*\\((?:java|javax|picocli|dev)\\.[^)]*\\)|(?:java|javax|picocli)\\.[\\w.$]+(?:Exception|Error): ?");

    /** The option (or parameter) and what was wrong with it, without Java class names. */
    static String usageMessage(CommandLine.ParameterException ex) {
        String m = ex.getMessage() == null ? ex.toString() : ex.getMessage();
        String option = null;
        if (m.startsWith("Missing required parameter for option") && ex instanceof CommandLine.MissingParameterException mp
                && !mp.getMissing().isEmpty()) {
            return name(mp.getMissing().get(0)) + ": needs a value";
        }
        if (ex instanceof CommandLine.MissingParameterException mp && !mp.getMissing().isEmpty()) {
            CommandLine.Model.ArgSpec a = mp.getMissing().get(0);
            return name(a) + ": missing; " + (a.isOption() ? "this option is required" : "this argument is required");
        }
        if (ex instanceof CommandLine.UnmatchedArgumentException u && !u.getUnmatched().isEmpty()) {
            String first = u.getUnmatched().get(0);
            return first + ": " + (first.startsWith("-") ? "unknown option" : "unexpected argument");
        }
        if (ex.getArgSpec() != null) {
            option = name(ex.getArgSpec());
        }
        java.util.regex.Matcher im = INVALID.matcher(m);
        String what = m;
        if (im.matches()) {
            option = option != null ? option : im.group(1);
            what = im.group(2);
        }
        java.util.regex.Matcher em = ENUM.matcher(what);
        if (em.matches()) {
            what = "'" + em.group(2) + "' is not one of " + em.group(1) + " (upper case)";
        }
        java.util.regex.Matcher nm = NOT_A.matcher(what);
        java.util.Optional<Checks.Range> declared = option == null ? java.util.Optional.empty()
                : Checks.Range.declared(ex.getCommandLine() == null ? null : ex.getCommandLine().getCommand(), option);
        java.util.regex.Matcher sm = SIZE_OUT.matcher(what);
        if (sm.matches() && declared.isPresent()) { // as the command's own check says it: the option and its range
            return declared.get().option() + " must be " + declared.get().text() + ", got " + sm.group(1);
        }
        if (nm.matches() && declared.isPresent()) { // the option's own range, not its Java type's
            what = "'" + nm.group(1) + "' is " + (nm.group(1).strip().matches("[+-]?\\d+") ? "out of range: must be "
                    : "not a whole number in ") + declared.get().text();
        } else if (nm.matches()) {
            String range = switch (nm.group(2)) {
                case "long" -> Long.MIN_VALUE + ".." + Long.MAX_VALUE;
                case "short" -> Short.MIN_VALUE + ".." + Short.MAX_VALUE;
                case "byte" -> Byte.MIN_VALUE + ".." + Byte.MAX_VALUE;
                default -> Integer.MIN_VALUE + ".." + Integer.MAX_VALUE;
            };
            what = "'" + nm.group(1) + "' is not a whole number in " + range;
        }
        if (what.startsWith("Missing required parameter for option")) {
            what = "needs a value";
        }
        what = CLASS_NAMES.matcher(what).replaceAll("").strip();
        return option != null && !what.startsWith(option + ":") ? option + ": " + what : what;
    }

    private static String name(CommandLine.Model.ArgSpec a) {
        return a instanceof CommandLine.Model.OptionSpec o ? o.longestName() : a.paramLabel();
    }

    /** {@code gdsloader convert idx}: the command's full name, starting with gdsloader. */
    static String prefix(CommandLine cmd) {
        String q = cmd.getCommandSpec().qualifiedName(" ");
        return q.startsWith("gdsloader") ? q : "gdsloader " + q;
    }

    /** Says what went wrong in one line; file-system exceptions carry only a path, so the reason is added. */
    static String message(Throwable t) {
        if (t instanceof OutOfMemoryError) {
            return "out of memory: " + t.getMessage() + " (use smaller sizes, or more heap with GDSLOADER_JAVA_OPTS=-Xmx...)";
        }
        return dev.gdsloader.loader.ErrorMessages.of(t);
    }
}
