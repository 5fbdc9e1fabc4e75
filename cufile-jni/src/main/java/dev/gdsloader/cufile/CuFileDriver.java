package dev.gdsloader.cufile;

import dev.gdsloader.cuda.Cuda;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;
import org.bytedeco.cuda.cufile.CUfileDrvProps_t;
import org.bytedeco.cuda.cufile.CUfileError_t;
import org.bytedeco.cuda.global.cufile;
import org.bytedeco.javacpp.IntPointer;

/**
 * The cuFile driver of this process: opened once ({@code cuFileDriverOpen}) on first use and closed
 * once, last, by a JVM shutdown hook — and only if every handle and buffer registration was released,
 * since closing the driver under live registrations is undefined.
 *
 * <p>Thread-safe. Handles and buffer registrations count themselves in and out through
 * {@link #retain()} / {@link #release()}.
 */
public final class CuFileDriver {
    private static final Logger LOG = Logger.getLogger(CuFileDriver.class.getName());
    private static final Object LOCK = new Object();
    private static volatile CuFileDriver instance;
    private static volatile CuFileException openFailure;

    private final CuFileDriverProperties properties;
    private final int version;
    private final AtomicInteger registrations = new AtomicInteger();

    private CuFileDriver(CuFileDriverProperties properties, int version) {
        this.properties = properties;
        this.version = version;
    }

    /**
     * Returns the open driver, opening it on the first call of the process.
     *
     * @return the driver
     * @throws CuFileException if CUDA or libcufile is unavailable, or {@code cuFileDriverOpen} failed; the
     *     same failure is reported on every later call
     */
    @SuppressWarnings("StaticAssignmentOfThrowable") // opened once per process: later calls rethrow the first failure
    public static CuFileDriver get() throws CuFileException {
        CuFileDriver d = instance;
        if (d != null) {
            return d;
        }
        synchronized (LOCK) {
            if (instance == null && openFailure == null) {
                try {
                    instance = open();
                } catch (CuFileException e) {
                    openFailure = e;
                }
            }
            if (openFailure != null) {
                throw openFailure;
            }
            return instance;
        }
    }

    private static CuFileDriver open() throws CuFileException {
        if (!Cuda.availability().available()) {
            throw new CuFileException("cuFile needs a GPU: " + Cuda.availability().reason(), -1);
        }
        CuFileLibrary lib = CuFileLibrary.get();
        if (!lib.isPresent()) {
            throw new CuFileException(lib.failure().orElseThrow(), -1);
        }
        try {
            org.bytedeco.javacpp.Loader.load(cufile.class);
        } catch (Throwable t) {
            throw new CuFileException("the bytedeco cuFile binding could not be loaded: " + t, -1);
        }
        CUfileError_t st = cufile.cuFileDriverOpen();
        if (st.err() != 0) {
            throw new CuFileException("cuFileDriverOpen failed: " + CuFileErrors.describe(st.err())
                    + (st.cu_err() != 0 ? ", CUresult " + st.cu_err() : ""), st.err());
        }
        CUfileDrvProps_t p = new CUfileDrvProps_t();
        CuFileDriverProperties props;
        if (cufile.cuFileDriverGetProperties(p).err() == 0) {
            props = new CuFileDriverProperties(p.nvfs_major_version(), p.nvfs_minor_version(),
                    p.nvfs_max_direct_io_size() * 1024L, p.nvfs_poll_thresh_size() * 1024L,
                    p.max_device_cache_size() * 1024L, p.per_buffer_cache_size() * 1024L,
                    p.max_device_pinned_mem_size() * 1024L, p.max_batch_io_size());
        } else {
            props = new CuFileDriverProperties(0, 0, 0, 0, 0, 0, 0, 0);
        }
        p.close();
        int version = 0;
        if (lib.exports("cuFileGetVersion")) {
            try (IntPointer v = new IntPointer(1)) {
                if (cufile.cuFileGetVersion(v).err() == 0) {
                    version = v.get();
                }
            }
        }
        CuFileDriver d = new CuFileDriver(props, version);
        Runtime.getRuntime().addShutdownHook(new Thread(d::closeAtExit, "cufile-driver-close"));
        return d;
    }

    /** @return the driver's properties, read once at open */
    public CuFileDriverProperties properties() {
        return properties;
    }

    /**
     * @return libcufile's version as {@code cuFileGetVersion} reports it (1151 = 1.15.1), or 0 when the
     *     installed library does not export that call
     */
    public int version() {
        return version;
    }

    /**
     * Formats {@link #version()}.
     *
     * @return e.g. "1.15.1", or "unknown"
     */
    public String versionString() {
        return version == 0 ? "unknown" : (version / 1000) + "." + (version % 1000) / 10 + "." + version % 10;
    }

    /** @return the number of live handle and buffer registrations */
    public int liveRegistrations() {
        return registrations.get();
    }

    void retain() {
        registrations.incrementAndGet();
    }

    void release() {
        registrations.decrementAndGet();
    }

    private void closeAtExit() {
        int live = registrations.get();
        if (live != 0) {
            LOG.warning(() -> "cuFile driver left open at exit: " + live + " handle/buffer registrations were never closed");
            return;
        }
        CuFileLibrary lib = CuFileLibrary.get();
        // the binding's cuFileDriverClose() calls cuFileDriverClose_v2, which older libcufile lacks
        if (lib.exports("cuFileDriverClose_v2")) {
            cufile.cuFileDriverClose();
        } else if (lib.exports("cuFileDriverClose")) {
            lib.callNoArgs("cuFileDriverClose");
        }
    }
}
