package dev.gdsloader.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.lang.module.ModuleDescriptor;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;

/**
 * Test support: the main code of every gds-loader module on this test's class path (each module's {@code classes}
 * directory or jar; test classes and test jars left out), with its module descriptor where it has one, and the
 * class-to-class references among them as {@code jdeps -verbose:class} reports them.
 *
 * <p>jdeps runs over copies of the classes without their {@code module-info.class}, so that it reads them as plain
 * class-path code and needs no module path; the descriptors are read here ({@link ModuleDescriptor#read}). Not
 * thread-safe; each instance works in its own temporary directory, deleted by {@link #close()}.
 */
final class ProjectClasses implements AutoCloseable {
    /** A jdeps {@code -verbose:class} line: {@code <from class> -> <to class> <where>}. */
    private static final Pattern REFERENCE =
            Pattern.compile("^\\s+(dev\\.gdsloader\\.[\\w.$]+)\\s+->\\s+(dev\\.gdsloader\\.[\\w.$]+)\\s");

    /**
     * One module's main code.
     *
     * @param location its classes directory or jar, as on the class path
     * @param descriptor its module descriptor, if it has a {@code module-info.class}
     * @param packages the packages its classes are in
     */
    record Root(Path location, Optional<ModuleDescriptor> descriptor, List<String> packages) {
        /**
         * @return the module's name; for code that is no named module (yet), the package all its packages are in, the
         *     name it will have as one (gds-loader names each module after it), else its location
         */
        String name() {
            if (descriptor.isPresent()) {
                return descriptor.get().name();
            }
            String[] common = packages.get(0).split("\\.");
            int n = common.length;
            for (String p : packages) {
                String[] parts = p.split("\\.", -1);
                int i = 0;
                while (i < Math.min(n, parts.length) && parts[i].equals(common[i])) {
                    i++;
                }
                n = i;
            }
            return n > 2 ? String.join(".", java.util.Arrays.copyOf(common, n)) : location.toString();
        }

        /**
         * @param pkg one of this root's packages
         * @param reader the root whose code refers to it
         * @return true if {@code reader} may use it: this root is no named module (nothing closed), or its
         *     descriptor exports the package to everyone or to {@code reader}'s module by name ({@link #name()})
         */
        boolean exportsTo(String pkg, Root reader) {
            if (descriptor.isEmpty()) {
                return true;
            }
            return descriptor.get().exports().stream().anyMatch(e -> e.source().equals(pkg)
                    && (!e.isQualified() || e.targets().contains(reader.name())));
        }
    }

    /**
     * A reference from one class to another, both in gds-loader main code.
     *
     * @param from the referring class
     * @param to the class referred to
     */
    record Reference(String from, String to) {
        /** @return the referring class's package */
        String fromPackage() {
            return packageOf(from);
        }

        /** @return the package of the class referred to */
        String toPackage() {
            return packageOf(to);
        }
    }

    private final Path work;
    private final List<Root> roots = new ArrayList<>();
    private final Map<String, Root> rootOfClass = new TreeMap<>();

    /**
     * Finds the gds-loader main code on {@code java.class.path} and copies it for jdeps.
     *
     * @throws IOException if a directory or jar cannot be read or the copies cannot be written
     */
    ProjectClasses() throws IOException {
        work = Files.createTempDirectory("gdsloader-classes-");
        for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator, -1)) {
            Path p = Path.of(entry);
            boolean testCode = p.getFileName() != null && (p.getFileName().toString().equals("test-classes")
                    || p.getFileName().toString().endsWith("-tests.jar"));
            if (testCode || !Files.exists(p)) {
                continue;
            }
            if (Files.isDirectory(p)) {
                add(p, p);
            } else if (p.getFileName().toString().startsWith("gds-loader-") && p.toString().endsWith(".jar")) {
                try (FileSystem jar = FileSystems.newFileSystem(p)) {
                    add(p, jar.getPath("/"));
                }
            }
        }
    }

    private void add(Path location, Path top) throws IOException {
        if (!Files.isDirectory(top.resolve("dev/gdsloader"))) {
            return;
        }
        Path copy = work.resolve("root-" + roots.size());
        Optional<ModuleDescriptor> descriptor = Optional.empty();
        Path info = top.resolve("module-info.class");
        if (Files.exists(info)) {
            try (InputStream in = Files.newInputStream(info)) {
                descriptor = Optional.of(ModuleDescriptor.read(in));
            }
        }
        java.util.Set<String> packages = new java.util.TreeSet<>();
        Root root;
        List<String> classes = new ArrayList<>();
        try (Stream<Path> files = Files.walk(top.resolve("dev/gdsloader"))) {
            for (Path f : files.filter(f -> f.toString().endsWith(".class")).toList()) {
                String rel = top.relativize(f).toString();
                Path to = copy.resolve(rel);
                Files.createDirectories(to.getParent());
                Files.copy(f, to);
                String name = rel.substring(0, rel.length() - ".class".length()).replace('/', '.');
                classes.add(name);
                packages.add(packageOf(name));
            }
        }
        root = new Root(location, descriptor, List.copyOf(packages));
        roots.add(root);
        for (String c : classes) {
            rootOfClass.put(c, root);
        }
    }

    /** @return the modules found, in class-path order */
    List<Root> roots() {
        return List.copyOf(roots);
    }

    /**
     * @param className a class of gds-loader main code
     * @return the root holding it
     * @throws IllegalArgumentException if none does
     */
    Root rootOf(String className) {
        Root r = rootOfClass.get(className);
        if (r == null) {
            throw new IllegalArgumentException("no gds-loader module on the class path holds " + className
                    + " (a class compiled against an older build refers to it? build clean)");
        }
        return r;
    }

    /**
     * Runs {@code jdeps -verbose:class -filter:none} over every root.
     *
     * @return every reference between two classes of gds-loader main code (a class's references to itself left out)
     * @throws AssertionError if this JDK has no jdeps or jdeps fails (with its output)
     */
    List<Reference> references() {
        ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow(() -> new AssertionError("this JDK has no jdeps"));
        List<String> args = new ArrayList<>(List.of("--multi-release", String.valueOf(Runtime.version().feature()),
                "-verbose:class", "-filter:none"));
        for (int i = 0; i < roots.size(); i++) {
            args.add(work.resolve("root-" + i).toString());
        }
        StringWriter out = new StringWriter();
        int rc = jdeps.run(new PrintWriter(out), new PrintWriter(out), args.toArray(String[]::new));
        if (rc != 0) {
            throw new AssertionError("jdeps " + String.join(" ", args) + " failed (" + rc + "):\n" + out);
        }
        List<Reference> refs = parse(out.toString());
        if (refs.isEmpty()) {
            throw new AssertionError("jdeps output not understood (no reference between gds-loader classes):\n" + out);
        }
        return refs;
    }

    /**
     * @param jdepsOutput the output of {@code jdeps -verbose:class}
     * @return the references between gds-loader classes in it, in order, a class's references to itself left out
     */
    static List<Reference> parse(String jdepsOutput) {
        List<Reference> refs = new ArrayList<>();
        for (String line : jdepsOutput.lines().toList()) {
            Matcher m = REFERENCE.matcher(line);
            if (m.find() && !m.group(1).equals(m.group(2))) {
                refs.add(new Reference(m.group(1), m.group(2)));
            }
        }
        return refs;
    }

    /**
     * @param className a fully qualified class name (nested classes with {@code $})
     * @return its package
     */
    static String packageOf(String className) {
        int dot = className.lastIndexOf('.');
        return dot < 0 ? "" : className.substring(0, dot);
    }

    /** Deletes the copies. */
    @Override
    public void close() {
        try (Stream<Path> files = Files.walk(work)) {
            for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(f);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + work, e);
        }
    }
}
