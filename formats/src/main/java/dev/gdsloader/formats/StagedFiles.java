package dev.gdsloader.formats;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One dataset directory's new files, written where no reader looks and put in place together by {@link #commit}: the
 * old files go only once every new one is complete, and a run stopped before or inside the commit leaves the previous
 * dataset or no dataset, never a mix or shards without their manifest.
 *
 * <p>Two ways, chosen by {@link #in}:
 * <ul>
 *   <li><b>Directory swap</b> (the directory is missing or holds only regular files, the usual case): the new files
 *       go into a hidden sibling directory {@code .gdsloader-staged-<pid>-<random>-<name>}; the commit hard-links the
 *       directory's other files into it (copies where links are refused), renames the old directory aside
 *       ({@code .gdsloader-old-...}), renames the staged one to the directory's name and deletes the old one. A
 *       process killed between the two renames leaves no directory (no dataset); the next staging beside it (whose
 *       process id is gone) renames the old directory back. Per-file renames in one directory cannot give this: a
 *       kill between them leaves shards without their manifest (the interruption test saw it).</li>
 *   <li><b>In place</b> (the directory holds a subdirectory or another non-regular entry, which a swap would have to
 *       move): hidden names {@code .gdsloader-staged-<pid>-<random>-<name>} in the directory, renamed one by one, the
 *       manifest last. A SIGKILL inside that commit (a few renames, no data) can leave shards without their
 *       manifest.</li>
 * </ul>
 * Staged names are hidden: the loader, {@code verify} and the shard registry skip them. Files a killed run left are
 * removed by the next staging once that process is gone.
 *
 * <p>{@link #abort()} (for a shutdown hook: SIGTERM, Ctrl-C) waits for a commit under way to finish. Thread-safe:
 * {@link #stage}, {@link #commit} and {@link #abort} may come from different threads (the writer and a shutdown
 * hook). Owns the staged files until the commit (after it the directory does), and deletes them on {@link #abort()}
 * or {@link #close()} without a commit.
 */
public final class StagedFiles implements AutoCloseable {
    /** The start of every staged file's (or staging directory's) name; hidden, and no shard format's suffix. */
    public static final String MARK = ".gdsloader-staged-";

    /** The start of an old directory's name while a swap puts the new one in its place. */
    static final String OLD_MARK = ".gdsloader-old-";

    /** Stagings not yet committed or aborted, for {@link #abortAll()}. */
    private static final Set<StagedFiles> OPEN = ConcurrentHashMap.newKeySet();

    private final Path dir;
    private final String prefix;
    /** The hidden sibling directory the files are staged in, or null for staging in place. */
    private final Path swapDir;
    private final Map<String, Path> staged = new LinkedHashMap<>();
    private final Object lock = new Object();
    private State state = State.OPEN;

    private enum State { OPEN, COMMITTED, ABORTED }

    private StagedFiles(Path dir, boolean swap) throws IOException {
        this.dir = dir;
        this.prefix = MARK + ProcessHandle.current().pid() + "-" + Long.toHexString(ThreadLocalRandom.current().nextLong()) + "-";
        this.swapDir = swap ? Files.createDirectory(dir.resolveSibling(prefix + dir.getFileName())) : null;
    }

    /**
     * Starts staging into {@code dir}, creating it if missing, and removes staged files that killed runs left there
     * (those whose process id names no live process).
     *
     * @param dir the dataset directory
     * @return the staging; the caller commits or closes it
     * @throws IOException if the directory cannot be created or listed
     */
    public static StagedFiles in(Path dir) throws IOException {
        Path abs = dir.toAbsolutePath().normalize();
        Path parent = abs.getParent();
        if (parent != null && abs.getFileName() != null) {
            Files.createDirectories(parent);
            removeOrphanDirs(parent, abs);
        }
        boolean swap = parent != null && abs.getFileName() != null && onlyRegularFiles(abs);
        if (!swap) {
            Files.createDirectories(abs);
        }
        if (Files.isDirectory(abs)) {
            removeOrphans(abs);
        }
        StagedFiles s = new StagedFiles(abs, swap);
        OPEN.add(s);
        return s;
    }

    /**
     * Aborts every staging of this JVM that is not committed: for a shutdown hook.
     *
     * @return the staged files deleted
     * @see #abort()
     */
    public static int abortAll() {
        int n = 0;
        for (StagedFiles s : List.copyOf(OPEN)) {
            n += s.abort();
        }
        return n;
    }

    /**
     * The stagings of this JVM that are neither committed nor aborted now (for a shutdown hook's message: after
     * {@link #abortAll()}, {@link #committed()} tells which of them a commit under way completed).
     *
     * @return a snapshot
     */
    public static List<StagedFiles> open() {
        return List.copyOf(OPEN);
    }

    /** @return the directory the files are committed to (absolute) */
    public Path dir() {
        return dir;
    }

    /**
     * Returns where to write the file that {@link #commit} will put at {@code finalName}: {@code finalName} in the
     * hidden staging directory, or a hidden name in the directory ({@code .gdsloader-staged-<pid>-<random>-<finalName>})
     * when staging in place. Either way a raw shard's sidecar staged by its own final name is the staged shard's
     * {@code sidecarOf}.
     *
     * @param finalName a plain file name in the directory
     * @return the staged path; nothing is created
     * @throws IllegalArgumentException if the name holds a separator or was staged already
     * @throws IllegalStateException if the staging was committed or aborted
     */
    public Path stage(String finalName) {
        if (finalName.isEmpty() || finalName.contains("/") || finalName.startsWith(".")) {
            throw new IllegalArgumentException("not a plain, visible file name: '" + finalName + "'");
        }
        synchronized (lock) {
            requireOpen();
            Path p = swapDir != null ? swapDir.resolve(finalName) : dir.resolve(prefix + finalName);
            if (staged.putIfAbsent(finalName, p) != null) {
                throw new IllegalArgumentException(finalName + " is staged twice in " + dir);
            }
            return p;
        }
    }

    /**
     * Where a staged file is now, for reading it before the commit (e.g. a manifest's checksums).
     *
     * @param finalName a name given to {@link #stage}
     * @return its staged path, or {@code dir.resolve(finalName)} for a name not staged (an existing file kept)
     */
    public Path locate(String finalName) {
        synchronized (lock) {
            return staged.getOrDefault(finalName, dir.resolve(finalName));
        }
    }

    /**
     * Puts the staged files in place with the manifest: by the directory swap (the directory's files that are not in
     * {@code obsolete}, not staged and not the manifest come along), or in place (the manifest is deleted, every file
     * of {@code obsolete} that no staged file replaces is deleted, each staged file is renamed to its final name and
     * the manifest is renamed in last). See the class comment for what a kill inside it leaves.
     *
     * @param obsolete old files of the directory to remove (e.g. the shards an overwrite replaces)
     * @param manifestName the manifest's file name in the directory, or {@code null} for none
     * @param manifestBytes the manifest's content (ignored when {@code manifestName} is null)
     * @throws IOException if a staged file is missing or a rename or deletion fails (the staging is then aborted:
     *     its remaining staged files are deleted)
     * @throws IllegalStateException if the staging was aborted (e.g. by a shutdown hook) or committed already
     */
    public void commit(Collection<Path> obsolete, String manifestName, byte[] manifestBytes) throws IOException {
        synchronized (lock) {
            requireOpen();
            try {
                if (swapDir != null) {
                    commitSwap(obsolete, manifestName, manifestBytes);
                } else {
                    commitInPlace(obsolete, manifestName, manifestBytes);
                }
                state = State.COMMITTED;
                OPEN.remove(this);
            } catch (IOException | RuntimeException e) {
                abortLocked();
                throw e;
            }
        }
    }

    private void commitSwap(Collection<Path> obsolete, String manifestName, byte[] manifestBytes) throws IOException {
        if (manifestName != null) {
            Files.write(swapDir.resolve(manifestName), manifestBytes);
        }
        java.util.Set<Path> gone = new java.util.HashSet<>();
        for (Path p : obsolete) {
            gone.add(p.toAbsolutePath().normalize());
        }
        List<Path> kept = new ArrayList<>();
        if (Files.isDirectory(dir)) {
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
                for (Path p : ds) {
                    String name = String.valueOf(p.getFileName());
                    if (!gone.contains(p) && !staged.containsKey(name) && !name.equals(manifestName) && !name.contains(MARK)) {
                        kept.add(p);
                    }
                }
            }
            for (Path p : kept) { // the directory's other files come along: links, so the old directory stays whole
                Path to = swapDir.resolve(p.getFileName());
                try {
                    Files.createLink(to, p);
                } catch (IOException | UnsupportedOperationException noLinks) {
                    Files.copy(p, to, java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
            try {
                Files.setPosixFilePermissions(swapDir, Files.getPosixFilePermissions(dir));
            } catch (UnsupportedOperationException ignored) {
                // not a POSIX file system: the default permissions apply
            }
            Path old = dir.resolveSibling(OLD_MARK + prefix.substring(MARK.length()) + dir.getFileName());
            AtomicFiles.move(dir, old);
            AtomicFiles.move(swapDir, dir); // the commit point: from here the directory is the new one
            deleteTree(old);
        } else {
            AtomicFiles.move(swapDir, dir);
        }
    }

    private void commitInPlace(Collection<Path> obsolete, String manifestName, byte[] manifestBytes) throws IOException {
        Path manifestTmp = null;
        if (manifestName != null) {
            manifestTmp = dir.resolve(prefix + manifestName);
            Files.write(manifestTmp, manifestBytes);
            Files.deleteIfExists(dir.resolve(manifestName));
        }
        for (Path old : obsolete) {
            if (!staged.containsKey(String.valueOf(old.getFileName()))) {
                Files.deleteIfExists(old);
            }
        }
        for (Map.Entry<String, Path> e : staged.entrySet()) {
            AtomicFiles.publish(e.getValue(), dir.resolve(e.getKey()));
        }
        if (manifestTmp != null) {
            AtomicFiles.publish(manifestTmp, dir.resolve(manifestName));
        }
    }

    /**
     * Deletes the staged files unless they were committed, waiting for a commit under way to finish first; later
     * {@link #stage} and {@link #commit} calls throw. Idempotent.
     *
     * @return the staged files deleted (0 after a commit)
     */
    public int abort() {
        synchronized (lock) {
            return state == State.OPEN ? abortLocked() : 0;
        }
    }

    /** @return whether {@link #commit} completed */
    public boolean committed() {
        synchronized (lock) {
            return state == State.COMMITTED;
        }
    }

    /** Aborts unless committed: see {@link #abort()}. */
    @Override
    public void close() {
        abort();
    }

    private int abortLocked() {
        state = State.ABORTED;
        OPEN.remove(this);
        return swapDir != null ? deleteTree(swapDir) : removeMatching(dir, prefix, name -> true);
    }

    /** Whether {@code dir} is missing or holds regular files only (what a swap can carry by links). */
    private static boolean onlyRegularFiles(Path dir) throws IOException {
        if (!Files.exists(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return true;
        }
        if (!Files.isDirectory(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return false; // a symbolic link to a directory: swapping would replace the link itself
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (Path p : ds) {
                if (!Files.isRegularFile(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * Deletes the regular files of a staging or old directory and the directory, quietly.
     *
     * @return the files deleted
     */
    private static int deleteTree(Path d) {
        int n = removeMatching(d, "", name -> true);
        try {
            Files.deleteIfExists(d);
        } catch (IOException e) {
            // something else is in it (not ours): it stays, hidden
        }
        return n;
    }

    /**
     * Removes, beside {@code target}, the staging directories of processes that are gone, and puts back an old
     * directory a killed swap had renamed aside when {@code target} is missing (otherwise deletes it).
     */
    private static void removeOrphanDirs(Path parent, Path target) throws IOException {
        String name = String.valueOf(target.getFileName());
        List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(parent, p -> {
            String n = String.valueOf(p.getFileName());
            return (n.startsWith(MARK) || n.startsWith(OLD_MARK)) && n.endsWith("-" + name) && Files.isDirectory(p)
                    && deadOwner(n);
        })) {
            ds.forEach(found::add);
        }
        for (Path p : found) {
            if (p.getFileName().toString().startsWith(OLD_MARK) && !Files.exists(target)) {
                AtomicFiles.move(p, target); // the killed run's swap stopped half way: the previous dataset returns
            } else {
                deleteTree(p);
            }
        }
    }

    /** Whether a staged name's process id ({@code <mark><pid>-...}) names no live process. */
    private static boolean deadOwner(String name) {
        int at = name.indexOf(name.contains(MARK) ? MARK : OLD_MARK) + (name.contains(MARK) ? MARK : OLD_MARK).length();
        int end = name.indexOf('-', at);
        try {
            long pid = Long.parseLong(name.substring(at, end < 0 ? name.length() : end));
            return ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true);
        } catch (NumberFormatException e) {
            return false; // not one of ours
        }
    }

    private void requireOpen() {
        if (state != State.OPEN) {
            throw new IllegalStateException("the staging in " + dir + " was " + state.name().toLowerCase(java.util.Locale.ROOT));
        }
    }

    /** Removes staged files (and writers' temporary files of them) whose process is gone. */
    private static void removeOrphans(Path dir) {
        removeMatching(dir, MARK, StagedFiles::deadOwner);
    }

    /** Deletes the files in {@code dir} whose name contains {@code part} (writers' temporaries add a prefix) and that {@code which} accepts. */
    private static int removeMatching(Path dir, String part, java.util.function.Predicate<String> which) {
        int n = 0;
        List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, p -> {
            String name = String.valueOf(p.getFileName());
            return name.contains(part) && which.test(name) && Files.isRegularFile(p, java.nio.file.LinkOption.NOFOLLOW_LINKS);
        })) {
            ds.forEach(found::add);
        } catch (IOException e) {
            return 0; // the directory is gone or unreadable: nothing of ours to remove there
        }
        for (Path p : found) {
            try {
                if (Files.deleteIfExists(p)) {
                    n++;
                }
            } catch (IOException e) {
                // another process removed or holds it; what is left is hidden and removed by the next staging
            }
        }
        return n;
    }

    @Override
    public String toString() {
        return "StagedFiles[" + dir + ", " + Objects.requireNonNull(prefix) + "]";
    }
}
