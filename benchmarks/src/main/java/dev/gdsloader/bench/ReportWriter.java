package dev.gdsloader.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.dataformat.csv.CsvMapper;
import com.fasterxml.jackson.dataformat.csv.CsvSchema;
import dev.gdsloader.formats.json.JsonDocument;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * Writes benchmark results as files: JSON (Jackson) with everything measured, CSV (Jackson CSV) with one
 * row per measurement, a Markdown table, and PNG plots (XChart) with units on every axis. Stateless.
 */
public final class ReportWriter {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private ReportWriter() {
    }

    /**
     * One measurement, flattened for CSV: a path (or the ceiling) at one setting. A value the table prints as "-"
     * (not measured, or not a number) is null here, an empty field in the CSV and "-" in the Markdown, never "NaN".
     */
    @com.fasterxml.jackson.annotation.JsonPropertyOrder({"setting", "path", "taken", "gbps", "minGbps", "maxGbps", "batches",
        "stallMillis", "ceilingRatio", "checksum", "cache", "cpuSecondsPerGigabyte", "recordsPerSecond", "heapBytesPerBatch"})
    private record Line(String setting, String path, String taken, Double gbps, Double minGbps, Double maxGbps,
                        Long batches, Double stallMillis, Double ceilingRatio, String checksum, String cache,
                        Double cpuSecondsPerGigabyte, Double recordsPerSecond, Double heapBytesPerBatch) {
    }

    /** @return {@code v}, or null (an empty CSV field, "-" in the table) where it is not a finite number */
    private static Double finite(double v) {
        return Double.isFinite(v) ? v : null;
    }

    private static List<Line> lines(String setting, BenchReport r) {
        List<Line> out = new ArrayList<>();
        double sampleBytes = sampleBytes(r);
        // as the printed table: the ceilings have no min-max, batches, stall, checksum (raw read) or CPU s/GB
        out.add(new Line(setting, "raw O_DIRECT read", r.ceilingDirect() ? "O_DIRECT" : "buffered", finite(r.ceilingGbps()),
                null, null, null, null, 1.0, null, r.ceilingCold() ? "cold" : "warm", null,
                finite(records(r.ceilingGbps(), sampleBytes)), null));
        if (r.gather() != null) {
            GatherCeiling.Result g = r.gather();
            out.add(new Line(setting, BenchReport.GATHER_ROW, "GATHER", finite(g.gigabytesPerSecond()), null, null, null, null,
                    null, g.byteExact() ? "OK" : "FAILED", "host", null, finite(g.recordsPerSecond()), null));
        }
        for (BenchRow row : r.rows()) {
            out.add(new Line(setting, row.requested().name(), row.taken().name(), finite(row.gbps()), finite(row.minGbps()),
                    finite(row.maxGbps()), row.batches(), finite(row.stallMillis()), finite(row.ceilingRatio()), row.checksum(),
                    row.cold() ? "cold" : "warm", finite(row.cpuSecondsPerGigabyte()), finite(records(row.gbps(), sampleBytes)),
                    finite(row.heapBytesPerBatch())));
        }
        return out;
    }

    /** @return bytes per sample (every column's record), from the gather ceiling where measured, else NaN */
    private static double sampleBytes(BenchReport r) {
        return r.gather() != null ? r.gather().recordBytes() : Double.NaN;
    }

    /** @return records per second at {@code gbps} GB/s, NaN where the sample size is unknown */
    private static double records(double gbps, double sampleBytes) {
        return sampleBytes > 0 ? gbps * 1e9 / sampleBytes : Double.NaN;
    }

    /**
     * Writes {@code bench.json}, {@code bench.csv}, {@code bench.md} and {@code bench.png} (GB/s by path) into
     * {@code dir}.
     *
     * @param report the run's report
     * @param command the command line that produced it, recorded in the JSON and Markdown
     * @param dir output directory (created if missing)
     * @return the files written
     * @throws IOException if a file cannot be written
     */
    public static List<Path> write(BenchReport report, String command, Path dir) throws IOException {
        return write("bench", "GB/s by path", "setting", Map.of("default", report), command, dir);
    }

    /**
     * Writes a sweep: one report per value of a swept setting. Files {@code NAME.json|csv|md|png}; the plot
     * has GB/s against the setting, one series per path plus the ceiling.
     *
     * @param name file name stem
     * @param title plot title
     * @param xLabel name and unit of the swept setting, e.g. "I/O size (KiB)"
     * @param reports report per value, in sweep order (keys are the values as text, numeric for the plot)
     * @param command the command line, recorded
     * @param dir output directory
     * @return the files written
     * @throws IOException if a file cannot be written
     */
    public static List<Path> write(String name, String title, String xLabel, Map<String, BenchReport> reports, String command,
                                   Path dir) throws IOException {
        Files.createDirectories(dir);
        List<Line> all = new ArrayList<>();
        reports.forEach((k, r) -> all.addAll(lines(k, r)));
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("command", command);
        json.put("date", Instant.now().toString());
        json.put("host", host());
        json.put("swept", xLabel);
        json.put("reports", reports);
        Path j = dir.resolve(name + ".json");
        JSON.writeValue(j.toFile(), json);
        Path c = dir.resolve(name + ".csv");
        CsvMapper csv = new CsvMapper();
        CsvSchema schema = csv.schemaFor(Line.class).withHeader();
        csv.writer(schema).writeValue(c.toFile(), all);
        Path m = dir.resolve(name + ".md");
        Files.writeString(m, markdown(title, xLabel, all, command, reports));
        Path p = dir.resolve(name + ".png");
        if (!plot(title, xLabel, reports, p)) {
            return List.of(j, c, m);
        }
        return List.of(j, c, m, p);
    }

    /**
     * Draws the plot of a JSON report written by {@link #write}, next to it ({@code NAME.png}): for machines
     * whose Java runtime has no {@code java.desktop} (the GPU machine's), plots are drawn afterwards elsewhere.
     *
     * @param json a {@code NAME.json} written by this class
     * @return the PNG written
     * @throws IOException if the JSON cannot be read (or is not a regular file: a FIFO would block the read forever)
     *     or the PNG written
     * @throws dev.gdsloader.formats.FormatException if it is not such a report, in one line naming the file, the byte
     *     offset and (for malformed JSON) line and column, or the missing field's name
     */
    public static Path plot(Path json) throws IOException {
        dev.gdsloader.formats.ShardFiles.requireRegularFile(json, "a report"); // a FIFO would block the read forever
        String what = "a report written by bench --out or sweep";
        JsonDocument doc = JsonDocument.parse(Files.readAllBytes(json), json, 0, what + " (a JSON object)");
        JsonDocument.Member all = doc.require("reports", what);
        JsonDocument.checkKeys(all.value(), allKeys(all.value()), java.util.Set.of(), "\"reports\"", json, all.offset());
        if (all.value().isEmpty()) {
            throw new dev.gdsloader.formats.FormatException(json, all.offset(), "\"reports\" with at least one report",
                    "no reports");
        }
        Map<String, BenchReport> reports = new LinkedHashMap<>();
        for (var e : all.value().properties()) {
            JsonNode r = e.getValue();
            String name = "report '" + JsonDocument.quote(e.getKey()) + "'";
            JsonDocument.checkKeys(r, allKeys(r), java.util.Set.of("ceilingGbps", "rows"), name, json, all.offset());
            try {
                BenchReport report = JSON.treeToValue(r, BenchReport.class);
                JsonNode rows = r.get("rows");
                if (report.rows() == null || report.rows().isEmpty() || rows == null) {
                    throw new dev.gdsloader.formats.FormatException(json, all.offset(), name + " with a non-empty \"rows\" list",
                            rows == null || rows.isNull() ? "no rows" : "an empty list");
                }
                for (int i = 0; i < report.rows().size(); i++) {
                    BenchRow row = report.rows().get(i);
                    JsonNode given = rows.get(i);
                    if (row == null || row.requested() == null || row.taken() == null || given == null
                            || !given.hasNonNull("gbps") || !(row.gbps() >= 0) || Double.isInfinite(row.gbps())) {
                        throw new dev.gdsloader.formats.FormatException(json, all.offset(), "row " + i + " of " + name
                                + " with \"requested\" and \"taken\" paths and a \"gbps\" of at least 0",
                                given == null ? "nothing" : given.toString()); // one line: JsonNode prints compactly
                    }
                }
                reports.put(e.getKey(), report);
            } catch (com.fasterxml.jackson.core.JacksonException x) {
                throw new dev.gdsloader.formats.FormatException(json, all.offset(), name + ": "
                        + x.getOriginalMessage().lines().findFirst().orElse(""), x);
            }
        }
        String xLabel = text(doc, "swept", "setting");
        String file = json.getFileName().toString().replaceFirst("\\.json$", "");
        Path png = json.resolveSibling(file + ".png");
        String title = reports.size() == 1 ? "GB/s by path (" + text(doc, "command", "") + ")" : "GB/s against " + xLabel;
        if (!plot(title, xLabel, reports, png)) {
            throw new IOException("this Java runtime has no java.desktop module (AWT), which the plotting library needs");
        }
        return png;
    }

    /** @return the text of a top-level member, or {@code absent} */
    private static String text(JsonDocument doc, String key, String absent) {
        JsonDocument.Member m = doc.members().get(key);
        return m == null ? absent : m.value().asText(absent);
    }

    /** @return the keys of an object node (any key allowed), or none if it is not an object */
    private static java.util.Set<String> allKeys(JsonNode node) {
        java.util.Set<String> keys = new java.util.HashSet<>();
        node.properties().forEach(e -> keys.add(e.getKey()));
        return keys;
    }

    /** @return false where the runtime has no AWT (a jlinked runtime without java.desktop) */
    private static boolean plot(String title, String xLabel, Map<String, BenchReport> reports, Path png) throws IOException {
        try {
            if (reports.size() == 1) {
                barChart(title, reports.values().iterator().next(), png);
            } else {
                lineChart(title, xLabel, reports, png);
            }
            return true;
        } catch (NoClassDefFoundError e) {
            System.err.println("no plot: this Java runtime lacks java.desktop (" + e.getMessage()
                    + "); draw it elsewhere with: gdsloader plot " + png.resolveSibling(
                    png.getFileName().toString().replaceFirst("\\.png$", ".json")));
            return false;
        }
    }

    private static String host() {
        return System.getProperty("os.name") + " " + System.getProperty("os.arch") + ", "
                + Runtime.getRuntime().availableProcessors() + " cores, Java " + Runtime.version();
    }

    private static String markdown(String title, String xLabel, List<Line> all, String command, Map<String, BenchReport> reports) {
        StringBuilder sb = new StringBuilder("## ").append(title).append("\n\n`").append(command).append("`, ")
                .append(Instant.now()).append(", ").append(host()).append("\n\n");
        sb.append("| ").append(reports.size() > 1 ? xLabel + " | " : "")
                .append("path | taken | GB/s | min-max | batches | stall ms | x ceiling | checksum | cache | CPU s/GB | records/s "
                        + "| heap B/batch |\n");
        sb.append("|").append(reports.size() > 1 ? " --- |" : "").append(" --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
                + "| --- |\n");
        for (Line l : all) {
            sb.append("| ").append(reports.size() > 1 ? l.setting() + " | " : "").append(l.path()).append(" | ").append(l.taken())
                    .append(" | ").append(cell("%.3f", l.gbps())).append(" | ")
                    .append(l.minGbps() == null || l.maxGbps() == null ? "-"
                            : String.format(Locale.ROOT, "%.3f-%.3f", l.minGbps(), l.maxGbps()))
                    .append(" | ").append(l.batches() == null ? "-" : l.batches().toString())
                    .append(" | ").append(cell("%.1f", l.stallMillis())).append(" | ").append(cell("%.2f", l.ceilingRatio()))
                    .append(" | ").append(l.checksum() == null ? "-" : l.checksum()).append(" | ").append(l.cache())
                    .append(" | ").append(cell("%.3f", l.cpuSecondsPerGigabyte())).append(" | ")
                    .append(cell("%.0f", l.recordsPerSecond())).append(" | ").append(cell("%.0f", l.heapBytesPerBatch()))
                    .append(" |\n");
        }
        return sb.toString();
    }

    /** @return {@code v} formatted, or "-" where it is absent (null) */
    private static String cell(String format, Double v) {
        return v == null ? "-" : String.format(Locale.ROOT, format, v);
    }

    private static void barChart(String title, BenchReport r, Path png) throws IOException {
        CategoryChart chart = new CategoryChartBuilder().width(800).height(500).title(title)
                .xAxisTitle("path").yAxisTitle("throughput (GB/s, 1e9 bytes/s)").build();
        chart.getStyler().setLegendVisible(false);
        List<String> names = new ArrayList<>();
        List<Double> values = new ArrayList<>();
        names.add("raw O_DIRECT");
        values.add(r.ceilingGbps());
        for (BenchRow row : r.rows()) {
            names.add(row.requested() + " (" + row.taken() + ")");
            values.add(row.gbps());
        }
        chart.addSeries("GB/s", names, values);
        BitmapEncoder.saveBitmap(chart, png.toString(), BitmapEncoder.BitmapFormat.PNG);
    }

    private static void lineChart(String title, String xLabel, Map<String, BenchReport> reports, Path png) throws IOException {
        XYChart chart = new XYChartBuilder().width(800).height(500).title(title).xAxisTitle(xLabel)
                .yAxisTitle("throughput (GB/s, 1e9 bytes/s)").build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
        chart.getStyler().setXAxisLogarithmic(xLabel.contains("KiB")); // sizes span decades
        List<Double> xs = new ArrayList<>();
        reports.keySet().forEach(k -> xs.add(Double.parseDouble(k)));
        Map<String, List<Double>> series = new LinkedHashMap<>();
        series.put("raw O_DIRECT", new ArrayList<>());
        for (BenchReport r : reports.values()) {
            series.get("raw O_DIRECT").add(r.ceilingGbps());
            for (BenchRow row : r.rows()) {
                series.computeIfAbsent(row.requested() + " (" + row.taken() + ")", k -> new ArrayList<>()).add(row.gbps());
            }
        }
        series.forEach((n, ys) -> {
            if (ys.size() == xs.size()) {
                chart.addSeries(n, xs, ys);
            }
        });
        BitmapEncoder.saveBitmap(chart, png.toString(), BitmapEncoder.BitmapFormat.PNG);
    }
}
