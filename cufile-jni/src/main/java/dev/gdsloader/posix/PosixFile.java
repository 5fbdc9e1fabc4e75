package dev.gdsloader.posix;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A file descriptor opened read-only, optionally with {@code O_DIRECT}, read with positional {@code pread}
 * straight into native memory.
 *
 * <p>With {@code O_DIRECT} the page cache is bypassed and the kernel requires the buffer address, the
 * file offset and the length to be multiples of the device's logical block size (this loader always
 * uses 4096 bytes, {@link #DIRECT_ALIGNMENT}). Filesystems that refuse {@code O_DIRECT} (tmpfs answers
 * {@code EINVAL}) are opened buffered by {@link #openForRead(Path, boolean)}; {@link #isDirect()} says which.
 *
 * <p>Owned by its opener; {@link #close()} closes the descriptor once. {@link #read} may be called from
 * many threads at once ({@code pread} does not move a shared file position).
 */
public final class PosixFile implements AutoCloseable {
    /** Alignment in bytes used for {@code O_DIRECT} buffers, offsets and lengths: 4 KiB. */
    public static final int DIRECT_ALIGNMENT = 4096;

    /** errno capture area of each thread, allocated once (no allocation per read on the hot path). */
    private static final ThreadLocal<MemorySegment> CALL_STATE =
            ThreadLocal.withInitial(() -> Libc.newCallState(Arena.ofAuto()));

    private final Path path;
    private final int fd;
    private final boolean direct;
    private final String directNote;
    private final AtomicBoolean closed = new AtomicBoolean();

    private PosixFile(Path path, int fd, boolean direct, String directNote) {
        this.path = path;
        this.fd = fd;
        this.direct = direct;
        this.directNote = directNote;
    }

    /**
     * Opens {@code path} read-only. With {@code preferDirect}, tries {@code O_DIRECT} first and, if the
     * filesystem refuses it with {@code EINVAL}, opens it buffered instead (not an error).
     *
     * @param path the file
     * @param preferDirect whether to try {@code O_DIRECT}
     * @return the open file, owned by the caller
     * @throws IOException naming the file and the errno if it cannot be opened at all
     */
    public static PosixFile openForRead(Path path, boolean preferDirect) throws IOException {
        return openPreferDirect(path, Libc.O_RDONLY | Libc.O_CLOEXEC, 0, preferDirect);
    }

    private static PosixFile openPreferDirect(Path path, int flags, int mode, boolean preferDirect) throws IOException {
        if (preferDirect) {
            try {
                return new PosixFile(path, open(path, flags | Libc.O_DIRECT, mode), true, "O_DIRECT");
            } catch (ErrnoException e) {
                if (e.errno() != Errno.EINVAL) {
                    throw e;
                }
                return new PosixFile(path, open(path, flags, mode), false, "buffered: the filesystem refused O_DIRECT (EINVAL)");
            }
        }
        return new PosixFile(path, open(path, flags, mode), false, "buffered (O_DIRECT not requested)");
    }

    private static int open(Path path, int flags, int mode) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Libc.newCallState(arena);
            MemorySegment name = arena.allocateFrom(path.toAbsolutePath().toString());
            int fd = (int) Libc.OPEN.invokeExact(state, name, flags, mode);
            if (fd < 0) {
                int errno = Libc.errno(state);
                throw new ErrnoException(path + ": open(" + ((flags & Libc.O_DIRECT) != 0 ? "O_DIRECT" : "buffered")
                        + ") failed: " + Errno.describe(errno), errno);
            }
            return fd;
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException(path + ": open failed: " + t, t);
        }
    }

    /**
     * Wraps a descriptor another opener of this package made ({@link DirectoryRoot}); the file owns it from now on.
     *
     * @param path the file, for messages
     * @param fd an open descriptor
     * @param direct whether it was opened with {@code O_DIRECT}
     * @param note how it was opened, in words
     * @return the file, owned by the caller
     */
    static PosixFile adopt(Path path, int fd, boolean direct, String note) {
        return new PosixFile(path, fd, direct, note);
    }

    /**
     * Describes the open descriptor itself ({@code statx(fd, "", AT_EMPTY_PATH)}): not the path it was opened by,
     * which may name another file by now.
     *
     * @return the file's device, inode, link count, type and size
     * @throws IOException naming the file and the errno if {@code statx} fails or the file is closed
     */
    public FileIdentity identity() throws IOException {
        if (closed.get()) {
            throw new IOException(path + ": statx on a closed file");
        }
        return FileIdentity.of(path, fd);
    }

    /** @return the path this descriptor was opened from */
    public Path path() {
        return path;
    }

    /** @return the raw file descriptor, for native libraries (cuFile handle registration) */
    public int fd() {
        return fd;
    }

    /** @return true if opened with {@code O_DIRECT} */
    public boolean isDirect() {
        return direct;
    }

    /** @return how the file was opened, in words, e.g. "buffered: the filesystem refused O_DIRECT (EINVAL)" */
    public String openMode() {
        return directNote;
    }

    /**
     * Reads up to {@code dst.byteSize()} bytes at {@code fileOffset} into {@code dst}, retrying on
     * {@code EINTR} and continuing after partial reads until {@code dst} is full or end of file.
     *
     * @param dst native destination; for {@code O_DIRECT} its address and size must be 4 KiB multiples
     * @param fileOffset byte offset in the file, &ge; 0 (4 KiB multiple for {@code O_DIRECT})
     * @return bytes read; less than {@code dst.byteSize()} only at end of file
     * @throws IOException naming the file, offset, length and errno on a read error
     */
    public long read(MemorySegment dst, long fileOffset) throws IOException {
        return transfer(Libc.PREAD, "pread", dst.address(), dst.byteSize(), fileOffset);
    }

    /**
     * Reads into {@code length} bytes of {@code base} starting at {@code offset}, as {@link #read(MemorySegment, long)}
     * but without making a slice (the loader's hot path).
     *
     * @param base native memory
     * @param offset byte offset in {@code base}
     * @param length bytes wanted
     * @param fileOffset byte offset in the file
     * @return bytes read; fewer than {@code length} only at end of file
     * @throws IndexOutOfBoundsException if the range falls outside {@code base}
     * @throws IOException naming the file, offset, length and errno on a read error
     */
    public long read(MemorySegment base, long offset, long length, long fileOffset) throws IOException {
        java.util.Objects.checkFromIndexSize(offset, length, base.byteSize());
        return transfer(Libc.PREAD, "pread", base.address() + offset, length, fileOffset);
    }

    private long transfer(java.lang.invoke.MethodHandle call, String name, long address, long want, long fileOffset)
            throws IOException {
        if (closed.get()) {
            throw new IOException(path + ": " + name + " on a closed file");
        }
        if (fileOffset < 0) {
            throw new IllegalArgumentException(path + ": negative file offset " + fileOffset);
        }
        long done = 0;
        try {
            MemorySegment state = CALL_STATE.get();
            while (done < want) {
                long n = (long) call.invokeExact(state, fd, address + done, want - done, fileOffset + done);
                if (n < 0) {
                    int errno = Libc.errno(state);
                    if (errno == Errno.EINTR) {
                        continue;
                    }
                    throw new ErrnoException(path + ": " + name + " of " + (want - done) + " bytes at offset "
                            + (fileOffset + done) + " failed: " + Errno.describe(errno)
                            + (direct && errno == Errno.EINVAL ? " (O_DIRECT needs 4096-byte aligned buffer, offset and length)" : ""),
                            errno);
                }
                if (n == 0) {
                    break;
                }
                done += n;
            }
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException(path + ": " + name + " failed: " + t, t);
        }
        return done;
    }

    /** Closes the descriptor once; later calls do nothing. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            try (Arena arena = Arena.ofConfined()) {
                int rc = (int) Libc.CLOSE.invokeExact(Libc.newCallState(arena), fd);
                assert rc == 0 || rc == -1;
            } catch (Throwable ignored) {
                // close() of a valid fd cannot fail in a way a reader can act on
            }
        }
    }

    /** An {@link IOException} that carries the errno that caused it. */
    public static final class ErrnoException extends IOException {
        private static final long serialVersionUID = 1L;
        private final int errno;

        ErrnoException(String message, int errno) {
            super(message);
            this.errno = errno;
        }

        /** @return the errno value */
        public int errno() {
            return errno;
        }
    }
}
