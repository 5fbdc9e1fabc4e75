package dev.gdsloader.cufile;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Finds {@code libcufile.so.0} and says which entry points it really exports, before anything calls
 * them through the bytedeco binding.
 *
 * <p>Why: the bytedeco JNI library is built against a newer {@code cufile.h} than the installed
 * libcufile may be (13.1 headers against cuFile 1.15.1 of CUDA 13.0) and is bound lazily, so calling a
 * missing function ({@code cuFileDriverGetP2PFlags}) kills the JVM with "symbol lookup error". This class
 * looks symbols up with {@code dlopen}/{@code dlsym} through the FFM API, which never crashes.
 *
 * <p>Also points cuFile's log at {@code java.io.tmpdir} ({@code CUFILE_LOGFILE_PATH}) unless the user set
 * it, so {@code cufile.log} does not appear in the working directory.
 *
 * <p>Thread-safe: one immutable instance per process, made on first use.
 */
public final class CuFileLibrary {
    /** The library file name libcufile is installed under (CUDA toolkit {@code targets/.../lib}). */
    public static final String SONAME = "libcufile.so.0";

    private static final List<String> REQUIRED = List.of("cuFileDriverOpen", "cuFileHandleRegister",
            "cuFileHandleDeregister", "cuFileBufRegister", "cuFileBufDeregister", "cuFileRead",
            "cuFileDriverGetProperties");

    private final SymbolLookup lookup;
    private final String failure;
    private final String logPath;

    private CuFileLibrary(SymbolLookup lookup, String failure, String logPath) {
        this.lookup = lookup;
        this.failure = failure;
        this.logPath = logPath;
    }

    private static final class Holder {
        static final CuFileLibrary INSTANCE = find();
    }

    /**
     * @return the process-wide view of libcufile (found or not); never throws
     */
    public static CuFileLibrary get() {
        return Holder.INSTANCE;
    }

    @SuppressWarnings("restricted") // FFM library lookup / downcall binding: native access is checked at run time
    private static CuFileLibrary find() {
        String log = redirectLog();
        SymbolLookup lookup;
        try {
            lookup = SymbolLookup.libraryLookup(SONAME, Arena.global());
        } catch (IllegalArgumentException | UnsatisfiedLinkError e) {
            return new CuFileLibrary(null, "no libcufile: " + SONAME
                    + " is not on the library path (install the CUDA toolkit's cuFile / GDS package, or add its lib directory to LD_LIBRARY_PATH)", log);
        }
        for (String s : REQUIRED) {
            if (lookup.find(s).isEmpty()) {
                return new CuFileLibrary(lookup, SONAME + " lacks " + s + ": too old for this loader", log);
            }
        }
        return new CuFileLibrary(lookup, null, log);
    }

    /** @return true if libcufile was found and exports every function the loader needs */
    public boolean isPresent() {
        return failure == null;
    }

    /** @return why libcufile cannot be used, or empty when {@link #isPresent()} */
    public Optional<String> failure() {
        return Optional.ofNullable(failure);
    }

    /**
     * @param symbol a C function name, e.g. {@code cuFileGetVersion}
     * @return true if the installed libcufile exports it (and so may be called)
     */
    public boolean exports(String symbol) {
        return lookup != null && lookup.find(symbol).isPresent();
    }

    /** @return where cuFile writes its log ({@code CUFILE_LOGFILE_PATH}), or empty if unknown */
    public Optional<String> logPath() {
        return Optional.ofNullable(logPath);
    }

    /**
     * Calls a {@code CUfileError_t fn(void)} export directly through FFM; used for entry points the bytedeco
     * binding maps to a different symbol (its {@code cuFileDriverClose} calls {@code cuFileDriverClose_v2}).
     *
     * @param symbol exported function name
     * @return the {@code err} field of the returned {@code CUfileError_t}
     * @throws IllegalStateException if the symbol is not exported
     */
    @SuppressWarnings("restricted") // FFM library lookup / downcall binding: native access is checked at run time
    int callNoArgs(String symbol) {
        MemorySegment fn = lookup == null ? null : lookup.find(symbol).orElse(null);
        if (fn == null) {
            throw new IllegalStateException(SONAME + " does not export " + symbol);
        }
        // CUfileError_t is struct { CUfileOpError err; CUresult cu_err; }: two ints, returned in a register
        MethodHandle h = Linker.nativeLinker().downcallHandle(fn, FunctionDescriptor.of(ValueLayout.JAVA_LONG));
        try {
            long packed = (long) h.invokeExact();
            return (int) packed;
        } catch (Throwable t) {
            throw new IllegalStateException(symbol + " failed: " + t, t);
        }
    }

    @SuppressWarnings("restricted") // FFM library lookup / downcall binding: native access is checked at run time
    private static String redirectLog() {
        String existing = System.getenv("CUFILE_LOGFILE_PATH");
        if (existing != null) {
            return existing;
        }
        String path = Path.of(System.getProperty("java.io.tmpdir"), "gdsloader-cufile-" + ProcessHandle.current().pid() + ".log").toString();
        try (Arena arena = Arena.ofConfined()) {
            Linker linker = Linker.nativeLinker();
            MethodHandle setenv = linker.downcallHandle(linker.defaultLookup().find("setenv").orElseThrow(),
                    FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
            int rc = (int) setenv.invokeExact(arena.allocateFrom("CUFILE_LOGFILE_PATH"), arena.allocateFrom(path), 0);
            return rc == 0 ? path : null;
        } catch (Throwable t) {
            return null;
        }
    }
}
