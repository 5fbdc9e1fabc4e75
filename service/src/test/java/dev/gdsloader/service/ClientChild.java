package dev.gdsloader.service;

import dev.gdsloader.loader.path.ReadPath;
import java.time.Duration;

/**
 * A training script that does not close its client: {@code ClientChild PORT} opens a client of dataset {@code train}
 * on a loopback server, prints {@code reading}, and reads epochs until an exception ends {@code main} (exit status 1),
 * the client left open. The JVM must then exit.
 */
final class ClientChild {
    private ClientChild() {
    }

    /**
     * @param args the server's port
     * @throws Exception when the server goes away (after 2 s of reconnecting)
     */
    @SuppressWarnings("resource") // the point: the client is not closed
    public static void main(String[] args) throws Exception {
        PrefetchClient c = PrefetchClient.builder("127.0.0.1", Integer.parseInt(args[0])).dataset("train").batchSize(4)
                .path(ReadPath.HOST).timeout(Duration.ofSeconds(30)).reconnectTimeout(Duration.ofSeconds(2)).open();
        System.out.println("reading");
        System.out.flush();
        while (true) {
            for (RemoteBatch b : c) {
                b.close();
            }
        }
    }
}
