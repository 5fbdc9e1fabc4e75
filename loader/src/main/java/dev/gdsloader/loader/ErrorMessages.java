package dev.gdsloader.loader;

/**
 * One line saying what went wrong, for the command line and the samples alike: file-system exceptions carry
 * only a path in their message, so the reason their type stands for is added. Stateless.
 */
public final class ErrorMessages {
    private ErrorMessages() {
    }

    /**
     * @param t what was thrown
     * @return its message, with the reason added where the message is only a path; never a bare class name
     *     where a reason is known
     */
    public static String of(Throwable t) {
        if (t instanceof java.nio.file.NoSuchFileException e) {
            return e.getFile() + ": no such file or directory";
        }
        if (t instanceof java.nio.file.FileAlreadyExistsException e) {
            return e.getFile() + ": already exists";
        }
        if (t instanceof java.nio.file.AccessDeniedException e) {
            return e.getFile() + ": permission denied";
        }
        if (t instanceof java.nio.file.NotDirectoryException e) {
            return e.getFile() + ": not a directory";
        }
        if (t instanceof java.nio.file.DirectoryNotEmptyException e) {
            return e.getFile() + ": directory not empty";
        }
        if (t instanceof java.nio.file.FileSystemException e && e.getFile() != null
                && dev.gdsloader.formats.ShardFiles.isLinkLoop(java.nio.file.Path.of(e.getFile()))) {
            return e.getFile() + ": a symbolic link loop (too many levels of symbolic links)";
        }
        if (t instanceof java.nio.file.FileSystemException e && e.getReason() == null) {
            return e.getFile() + ": " + e.getClass().getSimpleName();
        }
        if (t instanceof java.io.UncheckedIOException e && e.getCause() != null) {
            return of(e.getCause());
        }
        String m = t.getMessage();
        return m == null ? t.toString() : m;
    }
}
