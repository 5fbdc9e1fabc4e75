package dev.gdsloader.posix;

import java.util.Map;

/**
 * Names of Linux {@code errno} values (x86_64 and aarch64 share them, from {@code asm-generic/errno-base.h}
 * and {@code asm-generic/errno.h}), so errors read "EINVAL (22)" rather than a bare number.
 *
 * <p>Stateless and thread-safe.
 */
public final class Errno {
    private Errno() {
    }

    /** Interrupted system call. */
    public static final int EINTR = 4;
    /** I/O error. */
    public static final int EIO = 5;
    /** Invalid argument; what {@code open(O_DIRECT)} returns on tmpfs. */
    public static final int EINVAL = 22;
    /** Try again; what {@code openat2} returns when a rename raced its {@code RESOLVE_BENEATH} walk. */
    public static final int EAGAIN = 11;
    /** Cross-device link; what {@code openat2} returns when {@code RESOLVE_BENEATH} refuses a path leaving the root. */
    public static final int EXDEV = 18;
    /** Not a directory; what {@code openat(O_DIRECTORY | O_NOFOLLOW)} returns for a symbolic link. */
    public static final int ENOTDIR = 20;
    /** Function not implemented; what {@code syscall(openat2)} returns on kernels before 5.6. */
    public static final int ENOSYS = 38;
    /** Too many levels of symbolic links; what {@code O_NOFOLLOW} and {@code RESOLVE_NO_SYMLINKS} return for one. */
    public static final int ELOOP = 40;

    private static final Map<Integer, String> NAMES = Map.ofEntries(
            Map.entry(1, "EPERM"), Map.entry(2, "ENOENT"), Map.entry(4, "EINTR"), Map.entry(5, "EIO"),
            Map.entry(6, "ENXIO"), Map.entry(9, "EBADF"), Map.entry(11, "EAGAIN"), Map.entry(12, "ENOMEM"),
            Map.entry(13, "EACCES"), Map.entry(14, "EFAULT"), Map.entry(16, "EBUSY"), Map.entry(17, "EEXIST"), Map.entry(18, "EXDEV"),
            Map.entry(19, "ENODEV"), Map.entry(20, "ENOTDIR"), Map.entry(21, "EISDIR"), Map.entry(22, "EINVAL"),
            Map.entry(23, "ENFILE"), Map.entry(24, "EMFILE"), Map.entry(27, "EFBIG"), Map.entry(28, "ENOSPC"),
            Map.entry(29, "ESPIPE"), Map.entry(30, "EROFS"), Map.entry(36, "ENAMETOOLONG"), Map.entry(38, "ENOSYS"),
            Map.entry(40, "ELOOP"), Map.entry(61, "ENODATA"), Map.entry(75, "EOVERFLOW"), Map.entry(95, "EOPNOTSUPP"),
            Map.entry(110, "ETIMEDOUT"), Map.entry(121, "EREMOTEIO"), Map.entry(122, "EDQUOT"));

    /**
     * @param errno a positive errno value
     * @return e.g. "EINVAL (22)", or "errno 999" when unknown
     */
    public static String describe(int errno) {
        String n = NAMES.get(errno);
        return n == null ? "errno " + errno : n + " (" + errno + ")";
    }
}
