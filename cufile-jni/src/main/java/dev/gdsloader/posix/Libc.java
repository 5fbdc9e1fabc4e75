package dev.gdsloader.posix;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * The few libc calls the loader needs ({@code open}, {@code openat}, {@code openat2} through {@code syscall},
 * {@code statx}, {@code pread}, {@code close}, {@code mmap}, {@code munmap}, {@code madvise}), bound through the
 * Foreign Function &amp; Memory API with {@code errno} captured right after each call.
 *
 * <p>Flag values are Linux's generic ones ({@code asm-generic/fcntl.h}, used by x86_64 and aarch64).
 * Thread-safe: the method handles are immutable; each call captures errno into a segment the caller owns.
 */
// restricted (javac lint): this class exists to bind C functions through FFM's restricted Linker API;
// the JVM checks native access at run time (--enable-native-access, bin/jvm-flags)
@SuppressWarnings("restricted")
final class Libc {
    private Libc() {
    }

    static final int O_RDONLY = 0;
    static final int O_CLOEXEC = 02000000;
    /** x86_64 value; aarch64 uses 0200000. */
    static final int O_DIRECT = isAarch64() ? 0200000 : 040000;
    /** x86_64 value; aarch64 uses 040000. */
    static final int O_DIRECTORY = isAarch64() ? 040000 : 0200000;
    /** x86_64 value; aarch64 uses 0100000. */
    static final int O_NOFOLLOW = isAarch64() ? 0100000 : 0400000;
    /** Both architectures: an open of a FIFO does not wait for a writer; no effect on regular files' reads. */
    static final int O_NONBLOCK = 04000;
    /** Both architectures: a descriptor that names a file without opening it for I/O. */
    static final int O_PATH = 010000000;

    /** {@code openat2}'s system call number, the same on x86_64 and aarch64 (the unified table from 5.6 on). */
    static final long SYS_OPENAT2 = 437;
    /** {@code linux/openat2.h}: fail if the path leaves the starting directory (absolute paths, {@code ..}, links). */
    static final long RESOLVE_BENEATH = 0x08;
    /** {@code linux/openat2.h}: no {@code /proc/PID/fd}-style magic links. */
    static final long RESOLVE_NO_MAGICLINKS = 0x02;
    /** {@code linux/openat2.h}: no symbolic link in any component. */
    static final long RESOLVE_NO_SYMLINKS = 0x04;
    /** {@code struct open_how}: {@code u64 flags, u64 mode, u64 resolve}. */
    static final long OPEN_HOW_SIZE = 24;

    /** {@code fcntl.h}: with an empty path, {@code statx} describes the descriptor itself. */
    static final int AT_EMPTY_PATH = 0x1000;
    /** {@code linux/stat.h}: type, mode, nlink, uid, gid, times, ino, size, blocks. */
    static final int STATX_BASIC_STATS = 0x7ff;
    /** {@code struct statx}'s size in bytes ({@code linux/stat.h}). */
    static final long STATX_SIZE = 256;
    /** Byte offsets in {@code struct statx} ({@code linux/stat.h}; the same layout on every architecture). */
    static final long STX_NLINK = 16;
    static final long STX_MODE = 28;
    static final long STX_INO = 32;
    static final long STX_SIZE = 40;
    static final long STX_DEV_MAJOR = 136;
    static final long STX_DEV_MINOR = 140;
    /** {@code sys/stat.h}: the file type bits of a mode, and a regular file's. */
    static final int S_IFMT = 0170000;
    static final int S_IFREG = 0100000;
    static final int S_IFLNK = 0120000;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
    static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO_HANDLE =
            CALL_STATE.varHandle(java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));

    static final MethodHandle OPEN = LINKER.downcallHandle(
            LINKER.defaultLookup().find("open").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
            ERRNO, Linker.Option.firstVariadicArg(2));
    static final MethodHandle OPENAT = LINKER.downcallHandle(
            LINKER.defaultLookup().find("openat").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT),
            ERRNO, Linker.Option.firstVariadicArg(3));
    /** {@code long syscall(long nr, int dirfd, const char *path, struct open_how *how, size_t size)}: openat2. */
    static final MethodHandle SYSCALL_OPENAT2 = LINKER.downcallHandle(
            LINKER.defaultLookup().find("syscall").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
                    ValueLayout.ADDRESS, ValueLayout.JAVA_LONG),
            ERRNO, Linker.Option.firstVariadicArg(1));
    /** {@code int statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *buf)} (glibc 2.28). */
    static final MethodHandle STATX = LINKER.downcallHandle(
            LINKER.defaultLookup().find("statx").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT,
                    ValueLayout.JAVA_INT, ValueLayout.ADDRESS),
            ERRNO);
    /** {@code int getrlimit(int resource, struct rlimit *rlim)}; {@code rlim_cur}, {@code rlim_max}: two u64. */
    static final MethodHandle GETRLIMIT = LINKER.downcallHandle(
            LINKER.defaultLookup().find("getrlimit").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.ADDRESS),
            ERRNO);
    /** {@code sys/resource.h}: the most file descriptors a process may have open (x86_64 and aarch64). */
    static final int RLIMIT_NOFILE = 7;
    static final MethodHandle PREAD = LINKER.downcallHandle(
            LINKER.defaultLookup().find("pread").orElseThrow(),
            // the buffer is passed as a raw address (a long): no segment object per call on the hot path
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG),
            ERRNO);
    /** {@code getpid()}: the cheapest call there is, used for its return into Java ({@link MappedFaults#settle}). */
    static final MethodHandle GETPID = LINKER.downcallHandle(
            LINKER.defaultLookup().find("getpid").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT));
    static final MethodHandle CLOSE = LINKER.downcallHandle(
            LINKER.defaultLookup().find("close").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
            ERRNO);

    static final int PROT_READ = 1;
    static final int MAP_SHARED = 1;
    static final int MADV_WILLNEED = 3;
    /** {@code mmap}'s failure value, {@code (void*) -1}. */
    static final long MAP_FAILED = -1L;

    static final MethodHandle MMAP = LINKER.downcallHandle(
            LINKER.defaultLookup().find("mmap").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG),
            ERRNO);
    static final MethodHandle MUNMAP = LINKER.downcallHandle(
            LINKER.defaultLookup().find("munmap").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG),
            ERRNO);
    static final MethodHandle MADVISE = LINKER.downcallHandle(
            LINKER.defaultLookup().find("madvise").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT),
            ERRNO);

    static int errno(MemorySegment state) {
        return (int) ERRNO_HANDLE.get(state, 0L);
    }

    static MemorySegment newCallState(Arena arena) {
        return arena.allocate(CALL_STATE);
    }

    private static boolean isAarch64() {
        String arch = System.getProperty("os.arch", "");
        return arch.equals("aarch64") || arch.equals("arm64");
    }
}
