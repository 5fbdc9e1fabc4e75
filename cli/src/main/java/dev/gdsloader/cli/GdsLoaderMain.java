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
            LatencyCommand.class, RandomCommand.class, AsyncReadCommand.class, SweepCommand.class, PlotCommand.class, InspectCommand.class, VerifyCommand.class,
            ServeCommand.class,
            CommandLine.HelpCommand.class})
public final class GdsLoaderMain {
    /** Held so the level set on it stays (java.util.logging keeps loggers weakly). */
    private static final java.util.logging.Logger QUIET_ARROW = java.util.logging.Logger.getLogger("org.apache.arrow");

    private GdsLoaderMain() {
    }

    /**
     * @param args command-line arguments
     */
    public static void main(String[] args) {
        // one line per log record: "INFO: gdsloader path ..." (java.util.logging.SimpleFormatter)
        System.setProperty("java.util.logging.SimpleFormatter.format", "%4$s: %5$s%6$s%n");
        QUIET_ARROW.setLevel(java.util.logging.Level.WARNING); // Arrow Java's allocator chatter
        CommandLine cl = new CommandLine(new GdsLoaderMain());
        cl.setExecutionExceptionHandler(GdsLoaderMain::failed);
        int status;
        try {
            status = cl.execute(args);
        } catch (OutOfMemoryError e) {
            System.err.println("gdsloader: " + message(e));
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

    /** {@code gdsloader convert idx}: the command's full name, starting with gdsloader. */
    static String prefix(CommandLine cmd) {
        String q = cmd.getCommandSpec().qualifiedName(" ");
        return q.startsWith("gdsloader") ? q : "gdsloader " + q;
    }

    /** Says what went wrong in one line; file-system exceptions carry only a path, so the reason is added. */
    static String message(Throwable t) {
        if (t instanceof java.nio.file.NoSuchFileException e) {
            return e.getFile() + ": no such file or directory";
        }
        if (t instanceof java.nio.file.FileAlreadyExistsException e) {
            return e.getFile() + ": already exists";
        }
        if (t instanceof java.nio.file.AccessDeniedException e) {
            return e.getFile() + ": permission denied";
        }
        if (t instanceof java.nio.file.NotDirectoryException e) {
            return e.getFile() + ": not a directory";
        }
        if (t instanceof java.nio.file.FileSystemException e && e.getReason() == null) {
            return e.getFile() + ": " + e.getClass().getSimpleName();
        }
        if (t instanceof OutOfMemoryError) {
            return "out of memory: " + t.getMessage() + " (use smaller sizes, or more heap with GDSLOADER_JAVA_OPTS=-Xmx...)";
        }
        String m = t.getMessage();
        return m == null ? t.toString() : m;
    }
}
