/**
 * The loader pipeline: dataset -> sampler -> read planner -> I/O engines -> slots -> batches.
 *
 * <p>Exported, the API: {@code dev.gdsloader.loader} ({@code GdsLoader}, {@code Batch}, {@code ColumnView},
 * {@code LoaderOptions}, ...), {@code .dataset} and {@code .sampler} (the builder takes a {@code Dataset} and
 * {@code SamplerOptions}), and {@code .topology} (pure sysfs reading: the CLI's {@code doctor} reports the PCI path
 * between the data's block device and each GPU with it). Not exported: the engines ({@code .io}), the slots
 * ({@code .slot}). Exported to the benchmarks only: the read planner ({@code .plan}: its microbenchmark measures
 * {@code ReadPlanner.planInto}; the direct-read ceilings use {@code Alignment}) and the gather kernel
 * ({@code .gather}: the gather ceiling measures the MAPPED engine's own kernel).
 *
 * <p>{@code LoaderOptions}, {@code LoaderState} and {@code SamplerOptions} are mapped to JSON by Jackson's data
 * binding, hence the two {@code opens}. The qualified exports name a module that is not there when this one compiles
 * (it depends on this one): javac's "module not found" warning is expected, hence the narrow suppression.
 */
@SuppressWarnings("module")
module dev.gdsloader.loader {
    requires transitive dev.gdsloader.bindings;
    requires transitive dev.gdsloader.formats;
    requires java.logging;

    exports dev.gdsloader.loader;
    exports dev.gdsloader.loader.dataset;
    exports dev.gdsloader.loader.sampler;
    exports dev.gdsloader.loader.topology;
    exports dev.gdsloader.loader.plan to dev.gdsloader.bench;
    exports dev.gdsloader.loader.gather to dev.gdsloader.bench;

    opens dev.gdsloader.loader to com.fasterxml.jackson.databind;
    opens dev.gdsloader.loader.sampler to com.fasterxml.jackson.databind;
}
