package dev.gdsloader.posix;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The files of one planned dataset, each checked once under a {@link DirectoryRoot} ({@link #check}) and later opened
 * beneath that root as the same file ({@link #open}): the opener a prefetch server gives its sessions' loaders.
 *
 * <p>{@link #check} resolves a file's path once, with links (a link inside the root, such as a dataset alias, is
 * served), requires the real path inside the root, and records that real path relative to the root with the file's
 * {@link FileIdentity}, described beneath the root without following links. {@link #open} then opens exactly that
 * relative real path beneath the root with no link followed and requires the same device and inode: a link or another
 * file swapped in after the check is refused naming the file, and so is a file never checked. Hard links follow the
 * root's {@link DirectoryRoot#allowsHardLinks()} at both steps.
 *
 * <p>Thread-safe. Does not own the root: whoever opened it closes it, after the loaders using this have closed.
 */
public final class CheckedFiles implements ShardOpener {
    /** A checked file: where it is beneath the root (no links), and which file it was. */
    private record Checked(Path relative, FileIdentity identity) {
    }

    private final DirectoryRoot root;
    private final Map<Path, Checked> files = new ConcurrentHashMap<>();

    /**
     * @param root the root the files must lie beneath; not owned
     */
    public CheckedFiles(DirectoryRoot root) {
        this.root = Objects.requireNonNull(root, "root");
    }

    /** @return the root the files are opened beneath */
    public DirectoryRoot root() {
        return root;
    }

    /**
     * Checks {@code file} and records its identity for {@link #open}.
     *
     * @param file a file, by the path the loader will open it by (absolute, or relative to the working directory)
     * @return its identity
     * @throws RefusedFileException if its real path leaves the root ({@link RefusedFileException.Reason#OUTSIDE}), it
     *     is not a regular file, or has more than one link where the root does not allow them
     * @throws IOException naming the file if it does not exist or cannot be described
     */
    public FileIdentity check(Path file) throws IOException {
        Path key = key(file);
        Path real = key.toRealPath();
        if (!real.startsWith(root.path()) || real.equals(root.path())) {
            throw new RefusedFileException(key, RefusedFileException.Reason.OUTSIDE, "it leads outside the root " + root.path());
        }
        Path relative = root.path().relativize(real);
        FileIdentity id = root.identify(relative);
        files.put(key, new Checked(relative, id));
        return id;
    }

    /** @return how many files are checked */
    public int size() {
        return files.size();
    }

    /**
     * Opens a checked file beneath the root, as the file checked.
     *
     * @param file the path {@link #check} was given
     * @param preferDirect whether to try {@code O_DIRECT} first
     * @return the open file, named by its real path, owned by the caller
     * @throws RefusedFileException if it was never checked, a component of its checked real path is now a link, or
     *     it is now another file, or a hard-linked one where they are not allowed
     * @throws IOException naming the file and the errno if it cannot be opened
     */
    @Override
    public PosixFile open(Path file, boolean preferDirect) throws IOException {
        Path key = key(file);
        Checked c = files.get(key);
        if (c == null) {
            throw new RefusedFileException(key, RefusedFileException.Reason.NOT_CHECKED,
                    "not among the files checked when the dataset was planned");
        }
        return root.openBeneath(c.relative(), preferDirect, c.identity());
    }

    @Override
    public boolean opensByPath() {
        return false;
    }

    private static Path key(Path file) {
        return file.toAbsolutePath().normalize();
    }
}
