package dev.gdsloader.cuda;

import dev.gdsloader.posix.FileMapping;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Shard files mapped read-only ({@link FileMapping}) and registered for the GPU ({@link HostRegistration}: read-only,
 * mapped, portable), shared by every loader of the process that reads the same file: a reference-counted registry
 * keyed by the file's real path, size, modification time and identity ({@link Key}). The first {@link #acquire}
 * maps and registers; the last {@link Lease#close()} unregisters, then unmaps, at once by default, or after a
 * {@linkplain #linger(Duration) linger} during which a new lease reuses the registration (a server whose sessions
 * each build a loader over the same shards: registering reads, or at least faults in, every page). A file that changed
 * since (another key) gets its own mapping; {@link Lease#checkUnchanged()} says whether a leased file still matches.
 *
 * <p>Java code never reads a mapping (a truncated file would raise {@code SIGBUS}): leases give addresses only.
 * The registration step is a {@link Registrar}, so that CI without a GPU tests the registry over real mappings
 * ({@link #IDENTITY}). Thread-safe; registrations of different files run concurrently.
 */
public final class MappedShards {
    /** Flags every shard is registered with: read-only (the mapping is {@code PROT_READ}), mapped, portable. */
    public static final int FLAGS = HostRegistration.READ_ONLY | HostRegistration.MAPPED | HostRegistration.PORTABLE;

    /** Makes a mapped file readable by the GPU. */
    @FunctionalInterface
    public interface Registrar {
        /**
         * @param mapping the file's mapping
         * @return its registration, owned by the registry
         * @throws IOException naming the file and the cause if it is refused
         */
        Registered register(FileMapping mapping) throws IOException;
    }

    /** A registered mapping, as the registry holds it. */
    public interface Registered extends AutoCloseable {
        /**
         * @param offset byte offset in the mapping
         * @return the device address the GPU reads that byte at
         */
        long deviceAddress(long offset);

        /** Undoes the registration, once. */
        @Override
        void close();
    }

    /**
     * Registers with CUDA ({@link HostRegistration#register} with {@link #FLAGS}), the mapping's size rounded up to 4 KiB
     * (the mapping covers whole pages; the bytes past the end of the file read as zeros and are never used).
     */
    public static final Registrar CUDA = m -> {
        HostRegistration r = HostRegistration.register(m.address(), (m.size() + 4095) & ~4095L, FLAGS, m.path().toString());
        return new Registered() {
            @Override
            public long deviceAddress(long offset) {
                return r.deviceAddress(offset);
            }

            @Override
            public void close() {
                r.close();
            }
        };
    };

    /** Registers nothing: the device address is the host address (tests of the registry without a GPU). */
    public static final Registrar IDENTITY = m -> new Registered() {
        @Override
        public long deviceAddress(long offset) {
            return m.address() + offset;
        }

        @Override
        public void close() {
        }
    };

    private static final MappedShards PROCESS = new MappedShards(CUDA);

    private final Registrar registrar;
    private final Map<Key, Entry> entries = new HashMap<>();
    /**
     * How long a registration no lease holds stays: the longest of {@link #baseLingerNanos} and the live
     * {@link #requests}; guarded by {@link #entries}.
     */
    private long lingerNanos;
    /** The linger set by {@link #linger(Duration)}; guarded by {@link #entries}. */
    private long baseLingerNanos;
    /** The live {@link LingerRequest}s (one per holder, e.g. a server); guarded by {@link #entries}. */
    private final List<LingerRequest> requests = new ArrayList<>();
    /** Closes lingering registrations when their time is up; created on first use; guarded by {@link #entries}. */
    private ScheduledExecutorService reaper;

    /**
     * A registry of its own (tests); loaders share {@link #process()}.
     *
     * @param registrar how mappings are registered
     */
    public MappedShards(Registrar registrar) {
        this.registrar = Objects.requireNonNull(registrar, "registrar");
    }

    /** @return the process's registry, registering with CUDA */
    public static MappedShards process() {
        return PROCESS;
    }

    /**
     * What identifies one version of a file.
     *
     * @param realPath the file's real path (links resolved)
     * @param size bytes
     * @param modifiedNanos modification time, nanoseconds since the epoch
     * @param fileKey the file system's identity of the file (device and inode on Linux), or null where unknown
     */
    public record Key(Path realPath, long size, long modifiedNanos, Object fileKey) {
        /**
         * @param file a file
         * @return its key now
         * @throws IOException naming the file if it cannot be read
         */
        public static Key of(Path file) throws IOException {
            Path real = file.toRealPath();
            BasicFileAttributes a = Files.readAttributes(real, BasicFileAttributes.class);
            if (!a.isRegularFile()) {
                throw new IOException(file + ": not a regular file, cannot be mapped");
            }
            return new Key(real, a.size(), a.lastModifiedTime().to(TimeUnit.NANOSECONDS), a.fileKey());
        }
    }

    /**
     * Maps and registers {@code file}, or shares the mapping another lease holds on the same version of it.
     *
     * @param file the file (its real path is what is shared)
     * @return the lease, owned by the caller, who closes it
     * @throws IOException naming the file if it cannot be stat'ed, mapped or registered (nothing is then held)
     */
    public Lease acquire(Path file) throws IOException {
        Key key = Key.of(file);
        if (key.size() == 0) {
            throw new IOException(file + ": empty file, nothing to map");
        }
        Entry e;
        synchronized (entries) {
            e = entries.computeIfAbsent(key, Entry::new);
            e.refs++;
        }
        try {
            long nanos = e.register(registrar);
            return new Lease(e, file, nanos);
        } catch (IOException | RuntimeException | Error x) {
            release(e);
            throw x;
        }
    }

    /** @return files mapped and registered now */
    public int size() {
        synchronized (entries) {
            return entries.size();
        }
    }

    /** @return bytes mapped and registered now (each file once, however many leases share it) */
    public long registeredBytes() {
        synchronized (entries) {
            return entries.keySet().stream().mapToLong(Key::size).sum();
        }
    }

    /**
     * Sets the registry's own base linger: how long a registration stays after its last lease closed (process-wide
     * for {@link #process()}), unless a live {@link #requestLinger} asks for longer. A lease acquired within that time
     * reuses it, with no mapping or registration. Registrations that linger belong to no allocator (they are page
     * cache, registered); {@link #size()} and {@link #registeredBytes()} count them. {@link Duration#ZERO} (the
     * default) undoes each registration with its last lease, and, when no request asks for a linger, undoes
     * lingering ones now.
     *
     * @param linger how long, zero or more
     * @return the base linger it replaces
     * @throws IllegalArgumentException if negative
     */
    public Duration linger(Duration linger) {
        checkLinger(linger);
        Duration was;
        synchronized (entries) {
            was = Duration.ofNanos(baseLingerNanos);
            baseLingerNanos = linger.toNanos();
        }
        updateLinger();
        return was;
    }

    /**
     * Asks for registrations to linger at least {@code linger} until the returned request is closed: holders that
     * share the registry (two servers in one process) each ask for their own, and the registry keeps the longest of
     * the live requests and its base ({@link #linger(Duration)}). Closing a request takes back only its own ask; when
     * no linger is left, lingering registrations are undone then. An expiry already scheduled under a longer linger
     * keeps its time.
     *
     * @param linger how long, zero or more (zero asks for nothing beyond the others)
     * @return the request, owned by the caller, who closes it (once; more closes do nothing)
     * @throws IllegalArgumentException if negative
     */
    public LingerRequest requestLinger(Duration linger) {
        checkLinger(linger);
        LingerRequest r = new LingerRequest(linger.toNanos());
        synchronized (entries) {
            requests.add(r);
        }
        updateLinger();
        return r;
    }

    private static void checkLinger(Duration linger) {
        if (linger.isNegative()) {
            throw new IllegalArgumentException("registration linger must be >= 0, got " + linger);
        }
    }

    /** Makes {@link #lingerNanos} the longest asked for; undoes lingering registrations if that is zero. */
    private void updateLinger() {
        long longest;
        synchronized (entries) {
            longest = baseLingerNanos;
            for (LingerRequest r : requests) {
                longest = Math.max(longest, r.nanos);
            }
            lingerNanos = longest;
        }
        if (longest == 0) {
            closeIdle();
        }
    }

    /** One holder's ask for a linger ({@link #requestLinger}); thread-safe; closed by its holder. */
    public final class LingerRequest implements AutoCloseable {
        private final long nanos;
        private final AtomicBoolean closed = new AtomicBoolean();

        private LingerRequest(long nanos) {
            this.nanos = nanos;
        }

        /** @return the linger this request asks for */
        public Duration linger() {
            return Duration.ofNanos(nanos);
        }

        /** Takes back this request's ask (the registry's linger becomes the longest of the others); idempotent. */
        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                synchronized (entries) {
                    requests.remove(this);
                }
                updateLinger();
            }
        }
    }

    /** @return how long a registration stays after its last lease: the longest of the base and the live requests */
    public Duration linger() {
        synchronized (entries) {
            return Duration.ofNanos(lingerNanos);
        }
    }

    /**
     * Undoes now every registration that no lease holds (lingering ones).
     *
     * @return how many were undone
     */
    public int closeIdle() {
        List<Entry> idle = new ArrayList<>();
        synchronized (entries) {
            entries.values().removeIf(e -> {
                if (e.refs == 0) {
                    idle.add(e);
                    return true;
                }
                return false;
            });
        }
        for (Entry e : idle) {
            e.close();
        }
        return idle.size();
    }

    private void release(Entry e) {
        boolean last;
        synchronized (entries) {
            last = --e.refs == 0;
            if (last && lingerNanos > 0) {
                long token = ++e.lingers; // a later release (after a reuse) makes this expiry stale
                if (reaper == null) {
                    reaper = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon()
                            .name("gdsloader-registration-linger").unstarted(r));
                }
                // never cancelled: a stale expiry finds a newer token and does nothing
                var _ = reaper.schedule(() -> expire(e, token), lingerNanos, TimeUnit.NANOSECONDS);
                return;
            }
            if (last) {
                entries.remove(e.key);
            }
        }
        if (last) {
            e.close();
        }
    }

    /** The linger of {@code e}'s release number {@code token} is up: undone if no lease took it since. */
    private void expire(Entry e, long token) {
        synchronized (entries) {
            if (e.refs != 0 || e.lingers != token || entries.get(e.key) != e) {
                return;
            }
            entries.remove(e.key);
        }
        e.close();
    }

    /** One mapped file: mapped and registered by the first lease, undone by the last. */
    private static final class Entry {
        private final Key key;
        private int refs; // guarded by the registry's map
        private long lingers; // releases to zero so far: the token of the newest linger; guarded by the registry's map
        private FileMapping mapping; // guarded by this
        private Registered registered; // guarded by this

        Entry(Key key) {
            this.key = key;
        }

        /** @return nanoseconds this call spent mapping and registering (0 if it was done already) */
        synchronized long register(Registrar registrar) throws IOException {
            if (registered != null) {
                return 0;
            }
            long t0 = System.nanoTime();
            FileMapping m = FileMapping.map(key.realPath(), key.size());
            try {
                m.willNeed(); // a hint: read ahead while the registration faults the pages in
                registered = registrar.register(m);
                mapping = m;
            } catch (IOException | RuntimeException | Error x) {
                m.close();
                throw x;
            }
            return System.nanoTime() - t0;
        }

        synchronized long deviceAddress(long offset) {
            return registered.deviceAddress(offset);
        }

        synchronized long hostAddress() {
            return mapping.address();
        }

        /** Unregisters, then unmaps. */
        synchronized void close() {
            try {
                if (registered != null) {
                    registered.close();
                }
            } finally {
                registered = null;
                if (mapping != null) {
                    mapping.close();
                    mapping = null;
                }
            }
        }
    }

    /**
     * One holder's share of a mapped, registered file. Addresses stay valid until {@link #close()}. Thread-safe.
     */
    public final class Lease implements AutoCloseable {
        private final Entry entry;
        private final Path file;
        private final long registrationNanos;
        private final long host;
        private final long device;
        private final AtomicBoolean closed = new AtomicBoolean();

        private Lease(Entry entry, Path file, long registrationNanos) {
            this.entry = entry;
            this.file = file;
            this.registrationNanos = registrationNanos;
            this.host = entry.hostAddress();
            this.device = entry.deviceAddress(0);
        }

        /** @return the file as the holder named it */
        public Path file() {
            return file;
        }

        /** @return the version of the file mapped */
        public Key key() {
            return entry.key;
        }

        /** @return bytes mapped (the whole file) */
        public long size() {
            return entry.key.size();
        }

        /** @return nanoseconds this lease's acquire spent mapping and registering; 0 where it shared a mapping */
        public long registrationNanos() {
            return registrationNanos;
        }

        /**
         * @param offset byte offset in the file, 0..size
         * @return the host address of that byte in the mapping (for copies by the GPU's copy engine; never read it
         *     from Java)
         * @throws IndexOutOfBoundsException if the offset is outside the file
         */
        public long hostAddress(long offset) {
            check(offset);
            return host + offset;
        }

        /**
         * @param offset byte offset in the file, 0..size
         * @return the device address kernels read that byte at
         * @throws IndexOutOfBoundsException if the offset is outside the file
         */
        public long deviceAddress(long offset) {
            check(offset);
            return device + offset;
        }

        private void check(long offset) {
            if (closed.get()) {
                throw new IllegalStateException(file + ": lease on its mapping already closed");
            }
            if (offset < 0 || offset > entry.key.size()) {
                throw new IndexOutOfBoundsException(file + ": offset " + offset + " outside its " + entry.key.size()
                        + " mapped bytes");
            }
        }

        /**
         * Checks the file is still the version mapped: same size, modification time and identity.
         *
         * @throws IOException naming the file and what changed, if it changed (or cannot be read)
         */
        public void checkUnchanged() throws IOException {
            Key now;
            try {
                now = Key.of(file);
            } catch (IOException e) {
                throw new IOException(file + ": registered shard can no longer be read (" + e.getMessage()
                        + "); a registered shard must not change", e);
            }
            Key was = entry.key;
            if (now.size() != was.size() || now.modifiedNanos() != was.modifiedNanos()
                    || !Objects.equals(now.fileKey(), was.fileKey()) || !now.realPath().equals(was.realPath())) {
                throw new IOException(file + ": changed since it was registered for the MAPPED path (size " + was.size()
                        + " -> " + now.size() + " bytes, modified " + java.time.Instant.EPOCH.plusNanos(was.modifiedNanos())
                        + " -> " + java.time.Instant.EPOCH.plusNanos(now.modifiedNanos())
                        + (Objects.equals(now.fileKey(), was.fileKey()) ? "" : ", replaced by another file")
                        + "); a registered shard must not change: open a new loader");
            }
        }

        /** Gives the share back, once; the last one unregisters and unmaps the file. */
        @Override
        public void close() {
            if (closed.compareAndSet(false, true)) {
                release(entry);
            }
        }
    }
}
