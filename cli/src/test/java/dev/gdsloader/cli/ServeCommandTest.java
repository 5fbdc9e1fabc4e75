package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code gdsloader serve} refuses {@code /} and system directories as its root unless {@code --allow-system-root}
 * is given (the server that flag starts is tested in the service module's {@code SafeRootTest}: this command then runs
 * until stopped).
 */
@Timeout(60)
class ServeCommandTest {
    @Test
    void servingTheFileSystemRootOrASystemDirectoryIsRefusedNamingTheFlag() {
        for (String root : new String[] {"/", "/etc", "/home"}) {
            CommandRun r = CommandRun.execute(new ServeCommand(), root);
            assertEquals(2, r.exitCode(), r.toString());
            assertTrue(r.err().contains("gdsloader serve: dataset root " + root + " ") && r.err().contains("is a system directory")
                    && r.err().contains("--allow-system-root"), r.toString());
            assertTrue(r.out().isEmpty(), "nothing served: " + r);
        }
    }

    @Test
    void aClusterNeedsItsIndexAndWellFormedMembers(@org.junit.jupiter.api.io.TempDir java.nio.file.Path root) {
        String[][] cases = {
            {"--cluster", "127.0.0.1:9001,127.0.0.1:9002", "--cluster needs --cluster-index I"},
            {"--cluster-index", "0", "--cluster-index needs --cluster HOST:PORT"},
            {"--cluster", "127.0.0.1:9001,127.0.0.1:9002", "--cluster-index", "2", "cluster index 2 is outside 0..1"},
            {"--cluster", "127.0.0.1:9001,node1", "--cluster-index", "0", "cluster member 'node1' is not host:port"},
            {"--cluster", "127.0.0.1:9001,127.0.0.1:9001", "--cluster-index", "0", "cluster member '127.0.0.1:9001' is listed twice"},
        };
        for (String[] c : cases) {
            String[] args = new String[c.length];
            args[0] = root.toString();
            System.arraycopy(c, 0, args, 1, c.length - 1);
            CommandRun r = CommandRun.execute(new ServeCommand(), args);
            assertEquals(2, r.exitCode(), r.toString());
            assertTrue(r.err().contains(c[c.length - 1]), r.toString());
            assertTrue(r.out().isEmpty(), "nothing served: " + r);
        }
    }
}
