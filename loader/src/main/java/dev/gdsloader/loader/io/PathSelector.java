package dev.gdsloader.loader.io;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cufile.CuFileProbe;
import dev.gdsloader.cufile.CuFileStatus;
import dev.gdsloader.loader.ReadPath;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.formats.HostDecodedRecords;
import java.io.IOException;
import java.util.List;
import java.util.Optional;

/**
 * Turns a requested {@link ReadPath} into an engine, with one line saying why.
 *
 * <p>{@code AUTO}: no GPU gives HOST; a GPU with usable cuFile whose handle registration works for every
 * shard gives GDS (reported as compat mode where cuFile says so); otherwise BOUNCE. A dataset with host-decoded
 * shards (compressed Arrow bodies, deflated {@code .npz} members) takes BOUNCE (HOST without a GPU), and the
 * reason starts with {@code HOST-DECODE: <file> ...}. An explicit GDS or
 * BOUNCE that this machine cannot do fails with the reason instead of silently taking another path.
 * Stateless and thread-safe.
 */
public final class PathSelector {
    private PathSelector() {
    }

    /**
     * An engine and why it was chosen.
     *
     * @param engine the engine, owned by the caller
     * @param reason one line, e.g. "GDS: cuFile in compatibility mode (no nvidia-fs kernel module)"
     */
    public record Selection(IoEngine engine, String reason) {
    }

    /**
     * @param requested the requested path
     * @param dataset the dataset (its root is probed for cuFile handle registration)
     * @param maxIo largest single read, bytes
     * @param direct whether the staged paths open shards with {@code O_DIRECT}
     * @return the engine and the reason
     * @throws IOException if GDS was requested and a shard cannot be registered
     * @throws IllegalStateException if GDS or BOUNCE was requested and this machine cannot do it (the
     *     message gives the reason)
     */
    public static Selection select(ReadPath requested, Dataset dataset, long maxIo, boolean direct) throws IOException {
        boolean gpu = Cuda.availability().available();
        Optional<String> decode = hostDecode(dataset);
        if (decode.isPresent()) {
            return withHostDecode(requested, dataset, maxIo, direct, gpu, decode.get());
        }
        return switch (requested) {
            case AUTO -> auto(dataset, maxIo, direct);
            default -> explicit(requested, dataset, maxIo, direct, gpu);
        };
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
     * Host-decoded shards reach the device through staging memory: AUTO takes BOUNCE (HOST without a GPU); an
     * explicit GDS is refused, naming the shard; explicit HOST or BOUNCE run with the decode in their reason.
     */
    private static Selection withHostDecode(ReadPath requested, Dataset dataset, long maxIo, boolean direct, boolean gpu,
                                            String decode) throws IOException {
        if (requested == ReadPath.GDS) {
            throw new IllegalStateException("GDS path cannot read host-decoded data (cuFile reads file bytes as stored): "
                    + decode);
        }
        if (requested == ReadPath.AUTO) {
            return gpu ? new Selection(new BounceEngine(dataset, maxIo, direct), decode + "; BOUNCE: decoded bytes are "
                    + "copied from pinned staging")
                    : new Selection(new HostEngine(dataset, maxIo, direct), decode + "; HOST: no GPU path: "
                    + Cuda.availability().reason());
        }
        Selection s = explicit(requested, dataset, maxIo, direct, gpu);
        return new Selection(s.engine(), decode + "; " + s.reason());
    }

    private static Selection explicit(ReadPath requested, Dataset dataset, long maxIo, boolean direct, boolean gpu)
            throws IOException {
        switch (requested) {
            case HOST:
                return new Selection(new HostEngine(dataset, maxIo, direct), "HOST: requested");
            case BOUNCE:
                if (!gpu) {
                    throw new IllegalStateException("BOUNCE path needs a GPU: " + Cuda.availability().reason());
                }
                return new Selection(new BounceEngine(dataset, maxIo, direct), "BOUNCE: requested");
            case GDS: {
                CuFileStatus st = CuFileProbe.probe(Optional.of(dataset.root()));
                if (!st.usable()) {
                    throw new IllegalStateException("GDS path unavailable: " + st.reason());
                }
                GdsEngine e = new GdsEngine(dataset, maxIo, st.mode());
                try {
                    e.registerAll();
                } catch (IOException | RuntimeException ex) {
                    e.close();
                    throw ex;
                }
                return new Selection(e, "GDS: requested; cuFile mode " + st.mode() + " (" + st.reason() + ")");
            }
            default:
                throw new IllegalArgumentException("not an explicit path: " + requested);
        }
    }

    private static Selection auto(Dataset dataset, long maxIo, boolean direct) throws IOException {
        Decision d = decideAuto(dataset.root());
        switch (d.path()) {
            case HOST:
                return new Selection(new HostEngine(dataset, maxIo, direct), d.reason());
            case BOUNCE:
                return new Selection(new BounceEngine(dataset, maxIo, direct), d.reason());
            default:
                break;
        }
        GdsEngine e = new GdsEngine(dataset, maxIo, d.cuFile().mode());
        try {
            e.registerAll();
        } catch (IOException ex) {
            e.close();
            return new Selection(new BounceEngine(dataset, maxIo, direct), "BOUNCE: cuFile refused a shard: " + ex.getMessage());
        }
        return new Selection(e, d.reason());
    }

    /**
     * What {@code AUTO} picks for files in a directory, before any shard is opened.
     *
     * @param path GDS, BOUNCE or HOST
     * @param reason one line saying why
     * @param cuFile the cuFile probe's result (UNAVAILABLE without a GPU)
     */
    public record Decision(ReadPath path, String reason, CuFileStatus cuFile) {
    }

    /**
     * Decides {@code AUTO} for a data directory: no GPU gives HOST; cuFile with true GPUDirect DMA there
     * (nvidia-fs) gives GDS; else BOUNCE. cuFile's compat mode gives BOUNCE too: compat mode is cuFile's own POSIX
     * read through its pinned bounce buffers, and on the H200 machine the loader's bounce path matched or beat it
     * in every measurement where both read the same way ({@code BENCHMARKS.md}: cold reads, overlap with compute,
     * two ranks from the page cache, the Fashion-MNIST sample). Compat mode reads through the page cache even on a
     * handle opened with {@code O_DIRECT}, so against a bounce path forced to {@code O_DIRECT} it can win on warm
     * data ({@code bench --quick}, warm: 2.40 against 1.45 GB/s); the bounce path's default
     * ({@link DirectIoPolicy}) reads a dataset that fits in memory through the page cache too. An explicit
     * {@link ReadPath#GDS} still uses cuFile in either mode.
     *
     * @param dataDir directory the shards live in (a small probe file is registered there)
     * @return the decision; never throws
     */
    public static Decision decideAuto(java.nio.file.Path dataDir) {
        if (!Cuda.availability().available()) {
            CuFileStatus none = CuFileProbe.probe(Optional.empty());
            return new Decision(ReadPath.HOST, "HOST: no GPU path: " + Cuda.availability().reason(), none);
        }
        CuFileStatus st = CuFileProbe.probe(Optional.of(dataDir));
        if (!st.usable()) {
            return new Decision(ReadPath.BOUNCE, "BOUNCE: cuFile unusable: " + st.reason(), st);
        }
        if (st.mode() == dev.gdsloader.cufile.CuFileMode.COMPAT) {
            return new Decision(ReadPath.BOUNCE, "BOUNCE: cuFile runs only in compat mode here (" + st.reason()
                    + "), its own bounce through host memory, which the loader's bounce path outruns; request GDS to use"
                    + " cuFile anyway", st);
        }
        return new Decision(ReadPath.GDS, "GDS: cuFile mode " + st.mode() + " (" + st.reason() + ")", st);
    }
}
