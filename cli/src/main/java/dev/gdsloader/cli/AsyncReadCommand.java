package dev.gdsloader.cli;

import dev.gdsloader.bench.AsyncReadBench;
import dev.gdsloader.bench.ReadRanges;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code gdsloader asyncread}: {@code cuFileReadAsync} on K streams against N threads calling {@code cuFileRead}.
 */
@Command(name = "asyncread", mixinStandardHelpOptions = true,
        description = "Read the same file ranges into registered GPU memory with N threads calling cuFileRead and with "
                + "cuFileReadAsync on K registered streams; interleaved rounds, medians in GB/s (1e9 bytes/s) and "
                + "async/threaded, bytes checked once against the file (CRC32). Needs a GPU with cuFile: exit 2 with "
                + "the reason where there is none.")
final class AsyncReadCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Parameters(arity = "1", paramLabel = "DATA_FILE_OR_DIR", description = "a file, or a directory whose files are read")
    Path data;

    @Option(names = "--threads", split = ",", paramLabel = "N", defaultValue = "1,4,8,16",
            description = "cuFileRead thread counts (default: ${DEFAULT-VALUE})")
    List<Integer> threads;

    @Option(names = "--streams", split = ",", paramLabel = "K", defaultValue = "1,4,8",
            description = "cuFileReadAsync stream counts (default: ${DEFAULT-VALUE})")
    List<Integer> streams;

    @Option(names = "--sizes", split = ",", paramLabel = "SIZE", defaultValue = "1MiB,4MiB,16MiB", converter = ByteSize.class,
            description = "request sizes, multiples of 4 KiB (default: ${DEFAULT-VALUE})")
    List<Long> sizes;

    @Option(names = "--modes", split = ",", paramLabel = "MODE", defaultValue = "WARM,DIRECT",
            description = "WARM: buffered handles over a warmed page cache; DIRECT: O_DIRECT from storage (default: ${DEFAULT-VALUE})")
    List<AsyncReadBench.Mode> modes;

    @Option(names = "--rounds", paramLabel = "R", defaultValue = "5", description = "interleaved rounds per setting (default: ${DEFAULT-VALUE})")
    int rounds;

    @Option(names = "--depth", paramLabel = "D", defaultValue = "4", description = "async reads in flight per stream (default: ${DEFAULT-VALUE})")
    int depth;

    @Option(names = "--stream-flags", paramLabel = "FLAGS", defaultValue = "0",
            description = "cuFileStreamRegister flags: 1 fixed buffer offset, 2 fixed file offset, 4 fixed size, "
                    + "8 page-aligned inputs (default: ${DEFAULT-VALUE})")
    int streamFlags;

    @Override
    public Integer call() throws Exception {
        AsyncReadBench.Options o;
        List<Path> files;
        try {
            o = new AsyncReadBench.Options(threads, streams, sizes, modes, rounds, depth, streamFlags);
            files = ReadRanges.filesOf(data);
        } catch (IllegalArgumentException | IOException e) {
            // one line, as every other error of the command: an option or file problem is not helped by the usage text
            spec.commandLine().getErr().println(GdsLoaderMain.prefix(spec.commandLine()) + ": " + GdsLoaderMain.message(e));
            return 2;
        }
        Path dir = files.get(0).toAbsolutePath().getParent();
        Optional<String> why = AsyncReadBench.unavailableReason(dir);
        if (why.isPresent()) {
            spec.commandLine().getErr().println("gdsloader asyncread: needs a GPU with cuFile: " + why.get());
            return 2;
        }
        AsyncReadBench.run(data, o, System.out);
        return 0;
    }
}
