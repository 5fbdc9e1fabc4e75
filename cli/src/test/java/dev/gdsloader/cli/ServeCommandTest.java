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
    void aNonLoopbackBindWithoutATokenRefusesToStartInOneLine(@org.junit.jupiter.api.io.TempDir java.nio.file.Path root) {
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getenv("GDSLOADER_TOKEN") == null, "GDSLOADER_TOKEN is set here");
        CommandRun r = CommandRun.execute(new ServeCommand(), root.toString(), "--bind", "0.0.0.0");
        assertEquals(2, r.exitCode(), r.toString());
        assertEquals("gdsloader serve: cannot listen on 0.0.0.0:0: a non-loopback address needs a bearer token (serve --token-file "
                + "FILE or the environment variable GDSLOADER_TOKEN; Builder.token): without one anyone who can reach it reads every "
                + "dataset", r.err().strip(), r.toString());
        assertTrue(r.out().isEmpty(), "nothing served: " + r);
    }

    @Test
    void aBadTokenFileIsOneLineWithoutTheToken(@org.junit.jupiter.api.io.TempDir java.nio.file.Path root) throws Exception {
        java.nio.file.Path f = root.resolve("token");
        java.nio.file.Files.writeString(f, "tooshort\n");
        CommandRun r = CommandRun.execute(new ServeCommand(), root.toString(), "--token-file", f.toString());
        assertEquals(2, r.exitCode(), r.toString());
        assertTrue(r.err().startsWith("gdsloader serve: token file " + f + ": a bearer token must have 16") && !r.err().contains("tooshort"),
                r.toString());
        CommandRun half = CommandRun.execute(new ServeCommand(), root.toString(), "--tls-cert", f.toString());
        assertEquals(2, half.exitCode(), half.toString());
        assertTrue(half.err().contains("--tls-cert and --tls-key go together"), half.toString());
    }

    @Test
    void limitFlagsReachTheServerLimitsAndBadOnesAreOneLine(@org.junit.jupiter.api.io.TempDir java.nio.file.Path root) {
        ServeCommand c = new ServeCommand();
        new picocli.CommandLine(c).parseArgs(root.toString(), "--max-connections", "10", "--max-sessions", "5",
                "--max-sessions-per-client", "2", "--max-calls-per-connection", "3", "--idle-timeout", "7", "--max-message", "64KiB",
                "--memory-budget", "2GiB");
        dev.gdsloader.service.ServerLimits l = c.limits();
        assertEquals("connections 10, sessions 5, sessions per client 2, calls per connection 3, idle timeout 7000 ms, largest "
                + "message 65536 B, memory budget 2147483648 B", l.toString());
        assertEquals(dev.gdsloader.service.ServerLimits.defaults().toString(), new ServeCommand().limits().toString());
        CommandRun r = CommandRun.execute(new ServeCommand(), root.toString(), "--max-sessions", "0");
        assertEquals(2, r.exitCode(), r.toString());
        assertEquals("gdsloader serve: limit sessions must be > 0, got 0", r.err().strip(), r.toString());
    }
}
