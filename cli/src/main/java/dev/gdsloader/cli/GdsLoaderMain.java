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
        try { // gds-loader's own log lines: WARNING and above unless -Dgdsloader.log=INFO (or FINE) asks for more
            dev.gdsloader.memory.GdsLogging.init();
        } catch (IllegalArgumentException e) {
            System.err.println("gdsloader: " + e.getMessage());
            System.exit(2);
        }
        QUIET_ARROW.setLevel(java.util.logging.Level.WARNING); // Arrow Java's allocator chatter
        ONE_LINE_GRPC.setFilter(r -> {
            if (r.getThrown() != null) {
                r.setMessage(r.getMessage() + ": " + r.getThrown().getMessage());
                r.setThrown(null);
            }
            return true;
        });
        CommandLine cl = configure(new CommandLine(new GdsLoaderMain()));
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
     * Sets up a command line as {@code gdsloader} runs it: an argument {@code @FILE} is an option's value
     * ({@code serve --cluster @FILE}), not picocli's argument file; whole numbers are converted by
     * {@link WholeNumber}; a parse error is one line ({@link UsageErrors}) and so is a failure ({@link #failed}), both
     * exit 2.
     *
     * @param cl a command line over {@code gdsloader} or one of its subcommands, with its subcommands added
     * @return {@code cl}
     */
    static CommandLine configure(CommandLine cl) {
        cl.setExpandAtFiles(false);
        cl.setExecutionExceptionHandler(GdsLoaderMain::failed);
        cl.setParameterExceptionHandler(new UsageErrors());
        WholeNumber.registerOn(cl);
        return cl;
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
