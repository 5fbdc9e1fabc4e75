package dev.gdsloader.cli;

import dev.gdsloader.service.Cluster;
import dev.gdsloader.service.PrefetchServer;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code gdsloader serve}: the standalone prefetch service (Arrow Flight) over the datasets under one directory, until the
 * process is stopped (a shutdown hook closes the server: every session's loader freed).
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Serve the datasets under DATASET_ROOT over Arrow Flight (dev.gdsloader.service.PrefetchClient, "
                + "pyarrow.flight; protocol in service/README.md): one loader per stream (one epoch), batches delivered as Arrow "
                + "record batches (DoGet) or, on the same host and GPU, as CUDA IPC handles (DoExchange). "
                + "Prints the address it listens on; runs until stopped.")
final class ServeCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "DATASET_ROOT", description = "directory whose datasets clients may open, by paths relative to it; links leading outside it are refused")
    Path root;

    @Option(names = "--port", defaultValue = "0", description = "TCP port; 0 picks a free one (printed) (default: ${DEFAULT-VALUE})")
    int port;

    @Option(names = "--bind", defaultValue = "127.0.0.1",
            description = "address to listen on; the server has no authentication yet, so loopback by default (default: ${DEFAULT-VALUE})")
    String bind;

    @Option(names = "--allow-system-root",
            description = "serve DATASET_ROOT even if it is / or a system directory (/etc, /usr, /home, ...), which is refused otherwise")
    boolean allowSystemRoot;

    @Option(names = "--cluster", paramLabel = "HOST:PORT,...",
            description = "serve as one part of several servers: every server's address as clients reach it, in part order, "
                    + "the same list on every server (or @FILE: one host:port a line); GetFlightInfo then returns every part's endpoint")
    String cluster;

    @Option(names = "--cluster-index", paramLabel = "I", defaultValue = "-1",
            description = "this server's position in --cluster, from 0: its datasets are part I of the cluster's")
    int clusterIndex;

    @Override
    public Integer call() throws Exception {
        PrefetchServer.Builder b = PrefetchServer.builder(root).bind(bind).port(port);
        if (allowSystemRoot) {
            b.allowSystemRoot();
        }
        if (cluster != null) {
            if (clusterIndex < 0) {
                throw new IllegalArgumentException("--cluster needs --cluster-index I (this server's position in the list, from 0)");
            }
            b.cluster(cluster.startsWith("@") ? Cluster.read(Path.of(cluster.substring(1)), clusterIndex) : Cluster.parse(cluster, clusterIndex));
        } else if (clusterIndex >= 0) {
            throw new IllegalArgumentException("--cluster-index needs --cluster HOST:PORT,...");
        }
        PrefetchServer server = b.start();
        Runtime.getRuntime().addShutdownHook(new Thread(server::close, "gdsloader-serve-shutdown"));
        System.out.println("gdsloader: serving " + server.root() + " on " + server.address().getHostString() + ":" + server.port()
                + (cluster == null ? "" : " as part " + clusterIndex + " of the cluster " + cluster));
        System.out.flush();
        server.awaitClose();
        return 0;
    }
}
