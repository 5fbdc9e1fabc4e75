package dev.gdsloader.loader;

import dev.gdsloader.cufile.CuFileProbe;
import dev.gdsloader.cufile.CuFileStatus;
import dev.gdsloader.formats.HostDecodedRecords;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.spi.EngineConfig;
import dev.gdsloader.loader.spi.EngineProvider;
import dev.gdsloader.loader.io.Engines;
import dev.gdsloader.loader.spi.IoEngine;
import dev.gdsloader.loader.path.ReadPath;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Turns a requested {@link ReadPath} into an engine, with one line saying why, by asking the registered engine
 * providers ({@link Engines#all()}) whether they can serve the dataset; it names no engine itself.
 *
 * <p>{@code AUTO}: the first provider, in the registry's order of preference (MAPPED, GDS, BOUNCE, HOST), that says
 * yes and opens; the reason names the path taken and why the first one before it declined (no GPU gives HOST; a GPU
 * that supports read-only host registration with a dataset that fits the host budget gives MAPPED; else cuFile
 * doing true GPUDirect DMA whose handle registration works for every shard gives GDS; otherwise BOUNCE). A
 * dataset with host-decoded shards (compressed Arrow bodies, deflated {@code .npz} members) skips engines that read
 * file bytes as stored (GDS), and the reason starts with {@code HOST-DECODE: <file> ...}; MAPPED takes such a
 * dataset where its mappable shards fit the budget, staging the host-decoded runs, and its reason says how many
 * ({@code ... N host-decoded shard runs decoded on the host and copied through pinned staging}). An explicit path that this
 * machine cannot do fails with the provider's reason instead of silently taking another. Stateless and thread-safe.
 */
public final class PathSelector {
    private PathSelector() {
    }

    /**
     * An engine and why it was chosen.
     *
     * @param engine the engine, owned by the caller
     * @param reason one line, e.g. "GDS: cuFile mode GDS (nvidia-fs 2.17 is loaded ...)"
     */
    public record Selection(IoEngine<?> engine, String reason) {
    }

    /**
     * @param requested the requested path
     * @param dataset the dataset (its root is probed for cuFile handle registration)
     * @param config the engines' settings
     * @return the engine and the reason
     * @throws IOException if a path was requested by name and its engine refused a shard (naming it)
     * @throws IllegalStateException if a path was requested by name and this machine or dataset cannot do it (the
     *     message gives the reason)
     */
    public static Selection select(ReadPath requested, Dataset dataset, EngineConfig config) throws IOException {
        return select(requested, dataset, config, Engines.all());
    }

    /** As {@link #select(ReadPath, Dataset, EngineConfig)}, over the given providers in order of preference. */
    static Selection select(ReadPath requested, Dataset dataset, EngineConfig config, List<EngineProvider> providers)
            throws IOException {
        Optional<String> decode = hostDecode(dataset);
        String prefix = decode.map(d -> d + "; ").orElse("");
        if (requested != ReadPath.AUTO) {
            return selectRequested(requested, dataset, config, providers, decode, prefix);
        }
        String declined = null;
        for (EngineProvider p : providers) {
            if (decode.isPresent() && p.refusesHostDecoded().isPresent()) {
                continue;
            }
            EngineProvider.Verdict v = p.check(dataset, config, false);
            if (v.serves()) {
                try {
                    IoEngine<?> e = p.open(dataset, config, v);
                    return new Selection(e, prefix + p.path() + ": " + (declined != null ? declined : v.reason()));
                } catch (IOException e) {
                    v = EngineProvider.Verdict.no(p.path() + " refused a shard: " + e.getMessage());
                }
            }
            if (declined == null) {
                declined = v.reason();
            }
        }
        throw new IllegalStateException("no engine can read " + dataset.root() + ": " + declined);
    }

    /**
     * A path asked for by name: its providers in order of preference (the loader registers one per path); the first
     * that serves is opened, else the first refusal is thrown.
     */
    private static Selection selectRequested(ReadPath requested, Dataset dataset, EngineConfig config,
                                             List<EngineProvider> providers, Optional<String> decode, String prefix)
            throws IOException {
        List<EngineProvider> serving = providers.stream().filter(e -> e.path() == requested).toList();
        if (serving.isEmpty()) {
            throw new IllegalArgumentException("no engine serves path " + requested);
        }
        IllegalStateException refused = null;
        for (EngineProvider p : serving) {
            if (decode.isPresent() && p.refusesHostDecoded().isPresent()) {
                refused = refused != null ? refused : new IllegalStateException(requested
                        + " path cannot read host-decoded data (" + p.refusesHostDecoded().get() + "): " + decode.get());
                continue;
            }
            EngineProvider.Verdict v = p.check(dataset, config, true);
            if (v.serves()) {
                IoEngine<?> e = p.open(dataset, config, v);
                return new Selection(e, prefix + requested + ": requested" + (v.reason().isEmpty() ? "" : "; " + v.reason()));
            }
            refused = refused != null ? refused : new IllegalStateException(v.reason());
        }
        throw refused;
    }

    /**
     * Says whether some shards must be decoded on the host (compressed Arrow bodies, deflated {@code .npz} members).
     *
     * @param dataset the dataset
     * @return the first such shard's reason, with how many more there are; empty when every shard is read as stored
     */
    public static Optional<String> hostDecode(Dataset dataset) {
        List<HostDecodedRecords> decoded = dataset.columns().stream().flatMap(c -> c.shards().stream())
                .filter(HostDecodedRecords.class::isInstance).map(HostDecodedRecords.class::cast).toList();
        if (decoded.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(decoded.get(0).decodeReason() + (decoded.size() == 1 ? ""
                : " (and " + (decoded.size() - 1) + " more host-decoded shard run" + (decoded.size() == 2 ? ")" : "s)")));
    }

    /**
     * What {@code AUTO} picks for files in a directory, before any shard is opened.
     *
     * @param path the path AUTO would take
     * @param reason one line saying why
     * @param cuFile the cuFile probe's result (UNAVAILABLE without a GPU)
     */
    public record Decision(ReadPath path, String reason, CuFileStatus cuFile) {
    }

    /**
     * Decides {@code AUTO} for a data directory as {@link #select} does, before any shard is opened (the first
     * registered provider that says yes), with the cuFile probe's result for tools ({@code gdsloader doctor}).
     *
     * @param dataDir directory the shards live in (a small probe file is registered there)
     * @return the decision; never throws
     */
    public static Decision decideAuto(Path dataDir) {
        EngineConfig config = new EngineConfig(8L << 20, false, dev.gdsloader.loader.io.GdsEngine.DEFAULT_THRESHOLD);
        String declined = null;
        for (EngineProvider p : Engines.all()) {
            EngineProvider.Verdict v = p.check(dataDir, config, false);
            if (v.serves()) {
                return new Decision(p.path(), p.path() + ": " + (declined != null ? declined : v.reason()),
                        CuFileProbe.probe(Optional.of(dataDir)));
            }
            declined = declined == null ? v.reason() : declined;
        }
        return new Decision(ReadPath.HOST, "HOST: " + declined, CuFileProbe.probe(Optional.of(dataDir)));
    }
}
