package dev.gdsloader.cli;

import dev.gdsloader.formats.StagedFiles;
import java.io.IOException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

/**
 * Runs a dataset writer ({@code generate}, {@code convert}) whose files are staged ({@link StagedFiles}) with a
 * shutdown hook for SIGTERM and Ctrl-C: the hook aborts the stagings (waiting for a commit under way to finish), so
 * the output keeps its previous files or holds the whole new dataset, removes the output directories this run made if
 * they are left empty, and prints one line saying so. Not reentrant: one run per JVM at a time.
 */
final class StagedRun {
    private StagedRun() {
    }

    /**
     * @param command the command's name, for the line printed when stopped
     * @param out the output directory (it may not exist yet)
     * @param body the writer
     * @param <T> the writer's result
     * @return the writer's result
     * @throws Exception what the writer throws; when the JVM is stopping under it, this thread waits for the exit
     *     instead (the files were removed under the writer: its error is not news)
     */
    static <T> T run(String command, Path out, Callable<T> body) throws Exception {
        boolean madeOut = !Files.exists(out);
        AtomicBoolean done = new AtomicBoolean();
        AtomicBoolean stopped = new AtomicBoolean();
        Thread hook = new Thread(() -> {
            if (!done.get()) {
                stopped.set(true);
                System.err.println("gdsloader " + command + ": interrupted: " + stop(out, madeOut));
            }
        }, "gdsloader-" + command + "-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            return body.call();
        } catch (Exception e) {
            if (stopped.get()) {
                Thread.currentThread().join();
            }
            throw e;
        } finally {
            done.set(true);
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // the hook runs now; it aborts only what was not committed
            }
        }
    }

    /**
     * Aborts this JVM's open stagings and removes the empty directories under {@code out} (and {@code out}) if this run
     * made {@code out}.
     *
     * @param out the output directory
     * @param madeByThisRun whether it did not exist before this run
     * @return one line saying what was removed and what {@code out} holds
     */
    static String stop(Path out, boolean madeByThisRun) {
        java.util.List<StagedFiles> open = StagedFiles.open();
        int removed = StagedFiles.abortAll(); // waits for a commit under way
        String line = open.stream().anyMatch(s -> !s.committed())
                ? "removed " + removed + " staged file(s) of the unfinished dataset; " + out + " keeps its previous files"
                : "the new files in " + out + " were complete and are kept";
        if (madeByThisRun && Files.isDirectory(out)) {
            try (Stream<Path> all = Files.walk(out)) {
                for (Path d : all.filter(Files::isDirectory).sorted(Comparator.reverseOrder()).toList()) {
                    Files.delete(d); // deepest first; a directory holding files throws, and it and its parents stay
                }
                line += ", and the directory, which this run had made and left empty, is removed";
            } catch (DirectoryNotEmptyException e) {
                line += "; the directory holds other files and stays";
            } catch (IOException e) {
                line += "; the directory stays (" + e.getClass().getSimpleName() + ")";
            }
        }
        return line;
    }
}
