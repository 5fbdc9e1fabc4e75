package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.spi.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * The loader's packages read like the pipeline and depend one way: {@code jdeps -verbose:package} over the loader's
 * classes must show no cycle between {@code dev.gdsloader.loader} packages.
 */
class PackageCycleTest {
    private static final Pattern EDGE = Pattern.compile("^\\s+(dev\\.gdsloader\\.loader[\\w.]*)\\s+->\\s+(dev\\.gdsloader\\.loader[\\w.]*)\\s");

    @Test
    void loaderPackagesHaveNoCycle() throws Exception {
        Path classes = Path.of(GdsLoader.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow(() -> new AssertionError("this JDK has no jdeps"));
        StringWriter out = new StringWriter();
        int rc = jdeps.run(new PrintWriter(out), new PrintWriter(out), "--multi-release",
                String.valueOf(Runtime.version().feature()), "-verbose:package", "-filter:none", classes.toString());
        assertEquals(0, rc, out.toString());
        Map<String, Set<String>> edges = edges(out.toString());
        assertTrue(edges.getOrDefault("dev.gdsloader.loader", Set.of()).contains("dev.gdsloader.loader.io"),
                "jdeps output not understood (no loader -> loader.io edge): " + out);
        List<String> cycle = cycle(edges);
        assertEquals(List.of(), cycle, "package cycle " + String.join(" -> ", cycle));
    }

    @Test
    void aCycleIsFound() {
        Map<String, Set<String>> edges = edges("""
                   dev.gdsloader.loader    -> dev.gdsloader.loader.io    classes
                   dev.gdsloader.loader.io -> dev.gdsloader.loader.plan  classes
                   dev.gdsloader.loader.plan -> dev.gdsloader.loader     classes
                """);
        List<String> c = cycle(edges);
        assertNotNull(c);
        assertEquals(4, c.size(), c.toString());
        assertEquals(c.get(0), c.get(3));
    }

    /** @return package -> packages it depends on (itself left out), from jdeps' {@code -verbose:package} lines */
    static Map<String, Set<String>> edges(String jdepsOutput) {
        Map<String, Set<String>> edges = new TreeMap<>();
        for (String line : jdepsOutput.lines().toList()) {
            Matcher m = EDGE.matcher(line);
            if (m.find() && !m.group(1).equals(m.group(2))) {
                edges.computeIfAbsent(m.group(1), k -> new TreeSet<>()).add(m.group(2));
            }
        }
        return edges;
    }

    /** @return one cycle as its packages, first repeated at the end; empty if there is none */
    static List<String> cycle(Map<String, Set<String>> edges) {
        Map<String, Integer> state = new TreeMap<>(); // 1 on the path, 2 done
        for (String p : edges.keySet()) {
            List<String> path = new ArrayList<>();
            List<String> c = visit(p, edges, state, path);
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
