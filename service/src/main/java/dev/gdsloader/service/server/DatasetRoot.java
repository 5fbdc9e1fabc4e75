package dev.gdsloader.service.server;

import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.formats.manifest.DatasetManifest;
import dev.gdsloader.formats.manifest.ShardEntry;
import dev.gdsloader.formats.registry.ShardFileFormat;
import dev.gdsloader.formats.registry.ShardFormats;
import dev.gdsloader.loader.dataset.Column;
import dev.gdsloader.loader.dataset.Dataset;
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
 * outside the root is opened. {@link #requireInside(Dataset, String)} checks an opened dataset's files once more.
 * A file replaced between the check and the loader's open (by someone who can write under the root) is outside what
 * this guards: clients name datasets, they do not write them.
 *
 * <p>{@link #forClients} makes a message safe to send to a client: the root's absolute path becomes relative names,
 * and a format error's quoted file bytes are dropped (a number it found, such as a truncated shard's size, is kept).
 *
 * <p>Immutable and thread-safe.
 */
public final class DatasetRoot {
    /** What a format error found that a client may be told: a number (a size or count), maybe {@code bytes}, maybe a note. */
    private static final Pattern SIZE_FOUND = Pattern.compile("\\d+( bytes)?( \\([a-z0-9 -]+\\))?");
    /** Refused as roots unless {@code allowSystemRoot}, themselves only: they hold users' and services' own trees. */
    private static final Set<String> SYSTEM_DIRECTORIES = Set.of("/", "/var", "/home");
    /** Refused as roots unless {@code allowSystemRoot}, with every directory under them: the system's own files. */
    private static final List<String> SYSTEM_TREES = List.of("/etc", "/usr", "/bin", "/sbin", "/proc", "/sys", "/dev",
            "/boot", "/root", "/run", "/var/lib", "/var/log", "/var/run");

    private final Path given;
    private final Path real;

    private DatasetRoot(Path given, Path real) {
        this.given = given;
        this.real = real;
    }

    /**
     * @param root the directory to serve
     * @param allowSystemRoot accept {@code /}, {@code /var} and {@code /home} themselves, and system trees with every
     *     directory under them ({@code /etc}, {@code /usr}, {@code /bin}, {@code /sbin}, {@code /lib*}, {@code /proc},
     *     {@code /sys}, {@code /dev}, {@code /boot}, {@code /root}, {@code /run}, {@code /var/lib}, {@code /var/log},
     *     {@code /var/run}), judged by the path given and by its real path
     * @return the root
     * @throws IOException if the root does not exist or is not a directory (saying which), or is a system directory and
     *     that is not allowed (naming the directory and the flag that allows it)
     */
    public static DatasetRoot of(Path root, boolean allowSystemRoot) throws IOException {
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
        return new DatasetRoot(given, real);
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
     * Checks the files an opened dataset reads, after the loader opened it: each must lie inside the root.
     *
     * @param dataset the dataset a loader opened from {@link #resolve}'s path
     * @param name the client's name for it
     * @throws IllegalArgumentException as {@link #resolve} refuses a name
     * @throws IOException if a file's real path cannot be read
     */
    public void requireInside(Dataset dataset, String name) throws IOException {
        for (Column c : dataset.columns()) {
            for (RecordLayout l : c.shards()) {
                for (Path f : withSidecars(l.file())) {
                    requireInside(name, f, null, relative(f));
                }
            }
        }
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
