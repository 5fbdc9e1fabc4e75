/**
 * The benchmarks: the {@code bench} harness (every read path against the raw read ceiling, checked by CRC32C), the
 * ceilings and sweeps the CLI runs, and JMH microbenchmarks of the host-side hot loops ({@code .jmh}).
 *
 * <p>A named module so that javac holds it to the loader's exported API: besides that, it reads only what the loader
 * exports to it by name (the read planner's package for the planning microbenchmark and {@code Alignment}; the
 * gather kernel for the gather ceiling). XChart 3.8.8 is the automatic module {@code org.knowm.xchart} (its manifest
 * names it); JMH 1.37 ships neither a descriptor nor that manifest entry, so it is the automatic module
 * {@code jmh.core}, named from its file name, hence the narrow suppression of the automatic-requirement lint. The
 * JMH annotation processor's generated classes ({@code .jmh.jmh_generated}) compile into this module. Jackson writes
 * the reports' records by reflection, hence the {@code opens}.
 */
@SuppressWarnings("requires-automatic")
module dev.gdsloader.bench {
    requires transitive dev.gdsloader.loader;
    requires com.fasterxml.jackson.databind;
    requires com.fasterxml.jackson.dataformat.csv;
    requires org.knowm.xchart;
    requires jmh.core;
    requires java.logging;
    requires java.management;
    requires jdk.management;

    exports dev.gdsloader.bench;
    exports dev.gdsloader.bench.jmh;

    opens dev.gdsloader.bench to com.fasterxml.jackson.databind;
}
