package dev.gdsloader.cli;

import dev.gdsloader.formats.registry.ShardFormats;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader inspect}: the structure of shard files, from their headers alone; what is printed for each file is its
 * format's inspector in the registry ({@link ShardFormats}).
 */
@Command(name = "inspect", mixinStandardHelpOptions = true,
        description = "Print the structure of shard files (records, dtype, record shape, byte extents, alignment), read "
                + "from their headers; exit 2 with the error (file, byte offset, what was expected) on a malformed file.")
final class InspectCommand implements Callable<Integer> {
    @Parameters(arity = "1..*", paramLabel = "FILE",
            description = "shard files: .npy, .npz, .bin (with its .bin.json sidecar), .safetensors, .arrow or .arrows (Arrow IPC)")
    List<Path> files;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        int status = 0;
        for (Path f : files) { // a bad file is reported and the next one inspected; exit 2 at the end
            System.out.println(f);
            try {
                if (!Files.exists(f, LinkOption.NOFOLLOW_LINKS)) { // missing, not "unknown shard format" for want of a suffix
                    throw new NoSuchFileException(f.toString());
                }
                ShardFormats.require(f).inspect(f, System.out);
            } catch (java.io.IOException | RuntimeException e) {
                System.out.flush();
                spec.commandLine().getErr().println(GdsLoaderMain.prefix(spec.commandLine()) + ": " + GdsLoaderMain.message(e));
                spec.commandLine().getErr().flush();
                status = 2;
            }
        }
        return status;
    }
}
