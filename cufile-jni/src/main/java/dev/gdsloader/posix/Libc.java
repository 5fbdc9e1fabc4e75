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
 * The few libc calls the loader needs ({@code open}, {@code pread}, {@code close}, {@code mmap},
 * {@code munmap}, {@code madvise}), bound through the
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

    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
    static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO_HANDLE =
            CALL_STATE.varHandle(java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));

    static final MethodHandle OPEN = LINKER.downcallHandle(
            LINKER.defaultLookup().find("open").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
            ERRNO, Linker.Option.firstVariadicArg(2));
    static final MethodHandle PREAD = LINKER.downcallHandle(
            LINKER.defaultLookup().find("pread").orElseThrow(),
            // the buffer is passed as a raw address (a long): no segment object per call on the hot path
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG),
            ERRNO);
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
