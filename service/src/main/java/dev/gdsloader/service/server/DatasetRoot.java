package dev.gdsloader.service.server;

import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.manifest.DatasetManifest;
import dev.gdsloader.formats.manifest.ShardEntry;
import dev.gdsloader.formats.registry.ShardFileFormat;
import dev.gdsloader.formats.registry.ShardFormats;
import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.posix.CheckedFiles;
import dev.gdsloader.posix.DirectoryRoot;
import dev.gdsloader.posix.RefusedFileException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The directory a server serves, and the one place that turns a client's dataset name into a path under it.
 *
 * <p>{@link #resolve} refuses a name that is absolute, has a {@code ..} segment, a backslash, a NUL or another control
 * character, and then resolves it with real paths ({@link Path#toRealPath}): the dataset directory or shard, and every
 * file {@code Dataset.open} would open there (the directory's shard files and their sidecars such as {@code .bin.json},
 * its {@code dataset.json} and each shard it lists) must have a real path inside the root's real path, else the name is
 * refused, naming the name and the entry, never where a link leads. Only links are resolved before the refusal: no file
 * outside the root is opened. {@link #requireInside(Dataset, String)} checks an opened dataset's files once more and
 * records each shard's identity ({@link CheckedFiles}: its real path beneath the root, device and inode): the session's
 * loader opens its shards through that, beneath the root's directory descriptor ({@link DirectoryRoot}) with no link
 * followed, and refuses a shard that is not the file checked. So a link or another file swapped in under the root
 * after the check is refused naming the file, never served. A regular file with more than one hard link (possibly a
 * second name of a file outside the root) is refused unless the server allows hard links ({@code --allow-hard-links}).
 *
 * <p>{@link #forClients} makes a message safe to send to a client: the root's absolute path becomes relative names,
 * and a format error's quoted file bytes are dropped (a number it found, such as a truncated shard's size, is kept).
 *
 * <p>Thread-safe. Owns the root's directory descriptor: {@link #close()} closes it (the server does, after its sessions).
 */
public final class DatasetRoot implements AutoCloseable {
    /** What a format error found that a client may be told: a number (a size or count), maybe {@code bytes}, maybe a note. */
    private static final Pattern SIZE_FOUND = Pattern.compile("\\d+( bytes)?( \\([a-z0-9 -]+\\))?");
    /** Refused as roots unless {@code allowSystemRoot}, themselves only: they hold users' and services' own trees. */
    private static final Set<String> SYSTEM_DIRECTORIES = Set.of("/", "/var", "/home");
    /** Refused as roots unless {@code allowSystemRoot}, with every directory under them: the system's own files. */
    private static final List<String> SYSTEM_TREES = List.of("/etc", "/usr", "/bin", "/sbin", "/proc", "/sys", "/dev",
            "/boot", "/root", "/run", "/var/lib", "/var/log", "/var/run");

    private final Path given;
    private final Path real;
    private final DirectoryRoot dir;

    private DatasetRoot(Path given, Path real, DirectoryRoot dir) {
        this.given = given;
        this.real = real;
        this.dir = dir;
    }

    /**
     * A root that refuses hard-linked files, as {@link #of(Path, boolean, boolean)}.
     *
     * @param root the directory to serve
     * @param allowSystemRoot as {@link #of(Path, boolean, boolean)}
     * @return the root, owned by the caller
     * @throws IOException as {@link #of(Path, boolean, boolean)}
     */
    public static DatasetRoot of(Path root, boolean allowSystemRoot) throws IOException {
        return of(root, allowSystemRoot, false);
    }

    /**
     * @param root the directory to serve
     * @param allowSystemRoot accept {@code /}, {@code /var} and {@code /home} themselves, and system trees with every
     *     directory under them ({@code /etc}, {@code /usr}, {@code /bin}, {@code /sbin}, {@code /lib*}, {@code /proc},
     *     {@code /sys}, {@code /dev}, {@code /boot}, {@code /root}, {@code /run}, {@code /var/lib}, {@code /var/log},
     *     {@code /var/run}), judged by the path given and by its real path
     * @param allowHardLinks serve regular files with more than one hard link (refused by default, naming the file)
     * @return the root, owned by the caller (it holds the directory's descriptor)
     * @throws IOException if the root does not exist or is not a directory (saying which), or is a system directory and
     *     that is not allowed (naming the directory and the flag that allows it)
     */
    public static DatasetRoot of(Path root, boolean allowSystemRoot, boolean allowHardLinks) throws IOException {
        Path given = root.toAbsolutePath().normalize();
        if (!Files.isDirectory(given)) {
            throw new IOException("dataset root " + given + (Files.exists(given, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                    ? " is not a directory" : " does not exist"));
        }
        Path real = given.toRealPath();
        if (!allowSystemRoot && (isSystem(given) || isSystem(real))) {
            throw new IOException("dataset root " + given + (real.equals(given) ? "" : " (" + real + ")")
                    + " is a system directory: every client could read it; serve a directory of datasets, or pass"
                    + " --allow-system-root (PrefetchServer.Builder.allowSystemRoot()) if that is really meant");
        }
        return new DatasetRoot(given, real, DirectoryRoot.open(real, allowHardLinks));
    }

    /** @return whether regular files with more than one hard link are served */
    public boolean allowsHardLinks() {
        return dir.allowsHardLinks();
    }

    /** Closes the root's directory descriptor; a session's loader can open no file beneath it afterwards. */
    @Override
    public void close() {
        dir.close();
    }

    private static boolean isSystem(Path p) {
        String s = p.toString();
        if (SYSTEM_DIRECTORIES.contains(s) || (p.getNameCount() >= 1 && p.getName(0).toString().startsWith("lib"))) {
            return true;
        }
        for (String tree : SYSTEM_TREES) {
            if (p.startsWith(tree)) {
                return true;
            }
        }
        return false;
    }

    /** @return the root as given, absolute and normalized (for the server's own log and its operator) */
    public Path path() {
        return given;
    }

    /** @return the root's real path, which every served file's real path lies in */
    public Path realPath() {
        return real;
    }

    /**
     * Resolves a client's dataset name.
     *
     * @param name a dataset directory or shard, relative to the root, with {@code '/'} separators; {@code "."} is the
     *     root itself
     * @return the dataset's path under the root as given (links inside the root left as they are, so that messages
     *     name what the client named)
     * @throws IllegalArgumentException naming the name (as the client sent it, control characters shown as
     *     {@code ?}): missing, not a safe relative name, no such dataset, or leading outside the root through a link
     *     (naming the entry, relative to the root, that does)
     * @throws IOException if a manifest under the root cannot be read
     */
    public Path resolve(String name) throws IOException {
        if (name == null || name.isBlank()) {
            throw new IllegalArgumentException("option 'dataset' is missing: name a dataset directory or shard under the server's root");
        }
        String problem = nameProblem(name);
        if (problem != null) {
            throw new IllegalArgumentException("dataset '" + shown(name) + "' refused: " + problem);
        }
        Path p = given.resolve(name).normalize();
        Path pReal;
        try {
            pReal = p.toRealPath();
        } catch (IOException e) {
            throw new IllegalArgumentException("unknown dataset '" + shown(name) + "': no such directory or shard under the server's root");
        }
        requireInside(name, p, pReal, name);
        if (Files.isDirectory(pReal)) {
            for (Path f : opened(name, p)) {
                requireInside(name, f, null, relative(f));
            }
        } else {
            for (Path f : withSidecars(p)) {
                requireInside(name, f, null, relative(f));
            }
        }
        return p;
    }

    /**
     * Checks the files an opened dataset reads, after {@code Dataset.open} read them: each must lie inside the root,
     * and each shard is described beneath the root (no link followed) and its identity recorded, for the session's
     * loader to open it as that file ({@link dev.gdsloader.loader.GdsLoader.Builder#files}).
     *
     * @param dataset the dataset opened from {@link #resolve}'s path
     * @param name the client's name for it
     * @return the dataset's shards, checked: the loader's opener
     * @throws IllegalArgumentException as {@link #resolve} refuses a name; also naming the entry if a shard is not a
     *     regular file, or has more than one hard link and they are not allowed
     * @throws IOException if a file's real path cannot be read
     */
    public CheckedFiles requireInside(Dataset dataset, String name) throws IOException {
        CheckedFiles checked = new CheckedFiles(dir);
        for (Column c : dataset.columns()) {
            for (RecordLayout l : c.shards()) {
                for (Path f : withSidecars(l.file())) {
                    requireInside(name, f, null, relative(f));
                }
                try {
                    checked.check(l.file());
                } catch (RefusedFileException e) {
                    throw new IllegalArgumentException("dataset '" + shown(name) + "' refused: its entry '"
                            + shown(relative(l.file())) + "' " + switch (e.reason()) {
                                case HARD_LINK -> "is a regular file with more than one hard link (another name may reach "
                                        + "it from outside the root): served only by a server started with --allow-hard-links";
                                case NOT_REGULAR -> "is not a regular file";
                                default -> "leads outside the server's root (" + e.reason().name().toLowerCase(java.util.Locale.ROOT)
                                        + "): nothing outside the root is served";
                            }, e);
                }
            }
        }
        return checked;
    }

    /** Refuses {@code name} if {@code f} exists and its real path leaves the root; a missing file is left to the opener. */
    private void requireInside(String name, Path f, Path fReal, String entry) throws IOException {
        Path r = fReal;
        if (r == null) {
            if (!Files.exists(f)) {
                return; // the dataset opener names a missing shard or a dangling link
            }
            try {
                r = f.toRealPath();
            } catch (NoSuchFileException e) {
                return;
            }
        }
        if (!r.startsWith(real)) {
            throw new IllegalArgumentException("dataset '" + shown(name) + "' refused: "
                    + (entry.equals(name) ? "it" : "its entry '" + shown(entry) + "'")
                    + " leads outside the server's root (a symbolic link): nothing outside the root is served");
        }
    }

    /** The files {@code Dataset.open} opens in a directory: its manifest and the shards it lists, or its shard files. */
    private List<Path> opened(String name, Path dir) throws IOException {
        List<Path> files = new ArrayList<>();
        Path manifest = dir.resolve(DatasetManifest.FILE_NAME);
        if (Files.exists(manifest) || Files.isSymbolicLink(manifest)) {
            files.add(manifest);
            requireInside(name, manifest, null, relative(manifest)); // before reading it
            if (Files.exists(manifest)) {
                try {
                    for (ShardEntry e : DatasetManifest.read(manifest).shards()) {
                        files.addAll(withSidecars(e.resolve(dir)));
                    }
                } catch (IOException | IllegalArgumentException e) {
                    // a malformed manifest: the dataset opener refuses it with its reason
                }
            }
        }
        try (Stream<Path> s = Files.list(dir)) {
            s.filter(f -> ShardFormats.suffixOf(f).isPresent()).forEach(f -> files.addAll(withSidecars(f)));
        }
        return files;
    }

    /** @return the shard and the files its format keeps beside it ({@code x.bin}: {@code x.bin.json}) */
    private static List<Path> withSidecars(Path shard) {
        List<Path> files = new ArrayList<>(List.of(shard));
        ShardFileFormat format = ShardFormats.of(shard).orElse(null);
        String fn = shard.getFileName().toString();
        if (format != null) {
            for (String shardSuffix : format.suffixes()) {
                if (fn.endsWith(shardSuffix)) {
                    String stem = fn.substring(0, fn.length() - shardSuffix.length());
                    for (String side : format.sidecarSuffixes()) {
                        files.add(shard.resolveSibling(stem + side));
                    }
                }
            }
        }
        return files;
    }

    /** @return {@code f} relative to the root, as a client names it */
    private String relative(Path f) {
        Path n = f.toAbsolutePath().normalize();
        return n.startsWith(given) ? (n.equals(given) ? "." : given.relativize(n).toString()) : f.getFileName().toString();
    }

    /** @return why a dataset name is not a safe relative name, or null */
    static String nameProblem(String name) {
        for (int i = 0; i < name.length(); i++) {
            if (name.charAt(i) < 0x20 || name.charAt(i) == 0x7f) {
                return "NUL and control characters are not allowed";
            }
        }
        if (name.indexOf('\\') >= 0) {
            return "backslashes are not allowed (use '/')";
        }
        if (name.startsWith("/") || name.startsWith("~")) {
            return "absolute names are not allowed: name a dataset relative to the server's root";
        }
        for (String segment : name.split("/", -1)) {
            if (segment.equals("..")) {
                return "'..' segments are not allowed: datasets lie under the server's root";
            }
        }
        try {
            if (Path.of(name).isAbsolute()) {
                return "absolute names are not allowed: name a dataset relative to the server's root";
            }
        } catch (InvalidPathException e) {
            return "not a valid path (" + e.getReason() + ")";
        }
        return null;
    }

    /** @return {@code s} with control characters as {@code ?}, for echoing a client's name */
    private static String shown(String s) {
        StringBuilder b = new StringBuilder(s.length());
        s.codePoints().forEach(c -> b.appendCodePoint(c < 0x20 || c == 0x7f ? '?' : c));
        return b.toString();
    }

    /**
     * Makes a message safe to send to a client: its first line only, the root's absolute path (as given and real)
     * replaced by names relative to it, and a format error's quoted file content ({@code , found ...}) dropped unless
     * it is a number (a size or count found, e.g. a truncated shard's file size), optionally with {@code bytes} and a
     * parenthesized note of words.
     *
     * @param message a message that may name files under the root
     * @return the message for the client
     */
    public String forClients(String message) {
        if (message == null) {
            return "(no message)";
        }
        String m = message.lines().findFirst().orElse("");
        for (Path p : List.of(real, given)) {
            String prefix = p.toString().equals("/") ? null : p.toString();
            if (prefix != null) {
                m = m.replaceAll(Pattern.quote(prefix + "/"), "")
                        .replaceAll(Pattern.quote(prefix) + "(?=$|[\\s:,;'\")])", ".");
            }
        }
        int found = m.indexOf(", found ");
        if (found >= 0 && !SIZE_FOUND.matcher(m.substring(found + ", found ".length())).matches()) {
            m = m.substring(0, found) + " (the file holds something else)";
        }
        return m;
    }
}
