package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The doors of the gds-loader modules, checked on the compiled code of all of them: a class may use a class of
 * another gds-loader module only in a package that module's {@code module-info.java} exports (to everyone, or to
 * the user's module by name). javac checks this for the modules that are named modules; this test checks it for
 * the ones that are not (the CLI, the service, metrics, the benchmarks: they depend on the service, which is no
 * named module yet), by reading each module's descriptor and {@code jdeps} of
 * every class, and names each reference through a closed door. An import leaves no trace in a class file when the
 * imported type goes unused, so their sources' imports are checked too, where the sources are there (a build from
 * the repository: {@code <module>/src/main/java} next to {@code <module>/target}).
 */
class ModuleDoorsTest {
    /** An import: the imported name (a type, a type's member, or a package with {@code .*}). */
    private static final Pattern IMPORT = Pattern.compile("^import\\s+(?:static\\s+)?(dev\\.gdsloader\\.[\\w.]+?)(?:\\.\\*)?\\s*;",
            Pattern.MULTILINE);

    @Test
    void everyReferenceAcrossModulesGoesThroughAnExportedPackage() throws Exception {
        try (ProjectClasses project = new ProjectClasses()) {
            Set<String> names = project.roots().stream().map(ProjectClasses.Root::name).collect(Collectors.toSet());
            for (String module : List.of("dev.gdsloader.memory", "dev.gdsloader.bindings", "dev.gdsloader.formats",
                    "dev.gdsloader.loader", "dev.gdsloader.samples", "dev.gdsloader.bench", "dev.gdsloader.service",
                    "dev.gdsloader.metrics", "dev.gdsloader.cli")) {
                assertTrue(names.contains(module), "module " + module + " not found on the class path: " + names);
            }
            List<String> closed = closedDoors(project);
            closed.addAll(closedImports(project));
            assertEquals(List.of(), closed, "references to packages their module does not export (use the module's "
                    + "exported API, or export the package in its module-info.java if it is API):\n"
                    + String.join("\n", closed));
        }
    }

    @Test
    void aReferenceToAnInternalPackageIsNamed() throws Exception {
        try (ProjectClasses project = new ProjectClasses()) {
            ProjectClasses.Root loader = project.roots().stream()
                    .filter(r -> r.name().equals("dev.gdsloader.loader")).findFirst().orElseThrow();
            ProjectClasses.Root cli = project.roots().stream()
                    .filter(r -> r.packages().contains("dev.gdsloader.cli")).findFirst().orElseThrow();
            ProjectClasses.Root bench = project.roots().stream()
                    .filter(r -> r.packages().contains("dev.gdsloader.bench.jmh")).findFirst().orElseThrow();
            assertFalse(loader.exportsTo("dev.gdsloader.loader.io", cli), "the engines are internal");
            assertTrue(loader.exportsTo("dev.gdsloader.loader", cli), "the API package is exported");
            assertFalse(loader.exportsTo("dev.gdsloader.loader.gather", cli), "the gather kernel is the benchmarks' only");
            assertTrue(loader.exportsTo("dev.gdsloader.loader.gather", bench));
            assertEquals("dev.gdsloader.bench", bench.name(), "no descriptor: known by its root package");
            assertTrue(cli.exportsTo("dev.gdsloader.cli", loader), "a module without descriptor closes nothing");
            assertEquals("dev.gdsloader.loader.io", importedPackage("dev.gdsloader.loader.io.MappedEngine"));
            assertEquals("dev.gdsloader.loader.io", importedPackage("dev.gdsloader.loader.io.MappedEngine.Provider"));
            assertEquals("dev.gdsloader.loader.io", importedPackage("dev.gdsloader.loader.io"));
            assertEquals("dev.gdsloader.cuda", importedPackage("dev.gdsloader.cuda.Cuda.ensure"));
        }
    }

    /**
     * @return one line per import, in the sources of a module that is no named module, of a package another module
     *     does not export to it
     * @throws IOException if a source file cannot be read
     */
    private static List<String> closedImports(ProjectClasses project) throws IOException {
        List<String> lines = new ArrayList<>();
        for (ProjectClasses.Root root : project.roots()) {
            Optional<Path> sources = sources(root);
            if (root.descriptor().isPresent() || sources.isEmpty()) {
                continue;
            }
            try (Stream<Path> files = Files.walk(sources.get())) {
                for (Path f : files.filter(p -> p.toString().endsWith(".java")).sorted().toList()) {
                    Matcher m = IMPORT.matcher(Files.readString(f));
                    while (m.find()) {
                        String pkg = importedPackage(m.group(1));
                        Optional<ProjectClasses.Root> owner = project.roots().stream()
                                .filter(r -> r.packages().contains(pkg)).findFirst();
                        if (owner.isPresent() && !owner.get().equals(root) && !owner.get().exportsTo(pkg, root)) {
                            lines.add(f + ": import " + m.group(1) + ": package " + pkg + " is not exported by module "
                                    + owner.get().name());
                        }
                    }
                }
            }
        }
        return lines;
    }

    /** @return the main sources of a module built in this repository: {@code <module>/src/main/java}, if there */
    private static Optional<Path> sources(ProjectClasses.Root root) {
        Path target = root.location().toAbsolutePath().getParent();
        if (target == null || target.getParent() == null || !target.getFileName().toString().equals("target")) {
            return Optional.empty();
        }
        Path src = target.getParent().resolve("src/main/java");
        return Files.isDirectory(src) ? Optional.of(src) : Optional.empty();
    }

    /**
     * @param imported an imported name without {@code .*}: {@code a.b.C}, {@code a.b.C.D}, {@code a.b.C.member} or
     *     the package {@code a.b}
     * @return its package: the names before the first one that starts with an upper-case letter
     */
    static String importedPackage(String imported) {
        List<String> parts = new ArrayList<>();
        for (String part : imported.split("\\.", -1)) {
            if (Character.isUpperCase(part.charAt(0))) {
                break;
            }
            parts.add(part);
        }
        return String.join(".", parts);
    }

    /** @return one line per reference from one module to a package another module does not export to it */
    private static List<String> closedDoors(ProjectClasses project) {
        Set<String> lines = new TreeSet<>();
        for (ProjectClasses.Reference r : project.references()) {
            ProjectClasses.Root from = project.rootOf(r.from());
            ProjectClasses.Root to = project.rootOf(r.to());
            if (!from.equals(to) && !to.exportsTo(r.toPackage(), from)) {
                lines.add(r.from() + " -> " + r.to() + ": package " + r.toPackage() + " is not exported by module "
                        + to.name());
            }
        }
        return new ArrayList<>(lines);
    }
}
