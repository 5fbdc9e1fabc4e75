package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The doors of the gds-loader modules, checked on the compiled code of all of them: a class may use a class of
 * another gds-loader module only in a package that module's {@code module-info.java} exports (to everyone, or to
 * the user's module by name). javac checks this for the modules that are named modules; this test checks it for
 * the ones that are not (the CLI, the service, metrics), by reading each module's descriptor and {@code jdeps} of
 * every class, and names each reference through a closed door.
 */
class ModuleDoorsTest {
    @Test
    void everyReferenceAcrossModulesGoesThroughAnExportedPackage() throws Exception {
        try (ProjectClasses project = new ProjectClasses()) {
            Set<String> names = project.roots().stream().map(ProjectClasses.Root::name).collect(Collectors.toSet());
            for (String module : List.of("dev.gdsloader.memory", "dev.gdsloader.bindings", "dev.gdsloader.formats",
                    "dev.gdsloader.loader", "dev.gdsloader.bench", "dev.gdsloader.samples")) {
                assertTrue(names.contains(module), "module " + module + " not found on the class path: " + names);
            }
            assertTrue(project.roots().stream().anyMatch(r -> r.descriptor().isEmpty()
                    && r.packages().contains("dev.gdsloader.cli")), "the CLI's classes not found: " + names);
            List<String> closed = closedDoors(project);
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
                    .filter(r -> r.name().equals("dev.gdsloader.bench")).findFirst().orElseThrow();
            assertFalse(loader.exportsTo("dev.gdsloader.loader.io", cli), "the engines are internal");
            assertTrue(loader.exportsTo("dev.gdsloader.loader", cli), "the API package is exported");
            assertFalse(loader.exportsTo("dev.gdsloader.loader.plan", cli), "the planner is exported to the benchmarks only");
            assertTrue(loader.exportsTo("dev.gdsloader.loader.plan", bench));
            assertTrue(cli.exportsTo("dev.gdsloader.cli", loader), "a module without descriptor closes nothing");
        }
    }

    /** @return one line per reference from one module to a package another module does not export to it */
    private static List<String> closedDoors(ProjectClasses project) {
        Set<String> lines = new TreeSet<>();
        for (ProjectClasses.Reference r : project.references()) {
            ProjectClasses.Root from = project.rootOf(r.from());
            ProjectClasses.Root to = project.rootOf(r.to());
            if (from != to && !to.exportsTo(r.toPackage(), from)) {
                lines.add(r.from() + " -> " + r.to() + ": package " + r.toPackage() + " is not exported by module "
                        + to.name());
            }
        }
        return new ArrayList<>(lines);
    }
}
