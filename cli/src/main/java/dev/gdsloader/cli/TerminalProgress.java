package dev.gdsloader.cli;

import dev.gdsloader.bench.BenchProgress;
import java.io.PrintStream;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;

/**
 * A progress bar on the terminal (me.tongfei progressbar) for long runs; where standard output is not a
 * terminal (CI, pipes), one line per step instead.
 */
final class TerminalProgress implements BenchProgress {
    private final String task;
    private final PrintStream err;
    private final BenchProgress lines;
    private ProgressBar bar;

    @SuppressWarnings("SystemConsoleNull") // JDK 25 returns null without a terminal; isTerminal() covers the rest
    TerminalProgress(String task) {
        this.task = task;
        this.err = System.err;
        this.lines = System.console() == null || !System.console().isTerminal() ? BenchProgress.lines(System.out) : null;
    }

    @Override
    public void start(int steps) {
        if (lines != null) {
            lines.start(steps);
            return;
        }
        bar = new ProgressBarBuilder().setTaskName(task).setInitialMax(steps)
                .setConsumer(new ConsoleProgressBarConsumer(err)).build();
    }

    @Override
    public void step(String what) {
        if (lines != null) {
            lines.step(what);
            return;
        }
        if (bar != null) {
            if (bar.getCurrent() > 0 || !what.isEmpty()) {
                bar.setExtraMessage(what);
            }
            bar.step();
        }
    }

    @Override
    public void finish() {
        if (bar != null) {
            bar.close();
            bar = null;
        }
    }
}
