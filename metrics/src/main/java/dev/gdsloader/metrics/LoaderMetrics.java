package dev.gdsloader.metrics;

import dev.gdsloader.loader.GdsLoader;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * Publishes a loader's counters to Micrometer: the function counters {@code gdsloader.bytes} (useful bytes
 * delivered, base unit bytes), {@code gdsloader.storage.bytes} (bytes read from storage, alignment included),
 * {@code gdsloader.batches}, {@code gdsloader.stall} (seconds the consumer waited) and {@code gdsloader.io} (seconds
 * the I/O threads spent reading, summed over threads), and the gauges {@code gdsloader.throughput} (delivered GB/s,
 * 1e9 bytes/s) and {@code gdsloader.slots.in.flight}, each tagged with {@code path} (the loader's
 * {@link GdsLoader#pathTaken()}: how the bytes travel) and the caller's tags.
 *
 * <p>Each meter reads {@link GdsLoader#stats()} when the registry polls it: the counters of the epoch in progress
 * (or of the last one), so they restart from 0 with each epoch. Polled from another thread than the consumer's, a
 * reading may lag the consumer by a batch. Ownership: the meters hold the loader weakly (Micrometer's function
 * meters), so binding does not keep a loader alive; the caller still closes the loader, and removes the meters from
 * the registry if it outlives the loader. Stateless and thread-safe.
 */
public final class LoaderMetrics {
    private LoaderMetrics() {
    }

    /**
     * Registers the loader's seven meters in {@code registry}.
     *
     * @param registry the registry
     * @param loader the loader (not retained strongly by the meters; {@link GdsLoader#pathTaken()} is read once here)
     * @param extraTags tags to add, e.g. {@code Tags.of("rank", "0")}; a {@code path} tag among them is replaced by the
     *     loader's
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if a meter of the same name and tags is already registered with another type
     *     (Micrometer's rule)
     */
    public static void bind(MeterRegistry registry, GdsLoader loader, Tags extraTags) {
        Objects.requireNonNull(registry, "registry");
        Objects.requireNonNull(loader, "loader");
        Tags tags = Objects.requireNonNull(extraTags, "extraTags").and("path", loader.pathTaken().name());
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
