package dev.gdsloader.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.service.server.PrefetchServer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
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
 * The service is three packages that depend one way: {@code server} and {@code client} on {@code protocol}, never on
 * each other, and {@code protocol} on neither. Checked on the compiled classes with {@code jdeps -verbose:package}
 * (as the loader's {@code PackageCycleTest} runs it).
 */
class PackageDependencyTest {
    private static final String SERVICE = "dev.gdsloader.service";
    private static final Pattern EDGE = Pattern.compile("^\\s+(dev\\.gdsloader\\.service[\\w.]*)\\s+->\\s+(dev\\.gdsloader\\.service[\\w.]*)\\s");
    /** Edges that must not exist: the two sides never see each other, the shared protocol sees neither. */
    private static final List<List<String>> FORBIDDEN = List.of(
            List.of(SERVICE + ".client", SERVICE + ".server"),
            List.of(SERVICE + ".server", SERVICE + ".client"),
            List.of(SERVICE + ".protocol", SERVICE + ".server"),
            List.of(SERVICE + ".protocol", SERVICE + ".client"));

    @Test
    void clientAndServerDependOnlyOnTheProtocol() throws Exception {
        Path classes = Path.of(PrefetchServer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        ToolProvider jdeps = ToolProvider.findFirst("jdeps").orElseThrow(() -> new AssertionError("this JDK has no jdeps"));
        StringWriter out = new StringWriter();
        int rc = jdeps.run(new PrintWriter(out), new PrintWriter(out), "--multi-release",
                String.valueOf(Runtime.version().feature()), "-verbose:package", "-filter:none", classes.toString());
        assertEquals(0, rc, out.toString());
        Map<String, Set<String>> edges = edges(out.toString());
        for (String side : List.of(SERVICE + ".client", SERVICE + ".server")) {
            assertTrue(edges.getOrDefault(side, Set.of()).contains(SERVICE + ".protocol"),
                    "jdeps output not understood (no " + side + " -> protocol edge): " + out);
        }
        assertEquals(List.of(), forbidden(edges), "forbidden package edges; jdeps says " + edges);
    }

    @Test
    void aForbiddenEdgeIsFound() {
        Map<String, Set<String>> edges = edges("""
                   dev.gdsloader.service.client   -> dev.gdsloader.service.protocol   classes
                   dev.gdsloader.service.client   -> dev.gdsloader.service.server     classes
                   dev.gdsloader.service.server   -> dev.gdsloader.service.protocol   classes
                """);
        assertEquals(List.of("dev.gdsloader.service.client -> dev.gdsloader.service.server"), forbidden(edges));
    }

    /** @return package -> packages of the service it depends on (itself left out), from jdeps' {@code -verbose:package} lines */
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

    /** @return the {@link #FORBIDDEN} edges present, as {@code from -> to} */
    static List<String> forbidden(Map<String, Set<String>> edges) {
        return FORBIDDEN.stream().filter(e -> edges.getOrDefault(e.get(0), Set.of()).contains(e.get(1)))
                .map(e -> e.get(0) + " -> " + e.get(1)).toList();
    }
}
