package dev.gdsloader.posix;

/**
 * Makes a fault in a copy out of a file mapping surface where the copy's caller can catch it.
 *
 * <p>A read of a mapped file below its mapped length, after the file was cut shorter, faults ({@code SIGBUS}). HotSpot
 * turns a fault inside {@code MemorySegment.copy} into an {@link InternalError} ("a fault occurred in an unsafe memory
 * access operation"), but a JIT-compiled copy raises it asynchronously: at the thread's next safepoint poll or
 * transition out of native code, which may lie past the {@code catch} around the copy (issue 21, finding 8). A caller
 * that copies a group of pieces from mappings inside one {@code try} and calls {@link #settle()} as the last statement
 * of that {@code try} gets the error there: the return of a native call into Java processes the thread's pending
 * asynchronous exception.
 *
 * <p>Thread-safe, stateless.
 */
public final class MappedFaults {
    private MappedFaults() {
    }

    /**
     * One native call ({@code getpid}, well under a microsecond), so that a fault of this thread's earlier mapped copies
     * is raised here, as an {@link InternalError}, if it was not raised already.
     *
     * @throws InternalError if a copy out of a mapping on this thread faulted and its error is still pending
     */
    public static void settle() {
        try {
            int pid = (int) Libc.GETPID.invokeExact();
            assert pid > 0;
        } catch (InternalError e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("getpid() through the FFM API failed", t);
        }
    }
}
