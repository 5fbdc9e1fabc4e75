package dev.gdsloader.loader.spi;

import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.path.ReadPath;
import java.io.IOException;
import java.nio.file.Path;

/**
 * Knows whether its engine can serve data on this machine and opens it. Providers are registered as services: each
 * is named, one line each, in {@code META-INF/services/dev.gdsloader.loader.spi.EngineProvider} and found through
 * {@link java.util.ServiceLoader}, so that a provider class needs a public no-argument constructor (in a named module,
 * {@code provides dev.gdsloader.loader.spi.EngineProvider with ...} in its {@code module-info.java} instead, and the
 * loader's module {@code uses} this interface). The path selector asks them in order of {@link #preference()} instead
 * of naming engines. Implementations are stateless and thread-safe.
 */
public interface EngineProvider {
    /** @return the path that requests this engine by name; {@code AUTO} tries every provider */
    ReadPath path();

    /**
     * Where this provider stands in {@code AUTO}'s order: providers are asked from the highest preference down (ties
     * by class name), and a path requested by name asks its providers in the same order. The loader's own: MAPPED
     * 400, GDS 300, BOUNCE 200, HOST 100 (HOST serves every machine, so a provider below it is never reached by
     * {@code AUTO}).
     *
     * @return the preference; higher is asked first
     */
    int preference();

    /**
     * @return empty if the engine can read host-decoded shards (bytes decoded on the host, not as stored; the
     *     default); else why not, e.g. "cuFile reads file bytes as stored"
     */
    default java.util.Optional<String> refusesHostDecoded() {
        return java.util.Optional.empty();
    }

    /**
     * Whether the engine can serve files in {@code dataDir} here, before any shard is opened. Never throws.
     *
     * @param dataDir directory the shards live in (GDS registers a small probe file there)
     * @param config the settings the engine would be opened with
     * @param requested true if the user asked for this path by name; false under AUTO, where an engine that
     *     works but another would outrun declines
     * @return yes or no, with one line saying why: under AUTO without the path's name (the selector adds the
     *     name of the path it takes), on request a refusal the user can read alone (the selector throws it)
     */
    Verdict check(Path dataDir, EngineConfig config, boolean requested);

    /**
     * Whether the engine can serve this dataset here (what the loader asks): by default {@link #check(Path,
     * EngineConfig, boolean)} on its root; an engine whose answer depends on the shards (their total size against
     * the budget) looks at them. Never throws.
     *
     * @param dataset the dataset
     * @param config the settings the engine would be opened with
     * @param requested true if the user asked for this path by name
     * @return yes or no, with one line saying why, as {@link #check(Path, EngineConfig, boolean)}
     */
    default Verdict check(Dataset dataset, EngineConfig config, boolean requested) {
        return check(dataset.root(), config, requested);
    }

    /**
     * Opens the engine for a dataset this provider said yes to.
     *
     * @param dataset the dataset
     * @param config the settings
     * @param verdict what {@link #check} said
     * @return the engine, owned by the caller
     * @throws IOException if a shard is refused (GDS handle registration), naming it; AUTO then asks the next
     *     provider
     */
    IoEngine<?> open(Dataset dataset, EngineConfig config, Verdict verdict) throws IOException;

    /**
     * A provider's answer.
     *
     * @param serves whether it can serve
     * @param reason one line saying why (or why not)
     */
    record Verdict(boolean serves, String reason) {
        /**
         * @param reason why
         * @return a yes
         */
        public static Verdict yes(String reason) {
            return new Verdict(true, reason);
        }

        /**
         * @param reason why not
         * @return a no
         */
        public static Verdict no(String reason) {
            return new Verdict(false, reason);
        }
    }
}
