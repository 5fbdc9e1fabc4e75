package dev.gdsloader.posix;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

/**
 * Which file an open descriptor is, as {@code statx} on the descriptor itself tells it ({@code linux/stat.h}): two
 * descriptors are of one file exactly when their {@link #device()} and {@link #inode()} are equal, whatever paths they
 * were opened by.
 *
 * @param device the device the file lives on, as {@code st_dev} encodes it (glibc's {@code makedev} of
 *     {@code stx_dev_major} and {@code stx_dev_minor}; equal to Java's {@code unix:dev} attribute)
 * @param inode the inode number on that device ({@code stx_ino})
 * @param links the number of hard links, names, the file has ({@code stx_nlink}); more than 1 means another name,
 *     possibly outside any directory checked, reaches the same bytes
 * @param regular whether it is a regular file ({@code S_IFREG}), not a directory, FIFO, socket or device
 * @param size its size in bytes when described
 */
public record FileIdentity(long device, long inode, long links, boolean regular, long size) {
    /**
     * @param other another identity
     * @return true if both name one file: the same device and inode (links, type and size may have changed since)
     */
    public boolean sameFile(FileIdentity other) {
        return other != null && device == other.device && inode == other.inode;
    }

    /** @return e.g. "device 259:1 inode 1234 (1 link)", for messages */
    @Override
    public String toString() {
        return "device " + major(device) + ":" + minor(device) + " inode " + Long.toUnsignedString(inode) + " (" + links
                + (links == 1 ? " link" : " links") + (regular ? "" : ", not a regular file") + ")";
    }

    /**
     * Describes {@code fd} ({@code statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS)}).
     *
     * @param path the file, for messages
     * @param fd an open descriptor (an {@code O_PATH} one too)
     * @return its identity
     * @throws IOException naming the file and the errno if {@code statx} fails
     */
    static FileIdentity of(Path path, int fd) throws IOException {
        return describe(path, fd, false) instanceof FileIdentity id ? id : null;
    }

    /**
     * @param path the file, for messages
     * @param fd an {@code O_PATH | O_NOFOLLOW} descriptor, which may be of a link itself
     * @return true if {@code fd} is a symbolic link's
     * @throws IOException naming the file and the errno if {@code statx} fails
     */
    static boolean isLink(Path path, int fd) throws IOException {
        return (boolean) describe(path, fd, true);
    }

    /** @return the identity, or with {@code linkOnly} whether the file type is a symbolic link */
    private static Object describe(Path path, int fd, boolean linkOnly) throws IOException {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = Libc.newCallState(arena);
            MemorySegment buf = arena.allocate(Libc.STATX_SIZE, 8);
            int rc = (int) Libc.STATX.invokeExact(state, fd, arena.allocateFrom(""), Libc.AT_EMPTY_PATH,
                    Libc.STATX_BASIC_STATS, buf);
            if (rc != 0) {
                throw new PosixFile.ErrnoException(path + ": statx failed: " + Errno.describe(Libc.errno(state)),
                        Libc.errno(state));
            }
            long major = Integer.toUnsignedLong(buf.get(ValueLayout.JAVA_INT, Libc.STX_DEV_MAJOR));
            long minor = Integer.toUnsignedLong(buf.get(ValueLayout.JAVA_INT, Libc.STX_DEV_MINOR));
            int mode = Short.toUnsignedInt(buf.get(ValueLayout.JAVA_SHORT, Libc.STX_MODE));
            if (linkOnly) {
                return (mode & Libc.S_IFMT) == Libc.S_IFLNK;
            }
            return new FileIdentity(makedev(major, minor), buf.get(ValueLayout.JAVA_LONG, Libc.STX_INO),
                    Integer.toUnsignedLong(buf.get(ValueLayout.JAVA_INT, Libc.STX_NLINK)),
                    (mode & Libc.S_IFMT) == Libc.S_IFREG, buf.get(ValueLayout.JAVA_LONG, Libc.STX_SIZE));
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new IOException(path + ": statx failed: " + t, t);
        }
    }

    /** glibc's {@code gnu_dev_makedev} ({@code sys/sysmacros.h}): how {@code st_dev} packs major and minor. */
    static long makedev(long major, long minor) {
        return ((major & 0xfffff000L) << 32) | ((major & 0xfffL) << 8) | ((minor & 0xffffff00L) << 12) | (minor & 0xffL);
    }

    private static long major(long dev) {
        return ((dev >>> 32) & 0xfffff000L) | ((dev >>> 8) & 0xfffL);
    }

    private static long minor(long dev) {
        return ((dev >>> 12) & 0xffffff00L) | (dev & 0xffL);
    }
}
