package dev.gdsloader.cli;

import dev.gdsloader.bench.BenchConfig;
import dev.gdsloader.bench.BenchReport;
import dev.gdsloader.bench.BenchRunner;
import dev.gdsloader.bench.ReportWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader sweep}: the bench at several values of one setting, with a plot of GB/s against it.
 */
@Command(name = "sweep", mixinStandardHelpOptions = true,
        description = "Run the bench (every path plus the raw O_DIRECT ceiling, same run) at each value of one setting: "
                + "io-size, threads or depth; print a row per value and path, and write sweep-SETTING.json/csv/md/png.")
final class SweepCommand implements Callable<Integer>, RangedOptions {
    /** The settings a sweep can vary. */
    enum Setting { IO_SIZE, THREADS, DEPTH }

    @Parameters(arity = "1", description = "dataset directory")
    Path data;

    @Option(names = "--vary", required = true, description = "io-size, threads or depth", converter = SettingConverter.class)
    Setting vary;

    @Option(names = "--values", required = true, split = ",",
            description = "values: sizes like 64KiB,1MiB,8MiB for io-size; counts for threads and depth")
    List<String> values;

    @picocli.CommandLine.Mixin
    BenchOptions options = new BenchOptions();

    @Option(names = "--out", defaultValue = ".", description = "directory for the report files (default: ${DEFAULT-VALUE})")
    Path out;

    @Override
    public java.util.List<Checks.Range> ranges() {
        return BenchOptions.RANGES;
    }

    @Override
    public Integer call() throws Exception {
        Map<String, BenchReport> reports = new LinkedHashMap<>();
        ByteSize sizes = new ByteSize();
        boolean ok = true;
        // every value and option is checked, and --out made writable, before the first run
        List<BenchConfig> configs = new java.util.ArrayList<>();
        for (String v : values) {
            long io;
            int t;
            int d;
            try {
                io = vary == Setting.IO_SIZE ? sizes.convert(v) : options.ioSize;
                t = vary == Setting.THREADS ? Integer.parseInt(v.trim()) : options.threads;
                d = vary == Setting.DEPTH ? Integer.parseInt(v.trim()) : options.depth;
            } catch (RuntimeException e) {
                throw new IllegalArgumentException("--values: '" + v + "' is not a " + (vary == Setting.IO_SIZE ? "size" : "count"));
            }
            configs.add(options.config(data, t, io, d));
        }
        options.requireGpuForPaths();
        Checks.usableOutputDir("--out", out);
        for (int i = 0; i < values.size(); i++) {
            String v = values.get(i);
            BenchConfig config = configs.get(i);
            long io = config.loader().maxIoBytes();
            System.out.println("=== " + label() + " = " + v);
            BenchReport r = BenchRunner.run(config, new TerminalProgress(label() + " " + v));
            r.print(System.out);
            ok &= r.allChecksumsOk();
            String x = vary == Setting.IO_SIZE ? String.format(Locale.ROOT, "%d", io / 1024) : v.trim();
            reports.put(x, r);
        }
        String command = "gdsloader sweep " + data + " --vary " + label() + " --values " + String.join(",", values);
        String axis = switch (vary) {
            case IO_SIZE -> "largest read (KiB)";
            case THREADS -> "I/O threads";
            case DEPTH -> "prefetch depth (slots)";
        };
        System.out.println("wrote " + ReportWriter.write("sweep-" + label(), "GB/s against " + axis, axis, reports, command, out));
        return ok ? 0 : 1;
    }

    private String label() {
        return vary.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** Accepts io-size, threads, depth (any case, - or _). */
    static final class SettingConverter implements picocli.CommandLine.ITypeConverter<Setting> {
        @Override
        public Setting convert(String value) {
            try {
                return Setting.valueOf(value.trim().toUpperCase(Locale.ROOT).replace('-', '_'));
            } catch (IllegalArgumentException e) {
                throw new picocli.CommandLine.TypeConversionException("'" + value + "' is not io-size, threads or depth");
            }
        }
    }
}
