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
}
