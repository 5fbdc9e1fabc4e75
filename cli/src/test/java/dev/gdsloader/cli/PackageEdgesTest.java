package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Which gds-loader package may depend on which, as an allow-list that may only shrink: {@code jdeps} over the main
 * code of every gds-loader module gives the package-to-package edges among {@code dev.gdsloader.*}; they must be
 * exactly the lines of {@value #ALLOWED} (in this module's test resources). A new edge fails, named, until it is added
 * to the list on purpose (and reviewed as such); an edge the code no longer has fails until its line is deleted, so
 * the list follows the code down and never keeps a dead door open. The edges must form no cycle.
 */
class PackageEdgesTest {
    /** The allow-list, one {@code from -> to} edge a line, {@code #} starts a comment. */
    static final String ALLOWED = "package-edges.txt";
    private static final String SOURCE = "cli/src/test/resources/dev/gdsloader/cli/" + ALLOWED;

    @Test
    void thePackageEdgesAreExactlyTheAllowedOnesAndFormNoCycle() throws Exception {
        Map<String, Set<String>> edges;
        try (ProjectClasses project = new ProjectClasses()) {
            edges = edges(project.references());
        }
        assertTrue(edges.getOrDefault("dev.gdsloader.loader", Set.of()).contains("dev.gdsloader.loader.io"),
                "jdeps output not understood (no loader -> loader.io edge): " + edges);
        List<String> problems = compare(lines(edges), allowed());
        assertEquals(List.of(), problems, String.join("\n", problems));
        List<String> cycle = cycle(edges);
        assertEquals(List.of(), cycle, "package cycle " + String.join(" -> ", cycle));
    }

    @Test
    void aNewEdgeAndAStaleLineAreBothNamed() {
        List<String> problems = compare(Set.of("dev.gdsloader.a -> dev.gdsloader.b", "dev.gdsloader.a -> dev.gdsloader.c"),
                Set.of("dev.gdsloader.a -> dev.gdsloader.b", "dev.gdsloader.b -> dev.gdsloader.c"));
        assertEquals(2, problems.size(), problems.toString());
        assertTrue(problems.get(0).startsWith("new package edge dev.gdsloader.a -> dev.gdsloader.c"), problems.get(0));
        assertTrue(problems.get(1).startsWith("allowed edge dev.gdsloader.b -> dev.gdsloader.c no longer exists: delete its line"),
                problems.get(1));
    }

    @Test
    void aCycleIsFound() {
        Map<String, Set<String>> edges = edges(List.of(
                new ProjectClasses.Reference("dev.gdsloader.loader.GdsLoader", "dev.gdsloader.loader.io.Engines"),
                new ProjectClasses.Reference("dev.gdsloader.loader.io.Engines", "dev.gdsloader.loader.plan.SlotPlan"),
                new ProjectClasses.Reference("dev.gdsloader.loader.plan.SlotPlan", "dev.gdsloader.loader.Batch")));
        List<String> c = cycle(edges);
        assertNotNull(c);
        assertEquals(4, c.size(), c.toString());
        assertEquals(c.get(0), c.get(3));
    }

    @Test
    void jdepsLinesBecomeReferencesBetweenProjectClasses() {
        List<ProjectClasses.Reference> refs = ProjectClasses.parse("""
                root-0 -> java.base
                   dev.gdsloader.cli.DoctorCommand                    -> dev.gdsloader.loader.GdsLoader                     root-3
                   dev.gdsloader.cli.DoctorCommand                    -> java.lang.String                                   java.base
                   dev.gdsloader.cli.DoctorCommand$1                  -> dev.gdsloader.cli.DoctorCommand$1                  root-0
                """);
        assertEquals(List.of(new ProjectClasses.Reference("dev.gdsloader.cli.DoctorCommand", "dev.gdsloader.loader.GdsLoader")),
                refs);
        assertEquals("dev.gdsloader.loader", refs.get(0).toPackage());
    }

    /** @return package -> the other packages it depends on */
    static Map<String, Set<String>> edges(List<ProjectClasses.Reference> refs) {
        Map<String, Set<String>> edges = new TreeMap<>();
        for (ProjectClasses.Reference r : refs) {
            if (!r.fromPackage().equals(r.toPackage())) {
                edges.computeIfAbsent(r.fromPackage(), k -> new TreeSet<>()).add(r.toPackage());
            }
        }
        return edges;
    }

    private static Set<String> lines(Map<String, Set<String>> edges) {
        Set<String> lines = new TreeSet<>();
        edges.forEach((from, tos) -> tos.forEach(to -> lines.add(from + " -> " + to)));
        return lines;
    }

    /** @return the allow-list's edges */
    private static Set<String> allowed() throws IOException {
        try (InputStream in = PackageEdgesTest.class.getResourceAsStream(ALLOWED)) {
            assertNotNull(in, SOURCE + " is missing");
            Set<String> lines = new TreeSet<>();
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).lines().toList()) {
                String edge = line.replaceAll("#.*", "").strip().replaceAll("\\s+", " ");
                if (!edge.isEmpty()) {
                    lines.add(edge);
                }
            }
            return lines;
        }
    }

    /** @return one line per new edge, then one per allowed edge that no longer exists */
    static List<String> compare(Set<String> actual, Set<String> allowed) {
        List<String> problems = new ArrayList<>();
        for (String e : new TreeSet<>(actual)) {
            if (!allowed.contains(e)) {
                problems.add("new package edge " + e + ": not in " + SOURCE + " (use an existing door, or add the "
                        + "line if this dependency is meant)");
            }
        }
        for (String e : new TreeSet<>(allowed)) {
            if (!actual.contains(e)) {
                problems.add("allowed edge " + e + " no longer exists: delete its line from " + SOURCE
                        + " (the list only shrinks)");
            }
        }
        return problems;
    }

    /** @return one cycle as its packages, first repeated at the end; empty if there is none */
    static List<String> cycle(Map<String, Set<String>> edges) {
        Map<String, Integer> state = new TreeMap<>(); // 1 on the path, 2 done
        for (String p : edges.keySet()) {
            List<String> c = visit(p, edges, state, new ArrayList<>());
            if (!c.isEmpty()) {
                return c;
            }
        }
        return List.of();
    }

    private static List<String> visit(String p, Map<String, Set<String>> edges, Map<String, Integer> state, List<String> path) {
        Integer s = state.get(p);
        if (s != null && s == 2) {
            return List.of();
        }
        if (s != null && s == 1) {
            List<String> c = new ArrayList<>(path.subList(path.indexOf(p), path.size()));
            c.add(p);
            return c;
        }
        state.put(p, 1);
        path.add(p);
        for (String q : edges.getOrDefault(p, Set.of())) {
            List<String> c = visit(q, edges, state, path);
            if (!c.isEmpty()) {
                return c;
            }
        }
        path.remove(path.size() - 1);
        state.put(p, 2);
        return List.of();
    }
}
