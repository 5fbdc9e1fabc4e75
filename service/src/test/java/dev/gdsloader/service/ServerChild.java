package dev.gdsloader.service;

import dev.gdsloader.memory.LeakDetector;
import dev.gdsloader.service.server.Cluster;
import dev.gdsloader.service.server.PrefetchServer;
import dev.gdsloader.service.server.ServerLimits;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A prefetch server in a child JVM (so a test can give it a small heap, or kill it): {@code ServerChild ROOT [PORT
 * [CLUSTER INDEX]]} starts a server on a loopback port (default ephemeral) over {@code ROOT} (member INDEX of the
 * cluster {@code host:port,...} when given), prints {@code port N}, and for each line read from standard
 * input waits up to 15 s for the sessions to be freed, collects garbage and prints {@code sessions N leaks M} (M: batches
 * and native buffers the leak detector saw collected unclosed; run the child with
 * {@code -Dgdsloader.leakDetection.level=paranoid} to track every one); at end of input it closes the server and exits 0.
 * Options before ROOT set its {@link ServerLimits} (others keep their defaults), as {@code serve}'s flags name them:
 * {@code --memory-budget=BYTES --max-connections=N --max-sessions=N --max-sessions-per-client=N
 * --max-calls-per-connection=N --idle-timeout-ms=MS --max-message-bytes=BYTES}.
 */
public final class ServerChild {
    private ServerChild() {
    }

    public static void main(String[] options) throws Exception {
        ServerLimits limits = ServerLimits.defaults();
        int first = 0;
        for (; first < options.length && options[first].startsWith("--"); first++) {
            String[] kv = options[first].split("=", 2);
            long v = Long.parseLong(kv[1]);
            limits = switch (kv[0]) {
                case "--memory-budget" -> limits.withMemoryBudget(v);
                case "--max-connections" -> limits.withConnections(Math.toIntExact(v));
                case "--max-sessions" -> limits.withSessions(Math.toIntExact(v));
                case "--max-sessions-per-client" -> limits.withSessionsPerClient(Math.toIntExact(v));
                case "--max-calls-per-connection" -> limits.withCallsPerConnection(Math.toIntExact(v));
                case "--idle-timeout-ms" -> limits.withIdleTimeout(java.time.Duration.ofMillis(v));
                case "--max-message-bytes" -> limits.withMaxMessageBytes(Math.toIntExact(v));
                default -> throw new IllegalArgumentException("ServerChild: unknown option " + options[first]);
            };
        }
        String[] args = java.util.Arrays.copyOfRange(options, first, options.length);
        PrefetchServer.Builder b = PrefetchServer.builder(Path.of(args[0])).port(args.length > 1 ? Integer.parseInt(args[1]) : 0)
                .limits(limits);
        if (args.length > 3) {
            b.cluster(Cluster.parse(args[2], Integer.parseInt(args[3])));
        }
        try (PrefetchServer server = b.start();
             BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            System.out.println("port " + server.port());
            System.out.flush();
            while (in.readLine() != null) {
                Await.within(() -> server.sessions() == 0); // the line says how many are left
                for (int i = 0; i < 5; i++) { // a batch or buffer dropped without being closed is reported at GC
                    Await.collected();
                }
                System.out.println("sessions " + server.sessions() + " leaks " + LeakDetector.leaksReported());
                System.out.flush();
            }
        }
    }
}
