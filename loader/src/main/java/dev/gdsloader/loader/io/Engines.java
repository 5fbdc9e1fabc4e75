package dev.gdsloader.loader.io;

import dev.gdsloader.loader.spi.EngineProvider;
import java.util.Comparator;
import java.util.List;
import java.util.ServiceLoader;

/**
 * The registered engines: every {@link EngineProvider} named in {@code META-INF/services/} on the loader's class path
 * ({@link ServiceLoader}; the loader's own four are in its jar), in the order {@code AUTO} prefers them, highest
 * {@link EngineProvider#preference()} first (ties by class name). The loader's own: MAPPED (a GPU with read-only host
 * registration and a dataset whose mappable shards fit the host budget), GDS (true GPUDirect), then the bounce path
 * (any GPU), then the host path (no GPU). Loaded once; stateless and thread-safe afterwards.
 */
public final class Engines {
    private static final List<EngineProvider> ALL = ServiceLoader.load(EngineProvider.class, EngineProvider.class.getClassLoader())
            .stream().map(ServiceLoader.Provider::get)
            .sorted(Comparator.comparingInt(EngineProvider::preference).reversed()
                    .thenComparing(p -> p.getClass().getName()))
            .toList();

    private Engines() {
    }

    /**
     * @return the providers, in {@code AUTO}'s order of preference
     * @throws IllegalStateException if none is registered (the services file is missing from the class path)
     */
    public static List<EngineProvider> all() {
        if (ALL.isEmpty()) {
            throw new IllegalStateException("no I/O engine is registered: no META-INF/services/"
                    + EngineProvider.class.getName() + " on the class path of " + Engines.class.getClassLoader());
        }
        return ALL;
    }
}
