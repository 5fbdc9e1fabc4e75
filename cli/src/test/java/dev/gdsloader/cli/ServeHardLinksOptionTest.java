package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * {@code serve --allow-hard-links}: documented in the command's help, off unless given (what the server then does with
 * hard links is tested on a real server in the service module's {@code SwappedFilesTest}).
 */
class ServeHardLinksOptionTest {
    @Test
    void theOptionIsDocumentedAndOffUnlessGiven() {
        CommandRun help = CommandRun.execute(new ServeCommand(), "--help");
        assertEquals(0, help.exitCode(), help.toString());
        assertTrue(help.out().contains("--allow-hard-links") && help.out().contains("hard link"), help.toString());
        ServeCommand off = new ServeCommand();
        GdsLoaderMain.configure(new CommandLine(off)).parseArgs("/data");
        assertFalse(off.allowHardLinks);
        ServeCommand on = new ServeCommand();
        GdsLoaderMain.configure(new CommandLine(on)).parseArgs("/data", "--allow-hard-links");
        assertTrue(on.allowHardLinks);
    }
}
