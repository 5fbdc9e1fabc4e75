package dev.gdsloader.cli;

import dev.gdsloader.bench.ReportWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader plot}: draws the PNG of saved JSON reports.
 */
@Command(name = "plot", mixinStandardHelpOptions = true,
        description = "Draw NAME.png next to each NAME.json written by bench --out or sweep (for runs on machines without AWT).")
final class PlotCommand implements Callable<Integer> {
    @Parameters(arity = "1..*", description = "JSON reports")
    List<Path> reports;

    @Override
    public Integer call() throws Exception {
        for (Path r : reports) {
            Path png;
            try {
                png = ReportWriter.plot(r);
            } catch (java.io.FileNotFoundException e) {
                throw new java.io.IOException(r + ": cannot be read: " + e.getMessage().lines().findFirst().orElse(""), e);
            } catch (RuntimeException e) {
                throw new java.io.IOException(r + ": not a report written by bench --out or sweep ("
                        + GdsLoaderMain.message(e).lines().findFirst().orElse("") + ")", e);
            }
            System.out.println("wrote " + png);
        }
        return 0;
    }
}
