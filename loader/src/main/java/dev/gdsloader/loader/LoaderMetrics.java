package dev.gdsloader.loader;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.concurrent.TimeUnit;

/**
 * Publishes a loader's counters to Micrometer: {@code gdsloader.bytes} (useful bytes delivered),
 * {@code gdsloader.storage.bytes}, {@code gdsloader.batches}, {@code gdsloader.stall} and {@code gdsloader.io}
 * (seconds), and the gauges {@code gdsloader.throughput} (GB/s, 1e9 bytes/s) and
 * {@code gdsloader.slots.in.flight}, each tagged with {@code path} (how the bytes travel). Counters are read
 * from {@link GdsLoader#stats()} of the epoch in progress when the registry polls. Stateless.
 */
public final class LoaderMetrics {
    private LoaderMetrics() {
    }

    /**
     * Registers the loader's meters; they read the loader until it is garbage-collected.
     *
     * @param registry the registry
     * @param loader the loader (not retained strongly by the meters)
     * @param extraTags tags to add, e.g. {@code Tags.of("rank", "0")}
     */
    public static void bind(MeterRegistry registry, GdsLoader loader, Tags extraTags) {
        Tags tags = extraTags.and("path", loader.pathTaken().name());
        FunctionCounter.builder("gdsloader.bytes", loader, l -> l.stats().bytes()).baseUnit("bytes")
                .description("useful bytes delivered to the consumer in the current epoch").tags(tags).register(registry);
        FunctionCounter.builder("gdsloader.storage.bytes", loader, l -> l.stats().storageBytes()).baseUnit("bytes")
                .description("bytes read from storage, alignment included, in the current epoch").tags(tags).register(registry);
        FunctionCounter.builder("gdsloader.batches", loader, l -> l.stats().batches())
                .description("batches delivered in the current epoch").tags(tags).register(registry);
        FunctionCounter.builder("gdsloader.stall", loader, l -> l.stats().stallNanos() / (double) TimeUnit.SECONDS.toNanos(1))
                .baseUnit("seconds").description("time the consumer waited for batches").tags(tags).register(registry);
        FunctionCounter.builder("gdsloader.io", loader, l -> l.stats().ioNanos() / (double) TimeUnit.SECONDS.toNanos(1))
                .baseUnit("seconds").description("time I/O threads spent reading, summed over threads").tags(tags).register(registry);
        Gauge.builder("gdsloader.throughput", loader, l -> l.stats().gigabytesPerSecond()).baseUnit("GB/s")
                .description("delivered GB/s (1e9 bytes/s) of the current epoch").tags(tags).register(registry);
        Gauge.builder("gdsloader.slots.in.flight", loader, l -> l.stats().slotsInFlight())
                .description("slots being filled or held by the consumer").tags(tags).register(registry);
    }
}
