package dev.gdsloader.loader.io;

import java.util.List;

/**
 * The registered engines, in the order {@code AUTO} prefers them: MAPPED (a GPU with read-only host registration
 * and a dataset whose mappable shards fit the host budget), GDS (true GPUDirect), then the bounce path (any GPU), then the host path
 * (no GPU). Registering an engine is adding its provider here. Stateless.
 */
public final class Engines {
    private static final List<EngineProvider> ALL = List.of(new MappedEngine.Provider(), new GdsEngine.Provider(), new BounceEngine.Provider(),
            new HostEngine.Provider());

    private Engines() {
    }

    /** @return the providers, in {@code AUTO}'s order of preference */
    public static List<EngineProvider> all() {
        return ALL;
    }
}
