package dev.gdsloader.cli;

import dev.gdsloader.bench.ReportWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader plot}: draws the PNG of saved JSON reports. Every report is tried: each bad one is named in one
 * line on the error stream, the good ones are drawn, and the exit code is 2 if any was bad (0 otherwise).
 */
@Command(name = "plot", mixinStandardHelpOptions = true,
        description = "Draw NAME.png next to each NAME.json written by bench --out or sweep (for runs on machines without AWT). "
                + "Every report is tried: each bad one is named in one line, the others are drawn; exit 2 if any was bad.")
final class PlotCommand implements Callable<Integer> {
    @Parameters(arity = "1..*", description = "JSON reports")
    List<Path> reports;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        int exit = 0;
        for (Path r : reports) {
            try {
                System.out.println("wrote " + plot(r));
            } catch (java.io.IOException e) {
                exit = GdsLoaderMain.failed(e, spec.commandLine(), null); // one line naming the file; 2
            }
        }
        return exit;
    }

    private static Path plot(Path r) throws java.io.IOException {
        try {
            return ReportWriter.plot(r);
        } catch (java.io.FileNotFoundException e) {
            throw new java.io.IOException(r + ": cannot be read: " + e.getMessage().lines().findFirst().orElse(""), e);
        } catch (RuntimeException e) {
            throw new java.io.IOException(r + ": not a report written by bench --out or sweep ("
                    + GdsLoaderMain.message(e).lines().findFirst().orElse("") + ")", e);
        }
    }
}
