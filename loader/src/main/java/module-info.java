/**
 * The loader pipeline: dataset -> sampler -> read planner -> I/O engines -> slots -> batches.
 *
 * <p>Exported, the API: {@code dev.gdsloader.loader} ({@code GdsLoader}, {@code Batch}, {@code ColumnView},
 * {@code LoaderOptions}, {@code MappedRegistrations}, ...), {@code .path} ({@code ReadPath}, {@code PathTaken}),
 * {@code .dataset} and {@code .sampler} (the builder takes a {@code Dataset} and {@code SamplerOptions}),
 * {@code .topology} (pure sysfs reading: the CLI's {@code doctor} reports the PCI path between the data's block device
 * and each GPU with it); and the engine SPI: {@code .spi} ({@code IoEngine}, {@code EngineProvider}, {@code SlotMemory},
 * ...) and {@code .plan}, because the SPI's methods hand an engine the batch's plan ({@code SlotPlan},
 * {@code ColumnPieces}; {@code Alignment} sizes its slots). Not exported: the engines themselves ({@code .io}) and
 * the slot parts they compose ({@code .slot}). Exported to the benchmarks only: the gather kernel ({@code .gather}: the
 * gather ceiling measures the MAPPED engine's own kernel).
 *
 * <p>Engines are found through {@link java.util.ServiceLoader}: on the class path (how gds-loader runs) from
 * {@code META-INF/services}, on the module path from the {@code provides} below ({@code uses} for other modules'
 * providers). {@code LoaderOptions}, {@code LoaderState} and {@code SamplerOptions} are mapped to JSON by Jackson's
 * data binding, hence the two {@code opens}. The qualified export names a module that is not there when this one
 * compiles (it depends on this one): javac's "module not found" warning is expected, hence the narrow suppression.
 */
@SuppressWarnings("module")
module dev.gdsloader.loader {
    requires transitive dev.gdsloader.bindings;
    requires transitive dev.gdsloader.formats;
    requires java.logging;

    exports dev.gdsloader.loader;
    exports dev.gdsloader.loader.path;
    exports dev.gdsloader.loader.spi;
    exports dev.gdsloader.loader.plan;
    exports dev.gdsloader.loader.dataset;
    exports dev.gdsloader.loader.sampler;
    exports dev.gdsloader.loader.topology;
    exports dev.gdsloader.loader.gather to dev.gdsloader.bench;

    opens dev.gdsloader.loader to com.fasterxml.jackson.databind;
    opens dev.gdsloader.loader.sampler to com.fasterxml.jackson.databind;

    uses dev.gdsloader.loader.spi.EngineProvider;
    provides dev.gdsloader.loader.spi.EngineProvider with dev.gdsloader.loader.io.MappedEngine.Provider,
            dev.gdsloader.loader.io.GdsEngine.Provider, dev.gdsloader.loader.io.BounceEngine.Provider,
            dev.gdsloader.loader.io.HostEngine.Provider;
}
