package dev.gdsloader.service;

import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.service.client.PrefetchClient;
import dev.gdsloader.service.client.PrefetchServiceException;
import dev.gdsloader.service.client.RemoteBatch;
import dev.gdsloader.service.protocol.BearerAuth;
import dev.gdsloader.service.server.PrefetchServer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.flight.Criteria;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightRuntimeException;
import org.apache.arrow.flight.FlightStatusCode;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;


/**
 * Safe to expose: a non-loopback bind needs a bearer token; with a token every call without it (or with another) is
 * refused UNAUTHENTICATED naming nothing secret; TLS with a self-signed certificate made here by the JDK's keytool.
 * Real servers and clients on loopback.
 */
@Timeout(120)
class SecurityTest {
    private static final String TOKEN = "0123456789abcdef0123456789abcdef";

    @TempDir
    Path root;
    private PrefetchServer server;

    @BeforeAll
    static void leaks() {
        NettyLeaks.install();
    }

    @BeforeEach
    void data() throws IOException {
        ServiceShards.write(root.resolve("train"), ServiceTestBase.SHARDS);
    }

    @AfterEach
    void stop() throws InterruptedException {
        if (server != null) {
            server.close();
        }
        NettyLeaks.check();
    }

    private PrefetchClient.Builder client() {
        return PrefetchClient.builder("127.0.0.1", server.port()).dataset("train").batchSize(8).path(ReadPath.HOST)
                .timeout(Duration.ofSeconds(30)).reconnectTimeout(Duration.ofMillis(300));
    }

    private static long readEpoch(PrefetchClient c) {
        long records = 0;
        for (RemoteBatch b : c) {
            try (b) {
                records += b.records() - b.paddingCount();
            }
        }
        return records;
    }

    @Test
    void aNonLoopbackBindWithoutATokenRefusesToStartSayingWhy() {
        IOException e = assertThrows(IOException.class, () -> PrefetchServer.builder(root).bind("0.0.0.0").start().close());
        assertEquals("cannot listen on 0.0.0.0:0: a non-loopback address needs a bearer token (serve --token-file FILE or the "
                + "environment variable GDSLOADER_TOKEN; Builder.token): without one anyone who can reach it reads every dataset",
                e.getMessage());
    }

    @Test
    void withATokenEveryCallWithoutItOrWithAnotherIsRefusedUnauthenticated() throws Exception {
        server = PrefetchServer.builder(root).bind("0.0.0.0").token(TOKEN).start();
        PrefetchServiceException none = assertThrows(PrefetchServiceException.class, () -> client().open().close());
        assertEquals(FlightStatusCode.UNAUTHENTICATED, none.code(), none.getMessage());
        assertTrue(none.getMessage().contains("needs a bearer token"), none.getMessage());
        String wrong = "fedcba9876543210fedcba9876543210";
        PrefetchServiceException bad = assertThrows(PrefetchServiceException.class, () -> client().token(wrong).open().close());
        assertEquals(FlightStatusCode.UNAUTHENTICATED, bad.code(), bad.getMessage());
        assertTrue(bad.getMessage().contains("was not accepted"), bad.getMessage());
        for (String m : List.of(none.getMessage(), bad.getMessage())) {
            assertFalse(m.contains(TOKEN) || m.contains(wrong) || m.contains(root.toString()), m);
        }
        // every RPC, not only the prefetch client's: a plain Flight client listing the datasets
        try (RootAllocator a = new RootAllocator()) {
            FlightClient raw = FlightClient.builder(a, server.location()).build();
            try {
                FlightRuntimeException e = assertThrows(FlightRuntimeException.class,
                        () -> raw.listFlights(Criteria.ALL).forEach(f -> { }));
                assertEquals(FlightStatusCode.UNAUTHENTICATED, e.status().code());
            } finally {
                raw.close();
            }
        }
        try (PrefetchClient c = client().token(TOKEN).open()) {
            assertEquals(ServiceTestBase.RECORDS, readEpoch(c));
        }
    }

    @Test
    void tokensAreCheckedAndNeverQuoted() throws IOException {
        var e = assertThrows(IllegalArgumentException.class, () -> PrefetchServer.builder(root).token("short"));
        assertFalse(e.getMessage().contains("short"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> BearerAuth.check("0123456789abcdef 0123"));
        Path f = root.resolve("token");
        Files.writeString(f, TOKEN + "\n");
        assertEquals(TOKEN, BearerAuth.read(f));
        assertEquals(TOKEN, BearerAuth.fromEnvironment(Map.of(BearerAuth.ENVIRONMENT_VARIABLE, TOKEN)));
        assertEquals(null, BearerAuth.fromEnvironment(Map.of()));
        Files.writeString(f, "x\n");
        var fe = assertThrows(IllegalArgumentException.class, () -> BearerAuth.read(f));
        assertTrue(fe.getMessage().startsWith("token file " + f + ": a bearer token must have 16"), fe.getMessage());
    }

    @Test
    void aTokenFileThatIsADirectoryOrAFifoIsNamedWithoutBlocking() throws Exception {
        Path dir = Files.createDirectory(root.resolve("token-dir"));
        IOException d = assertThrows(IOException.class, () -> BearerAuth.read(dir));
        assertEquals("token file " + dir + " is not a regular file: expected a file whose first line is the token", d.getMessage());
        Path fifo = mkfifo(root.resolve("token-fifo"));
        IOException f = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(10),
                () -> assertThrows(IOException.class, () -> BearerAuth.read(fifo)));
        assertTrue(f.getMessage().startsWith("token file " + fifo + " is not a regular file"), f.getMessage());
    }

    /** A named pipe made by mkfifo(1): opening it to read blocks until a writer comes. */
    static Path mkfifo(Path at) throws Exception {
        Process p = new ProcessBuilder("mkfifo", at.toString()).inheritIO().start();
        assertEquals(0, p.waitFor(), "mkfifo " + at);
        return at;
    }

    @Test
    void tlsWithASelfSignedCertificate() throws Exception {
        Path[] pem = selfSigned(root.resolve("tls"), "127.0.0.1");
        Path[] other = selfSigned(root.resolve("other"), "127.0.0.1");
        server = PrefetchServer.builder(root).tls(pem[0], pem[1]).token(TOKEN).start();
        assertEquals("grpc+tls", server.location().getUri().getScheme());
        try (PrefetchClient c = client().tls(pem[0]).token(TOKEN).open()) {
            assertEquals(ServiceTestBase.RECORDS, readEpoch(c));
        }
        // plaintext to a TLS server, and TLS trusting another certificate: no connection
        PrefetchServiceException plain = assertThrows(PrefetchServiceException.class, () -> client().token(TOKEN).open().close());
        assertEquals(FlightStatusCode.UNAVAILABLE, plain.code(), plain.getMessage());
        PrefetchServiceException untrusted = assertThrows(PrefetchServiceException.class,
                () -> client().tls(other[0]).token(TOKEN).open().close());
        assertEquals(FlightStatusCode.UNAVAILABLE, untrusted.code(), untrusted.getMessage());
        // TLS does not replace the token
        PrefetchServiceException noToken = assertThrows(PrefetchServiceException.class, () -> client().tls(pem[0]).open().close());
        assertEquals(FlightStatusCode.UNAUTHENTICATED, noToken.code(), noToken.getMessage());
    }

    @Test
    void anUnreadableCertificateIsNamed() throws IOException {
        Path missing = root.resolve("missing.pem");
        IOException e = assertThrows(IOException.class, () -> PrefetchServer.builder(root).tls(missing, missing).start().close());
        assertTrue(e.getMessage().startsWith("cannot listen on 127.0.0.1:0: TLS certificate " + missing), e.getMessage());
    }

    @Test
    void aCertificateOrKeyThatIsAFifoOrADirectoryIsNamedWithoutBlocking() throws Exception {
        Path[] pem = selfSigned(root.resolve("tls"), "127.0.0.1");
        Path fifo = mkfifo(root.resolve("key-fifo"));
        IOException k = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(20),
                () -> assertThrows(IOException.class, () -> PrefetchServer.builder(root).tls(pem[0], fifo).start().close()));
        assertEquals("cannot listen on 127.0.0.1:0: TLS key " + fifo + " is not a regular file: expected a PEM file", k.getMessage());
        Path dir = root.resolve("tls");
        IOException c = assertThrows(IOException.class, () -> PrefetchServer.builder(root).tls(dir, pem[1]).start().close());
        assertEquals("cannot listen on 127.0.0.1:0: TLS certificate " + dir + " is not a regular file: expected a PEM file", c.getMessage());
    }

    /**
     * A self-signed RSA certificate for {@code ip} (subject alternative name) made by the JDK's keytool in a child
     * process, converted to PEM here: {certificate.pem, key.pem (PKCS#8)}.
     */
    static Path[] selfSigned(Path dir, String ip) throws Exception {
        return selfSigned(dir, ip, "RSA");
    }

    /** As {@link #selfSigned(Path, String)}, the key {@code RSA} (2048 bits) or {@code EC} (secp256r1). */
    static Path[] selfSigned(Path dir, String ip, String keyAlgorithm) throws Exception {
        Files.createDirectories(dir);
        Path ks = dir.resolve("server.p12");
        String keytool = Path.of(System.getProperty("java.home"), "bin", "keytool").toString();
        Process p = new ProcessBuilder(keytool, "-genkeypair", "-alias", "server", "-keyalg", keyAlgorithm,
                keyAlgorithm.equals("EC") ? "-groupname" : "-keysize", keyAlgorithm.equals("EC") ? "secp256r1" : "2048", "-dname", "CN=localhost", "-ext", "san=ip:" + ip + ",dns:localhost", "-validity", "2", "-storetype", "PKCS12",
                "-keystore", ks.toString(), "-storepass", "changeit", "-keypass", "changeit")
                .redirectErrorStream(true).redirectOutput(dir.resolve("keytool.log").toFile()).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "keytool did not finish");
        assertEquals(0, p.exitValue(), Files.readString(dir.resolve("keytool.log")));
        KeyStore store = KeyStore.getInstance("PKCS12");
        try (var in = Files.newInputStream(ks)) {
            store.load(in, "changeit".toCharArray());
        }
        Certificate cert = store.getCertificate("server");
        var key = store.getKey("server", "changeit".toCharArray());
        assertEquals("PKCS#8", key.getFormat());
        Path certPem = dir.resolve("certificate.pem");
        Path keyPem = dir.resolve("key.pem");
        Files.writeString(certPem, pem("CERTIFICATE", cert.getEncoded()), StandardCharsets.US_ASCII);
        Files.writeString(keyPem, pem("PRIVATE KEY", key.getEncoded()), StandardCharsets.US_ASCII);
        return new Path[] {certPem, keyPem};
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
