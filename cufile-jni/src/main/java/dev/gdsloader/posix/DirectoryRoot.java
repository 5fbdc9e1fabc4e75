package dev.gdsloader.posix;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A directory whose files are opened beneath it, by a descriptor of the directory ({@code O_PATH | O_DIRECTORY}) and
 * a relative path, never following a symbolic link: {@code openat2(dirfd, path, {flags, 0, RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS})} (Linux 5.6, {@code linux/openat2.h}, called through {@code syscall}
 * 437, its number on x86_64 and aarch64), or where the kernel answers {@code ENOSYS}, {@code openat} one component at a
 * time with {@code O_NOFOLLOW} (directories with {@code O_PATH | O_DIRECTORY}). Either way a link anywhere in the path,
 * a {@code ..} or an absolute path is refused, so a link swapped in after a check opens nothing outside. The file
 * opened is then described by its descriptor ({@link FileIdentity}, {@code statx}): it must be a regular file, with one
 * link unless {@link #allowsHardLinks()} (a second name of a file may lie outside the directory: a hard link under
 * the root to a file outside cannot be told from the file by its path), and where the caller gives the identity it
 * checked earlier, the same device and inode.
 *
 * <p>Owns its descriptor: {@link #close()} closes it once; an open or identify after close throws
 * {@link IllegalStateException}. Close it after the opens that use it have returned (the files it opened stay open:
 * each {@link PosixFile} owns its own descriptor). Thread-safe.
 */
public final class DirectoryRoot implements AutoCloseable {
    private static final int READ_FLAGS = Libc.O_RDONLY | Libc.O_CLOEXEC | Libc.O_NOFOLLOW | Libc.O_NONBLOCK;
    private static final int PATH_FLAGS = Libc.O_PATH | Libc.O_CLOEXEC | Libc.O_NOFOLLOW;
    private static final long RESOLVE = Libc.RESOLVE_BENEATH | Libc.RESOLVE_NO_MAGICLINKS | Libc.RESOLVE_NO_SYMLINKS;
    /** How often an {@code openat2} walk that a concurrent rename disturbed ({@code EAGAIN}) is tried again. */
    private static final int EAGAIN_TRIES = 8;

    private final Path path;
    private final int fd;
    private final boolean allowHardLinks;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** False once the kernel answered {@code ENOSYS} (or never tried, for tests): per-component {@code openat}. */
    private volatile boolean openat2;

    private DirectoryRoot(Path path, int fd, boolean allowHardLinks, boolean openat2) {
        this.path = path;
        this.fd = fd;
        this.allowHardLinks = allowHardLinks;
        this.openat2 = openat2;
    }

    /**
     * Opens a directory as a root ({@code open(realPath, O_PATH | O_DIRECTORY | O_CLOEXEC)}). Links in
     * {@code dir}'s own path are followed once, here: the directory is the one its real path names now.
     *
     * @param dir the directory
     * @param allowHardLinks whether regular files with more than one link may be opened beneath it
     * @return the root, owned by the caller
     * @throws IOException naming the directory and the errno if it cannot be opened or is not a directory
     */
    public static DirectoryRoot open(Path dir, boolean allowHardLinks) throws IOException {
        return open(dir, allowHardLinks, true);
    }

    /** As {@link #open(Path, boolean)}; {@code useOpenat2} false walks component by component from the start (tests). */
    static DirectoryRoot open(Path dir, boolean allowHardLinks, boolean useOpenat2) throws IOException {
        Path real = dir.toRealPath();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Libc.newCallState(arena);
            int fd = (int) Libc.OPEN.invokeExact(state, arena.allocateFrom(real.toString()),
                    Libc.O_PATH | Libc.O_DIRECTORY | Libc.O_CLOEXEC, 0);
            if (fd < 0) {
                int errno = Libc.errno(state);
                throw new PosixFile.ErrnoException(real + ": cannot open as a directory root: " + Errno.describe(errno), errno);
            }
            return new DirectoryRoot(real, fd, allowHardLinks, useOpenat2);
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException(real + ": cannot open as a directory root: " + t, t);
        }
    }

    /** @return the directory's real path (files are named by it in messages) */
    public Path path() {
        return path;
    }

    /** @return whether regular files with more than one hard link are opened */
    public boolean allowsHardLinks() {
        return allowHardLinks;
    }

    /**
     * Describes the file at {@code relative} without opening it for reading ({@code O_PATH}, beneath the root, no
     * links followed), after the same checks as {@link #openBeneath(Path, boolean, FileIdentity)} less the identity.
     *
     * @param relative a path relative to the root, without {@code .} or {@code ..} segments
     * @return the file's identity
     * @throws RefusedFileException if a component is a link, the path leaves the root, the file is not regular, or
     *     has more than one link where they are not allowed
     * @throws IOException naming the file and the errno if it cannot be found
     * @throws IllegalStateException if the root is closed
     */
    public FileIdentity identify(Path relative) throws IOException {
        Path file = checked(relative);
        int f = openFd(file, relative, PATH_FLAGS);
        try {
            return admitted(file, f, FileIdentity.of(file, f), null);
        } finally {
            close(f);
        }
    }

    /**
     * Opens the file at {@code relative} read-only beneath the root.
     *
     * @param relative a path relative to the root, without {@code .} or {@code ..} segments
     * @param preferDirect whether to try {@code O_DIRECT} first (buffered where the filesystem refuses it)
     * @param expected the identity checked earlier, which the opened file must have; null to check none
     * @return the open file, named {@code path().resolve(relative)}, owned by the caller
     * @throws RefusedFileException if a component is a link, the path leaves the root, the file is not regular, has
     *     more than one link where they are not allowed, or is not the {@code expected} file
     * @throws IOException naming the file and the errno if it cannot be opened
     * @throws IllegalStateException if the root is closed
     */
    public PosixFile openBeneath(Path relative, boolean preferDirect, FileIdentity expected) throws IOException {
        Path file = checked(relative);
        int f;
        boolean direct = preferDirect;
        String note = preferDirect ? "O_DIRECT" : "buffered (O_DIRECT not requested)";
        try {
            f = openFd(file, relative, READ_FLAGS | (preferDirect ? Libc.O_DIRECT : 0));
        } catch (PosixFile.ErrnoException e) {
            if (!preferDirect || e.errno() != Errno.EINVAL) {
                throw e;
            }
            f = openFd(file, relative, READ_FLAGS);
            direct = false;
            note = "buffered: the filesystem refused O_DIRECT (EINVAL)";
        }
        try {
            admitted(file, f, FileIdentity.of(file, f), expected);
        } catch (IOException | RuntimeException e) {
            close(f);
            throw e;
        }
        return PosixFile.adopt(file, f, direct, note);
    }

    private FileIdentity admitted(Path file, int f, FileIdentity id, FileIdentity expected) throws IOException {
        if (!id.regular() && FileIdentity.isLink(file, f)) { // O_PATH | O_NOFOLLOW opens a last-component link itself
            throw failure(file, Errno.ELOOP, Libc.O_PATH, "openat");
        }
        if (!id.regular()) {
            throw new RefusedFileException(file, RefusedFileException.Reason.NOT_REGULAR, "not a regular file");
        }
        if (id.links() > 1 && !allowHardLinks) {
            throw new RefusedFileException(file, RefusedFileException.Reason.HARD_LINK, "a regular file with " + id.links()
                    + " hard links: another name may reach it from outside the root (serve it with --allow-hard-links,"
                    + " or copy it)");
        }
        if (expected != null && !expected.sameFile(id)) {
            throw new RefusedFileException(file, RefusedFileException.Reason.REPLACED, "it is " + id + ", not the file "
                    + "checked when the dataset was planned (" + expected + "): replaced since");
        }
        return id;
    }

    /** @return {@code path().resolve(relative)}, after refusing an unusable relative path */
    private Path checked(Path relative) throws RefusedFileException {
        if (closed.get()) {
            throw new IllegalStateException(path + ": directory root already closed");
        }
        if (relative.isAbsolute() || relative.getNameCount() == 0 || relative.toString().isEmpty()) {
            throw new RefusedFileException(path.resolve(relative), RefusedFileException.Reason.OUTSIDE,
                    "not a path relative to the root " + path);
        }
        for (Path name : relative) {
            String n = name.toString();
            if (n.equals("..") || n.equals(".")) {
                throw new RefusedFileException(path.resolve(relative), RefusedFileException.Reason.OUTSIDE,
                        "'" + n + "' segments are not opened beneath a root");
            }
        }
        return path.resolve(relative);
    }

    private int openFd(Path file, Path relative, int flags) throws IOException {
        if (openat2) {
            try {
                return openat2(file, relative, flags);
            } catch (PosixFile.ErrnoException e) {
                if (e.errno() != Errno.ENOSYS) {
                    throw e;
                }
                openat2 = false; // a kernel before 5.6 (or a sandbox without it): walk with O_NOFOLLOW
            }
        }
        return walk(file, relative, flags);
    }

    private int openat2(Path file, Path relative, int flags) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Libc.newCallState(arena);
            MemorySegment name = arena.allocateFrom(relative.toString());
            MemorySegment how = arena.allocate(Libc.OPEN_HOW_SIZE, 8);
            how.set(ValueLayout.JAVA_LONG, 0, Integer.toUnsignedLong(flags));
            how.set(ValueLayout.JAVA_LONG, 8, 0L);
            how.set(ValueLayout.JAVA_LONG, 16, RESOLVE);
            for (int attempt = 1; ; attempt++) {
                long rc = (long) Libc.SYSCALL_OPENAT2.invokeExact(state, Libc.SYS_OPENAT2, fd, name, how, Libc.OPEN_HOW_SIZE);
                if (rc >= 0) {
                    return (int) rc;
                }
                int errno = Libc.errno(state);
                if ((errno == Errno.EAGAIN && attempt < EAGAIN_TRIES) || errno == Errno.EINTR) {
                    continue;
                }
                throw failure(file, errno, flags, "openat2");
            }
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException(file + ": openat2 failed: " + t, t);
        }
    }

    /** Opens {@code relative} one component at a time: directories {@code O_PATH | O_DIRECTORY | O_NOFOLLOW}. */
    private int walk(Path file, Path relative, int flags) throws IOException {
        int dir = fd;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Libc.newCallState(arena);
            int n = relative.getNameCount();
            for (int i = 0; i < n; i++) {
                boolean last = i == n - 1;
                int f = (int) Libc.OPENAT.invokeExact(state, dir, arena.allocateFrom(relative.getName(i).toString()),
                        last ? flags : PATH_FLAGS | Libc.O_DIRECTORY, 0);
                int errno = f < 0 ? Libc.errno(state) : 0;
                if (dir != fd) {
                    close(dir);
                }
                dir = fd;
                if (f < 0) {
                    throw failure(file, last || errno != Errno.ENOTDIR ? errno : Errno.ELOOP, flags, "openat");
                }
                dir = f;
            }
            return dir;
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            if (dir != fd) {
                close(dir);
            }
            throw new IOException(file + ": openat failed: " + t, t);
        }
    }

    /**
     * @return the error of an open beneath the root: a refusal for a link or an escape, else the errno's. A directory
     *     component opened {@code O_DIRECTORY | O_NOFOLLOW} answers {@code ENOTDIR} for a link, or for a file; both
     *     are reported as a link there (a file in the middle of a path is no dataset either)
     */
    private IOException failure(Path file, int errno, int flags, String call) {
        if (errno == Errno.ELOOP) {
            return new RefusedFileException(file, RefusedFileException.Reason.LINK, "a component of its path beneath the root"
                    + " is a symbolic link (or not a directory): links are not followed beneath a served root");
        }
        if (errno == Errno.EXDEV) {
            return new RefusedFileException(file, RefusedFileException.Reason.OUTSIDE, "its path leads outside the root");
        }
        return new PosixFile.ErrnoException(file + ": " + call + "(" + ((flags & Libc.O_DIRECT) != 0 ? "O_DIRECT"
                : (flags & Libc.O_PATH) != 0 ? "O_PATH" : "buffered") + ") beneath " + path + " failed: "
                + Errno.describe(errno), errno);
    }

    private static void close(int f) {
        try (Arena arena = Arena.ofConfined()) {
            int rc = (int) Libc.CLOSE.invokeExact(Libc.newCallState(arena), f);
            assert rc == 0 || rc == -1;
        } catch (Throwable ignored) {
            // close() of a descriptor this class opened cannot fail in a way a caller can act on
        }
    }

    /** Closes the directory's descriptor once; later calls do nothing. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            close(fd);
        }
    }

    @Override
    public String toString() {
        return "directory root " + path + (allowHardLinks ? " (hard links allowed)" : "");
    }
}
