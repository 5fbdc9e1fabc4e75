package dev.gdsloader.service;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A prefetch server in a child JVM (so a test can give it a small heap): {@code ServerChild ROOT} starts a server
 * on an ephemeral loopback port over {@code ROOT}, prints {@code port N}, and for each line read from standard
 * input prints {@code sessions N}; at end of input it closes the server and exits 0.
 */
final class ServerChild {
    private ServerChild() {
    }

    public static void main(String[] args) throws Exception {
        try (PrefetchServer server = PrefetchServer.builder(Path.of(args[0])).start();
             BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            System.out.println("port " + server.port());
            System.out.flush();
            while (in.readLine() != null) {
                long deadline = System.nanoTime() + 15_000_000_000L;
                while (server.sessions() > 0 && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                System.out.println("sessions " + server.sessions());
                System.out.flush();
            }
        }
    }
}
