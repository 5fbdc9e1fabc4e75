package dev.gdsloader.posix;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A whole file mapped read-only and shared ({@code mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0)}), by address
 * only: no {@link MemorySegment} over it is handed out, because Java code must never read the mapping (a file
 * truncated after mapping raises {@code SIGBUS} on access, which would kill the JVM). Only native consumers read it
 * (the GPU, after {@code cudaHostRegister}). The descriptor is closed once the mapping exists.
 *
 * <p>Owned by whoever mapped it; {@link #close()} unmaps once. Thread-safe.
 */
public final class FileMapping implements AutoCloseable {
    private final Path path;
    private final long address;
    private final long size;
    private final AtomicBoolean closed = new AtomicBoolean();

    private FileMapping(Path path, long address, long size) {
        this.path = path;
        this.address = address;
        this.size = size;
    }

    /**
     * Maps {@code size} bytes of {@code path} from offset 0, read-only and shared.
     *
     * @param path the file
     * @param size bytes to map, &gt; 0 (the file's size as the caller saw it)
     * @return the mapping, owned by the caller
     * @throws IOException naming the file, the size and the errno if it cannot be opened or mapped
     * @throws IllegalArgumentException if {@code size <= 0} (an empty file cannot be mapped)
     */
    public static FileMapping map(Path path, long size) throws IOException {
        if (size <= 0) {
            throw new IllegalArgumentException(path + ": cannot map " + size + " bytes (empty file?)");
        }
        try (PosixFile f = PosixFile.openForRead(path, false); Arena arena = Arena.ofConfined()) {
            MemorySegment state = Libc.newCallState(arena);
            long a = (long) Libc.MMAP.invokeExact(state, 0L, size, Libc.PROT_READ, Libc.MAP_SHARED, f.fd(), 0L);
            if (a == Libc.MAP_FAILED || a == 0) {
                throw new IOException(path + ": mmap(" + size + " bytes, PROT_READ, MAP_SHARED) failed: "
                        + Errno.describe(Libc.errno(state)));
            }
            return new FileMapping(path, a, size);
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException(path + ": mmap failed: " + t, t);
        }
    }

    /** @return the file mapped */
    public Path path() {
        return path;
    }

    /** @return the mapping's first byte's address (page aligned); never dereference it from Java */
    public long address() {
        return address;
    }

    /** @return bytes mapped */
    public long size() {
        return size;
    }

    /**
     * Asks the kernel to read the mapped file ahead ({@code madvise(MADV_WILLNEED)}): a hint, so a failure is
     * returned rather than thrown.
     *
     * @return 0, or the errno of a refused hint
     */
    public int willNeed() {
        ensureOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Libc.newCallState(arena);
            int rc = (int) Libc.MADVISE.invokeExact(state, address, size, Libc.MADV_WILLNEED);
            return rc == 0 ? 0 : Libc.errno(state);
        } catch (Throwable t) {
            throw new IllegalStateException(path + ": madvise failed: " + t, t);
        }
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException(path + ": mapping already unmapped");
        }
    }

    /** @return true once unmapped */
    public boolean isClosed() {
        return closed.get();
    }

    /**
     * Unmaps, once; later calls do nothing.
     *
     * @throws IllegalStateException naming the file and the errno if {@code munmap} fails
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Libc.newCallState(arena);
            int rc = (int) Libc.MUNMAP.invokeExact(state, address, size);
            if (rc != 0) {
                throw new IllegalStateException(path + ": munmap(" + size + " bytes) failed: " + Errno.describe(Libc.errno(state)));
            }
        } catch (IllegalStateException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(path + ": munmap failed: " + t, t);
        }
    }

    @Override
    public String toString() {
        return "mapping of " + path + " (" + size + " bytes at 0x" + Long.toHexString(address) + ")";
    }
}
