package dev.gdsloader.loader;

import dev.gdsloader.cuda.MappedShards;
import java.time.Duration;

/**
 * The process-wide policy of the MAPPED path, set through the loader: the shard files every MAPPED loader of this
 * process maps and registers for the GPU are shared (one registration per file, reference counted by the loaders
 * reading it), and a holder such as a prefetch server, whose sessions each build a loader over the same shards, asks
 * for those registrations to outlive their last loader for a while, so that the next session reuses them instead of
 * registering (reading, or at least faulting in) every page again. Stateless and thread-safe.
 */
public final class MappedRegistrations {
    private MappedRegistrations() {
    }

    /**
     * Asks for the process's shard registrations to linger at least {@code linger} after their last loader closed,
     * until the returned request is closed. Holders in one process each ask for their own; the longest live ask
     * holds; closing a request takes back only its own ask, and when no linger is left the lingering registrations
     * are undone then.
     *
     * @param linger how long, zero or more (zero asks for nothing beyond the others)
     * @return the request, owned by the caller, who closes it (once; more closes do nothing)
     * @throws IllegalArgumentException if {@code linger} is negative
     */
    public static MappedShards.LingerRequest requestLinger(Duration linger) {
        return MappedShards.process().requestLinger(linger);
    }
}
