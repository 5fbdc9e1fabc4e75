package dev.gdsloader.service;

import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.service.client.PrefetchClient;
import dev.gdsloader.service.client.PrefetchServiceException;
import dev.gdsloader.service.client.RemoteBatch;
import dev.gdsloader.service.protocol.BearerAuth;
import dev.gdsloader.service.server.Cluster;
import dev.gdsloader.service.server.PrefetchServer;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.apache.arrow.flight.FlightStatusCode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 21, findings 5 and 7: a TLS key that is not its certificate's is refused at start in one line naming both
 * files; per-client tokens admit each client under its name (the server's log lines name it) beside the shared token;
 * a cluster over TLS calls its members over TLS, verifying their certificates; mutual TLS admits only clients (and
 * members) presenting a certificate of the configured CA. Real servers and clients on loopback,
 * certificates made by the JDK's keytool ({@link SecurityTest#selfSigned}).
 */
@Timeout(180)
class TlsAndTokensTest {
    private static final String SHARED = "0123456789abcdef0123456789abcdef";
    private static final String ALICE = "a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1a1";
    private static final String BOB = "b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2b2";

    @TempDir
    Path root;
    private final List<PrefetchServer> servers = new ArrayList<>();

    @BeforeAll
    static void leaks() {
        NettyLeaks.install();
    }

    @AfterEach
    void stop() throws InterruptedException {
        servers.forEach(PrefetchServer::close);
        NettyLeaks.check();
    }

    private PrefetchServer started(PrefetchServer.Builder b) throws IOException {
        PrefetchServer s = b.start();
        servers.add(s);
        return s;
    }

    private static PrefetchClient.Builder client(int port) {
        return PrefetchClient.builder("127.0.0.1", port).dataset("train").batchSize(8).path(ReadPath.HOST)
                .timeout(Duration.ofSeconds(30)).reconnectTimeout(Duration.ofMillis(300));
    }

    /** @return the records of one epoch, each checked byte for byte against the files' */
    private static BitSet readEpoch(PrefetchClient c) {
        BitSet seen = new BitSet();
        for (RemoteBatch b : c) {
            try (b) {
                long[] rec = b.recordIndices();
                assertArrayEquals(ServiceShards.expected("x", rec), b.column("x").toByteArray(), b.toString());
                for (int i = 0; i < rec.length - b.paddingCount(); i++) {
                    assertFalse(seen.get((int) rec[i]), "record " + rec[i] + " twice");
                    seen.set((int) rec[i]);
                }
            }
        }
        return seen;
    }

    @Test
    void aKeyThatIsNotTheCertificatesIsRefusedAtStartInOneLineNamingBoth() throws Exception {
        ServiceShards.write(root.resolve("train"), ServiceTestBase.SHARDS);
        Path[] rsa = SecurityTest.selfSigned(root.resolve("rsa"), "127.0.0.1");
        Path[] other = SecurityTest.selfSigned(root.resolve("other"), "127.0.0.1");
        Path[] ec = SecurityTest.selfSigned(root.resolve("ec"), "127.0.0.1", "EC");
        IOException e = assertThrows(IOException.class, () -> PrefetchServer.builder(root).tls(rsa[0], other[1]).start().close());
        assertEquals("cannot listen on 127.0.0.1:0: TLS key " + other[1] + " does not match the certificate " + rsa[0] + ": the key "
                + "(RSA 2048 bits) is not the private key of the certificate's public key (RSA 2048 bits, subject CN=localhost): "
                + "give the key the certificate was issued for", e.getMessage());
        IOException kind = assertThrows(IOException.class, () -> PrefetchServer.builder(root).tls(ec[0], rsa[1]).start().close());
        assertTrue(kind.getMessage().startsWith("cannot listen on 127.0.0.1:0: TLS key " + rsa[1] + " does not match the certificate "
                + ec[0] + ": the key (RSA 2048 bits) is not the private key of the certificate's public key (EC 256 bits"), kind.getMessage());
        for (IOException x : List.of(e, kind)) {
            assertFalse(x.getMessage().contains("\n"), "one line: " + x.getMessage());
        }
        // the matching pairs, RSA and EC, start and serve over TLS
        for (Path[] pair : List.of(rsa, ec)) {
            PrefetchServer s = started(PrefetchServer.builder(root).tls(pair[0], pair[1]));
            try (PrefetchClient c = client(s.port()).tls(pair[0]).open()) {
                assertEquals(ServiceTestBase.RECORDS, readEpoch(c).cardinality());
            }
        }
    }

    @Test
    void keysOfAFormTheServerCannotReadAreNamedAtStart() throws Exception {
        Path[] rsa = SecurityTest.selfSigned(root.resolve("rsa"), "127.0.0.1");
        String body = "\nMIIBAgMEBQYHCAkKCwwNDg8Q\n";
        Map<String, String> refused = Map.of(
                "-----BEGIN RSA PRIVATE KEY-----" + body + "-----END RSA PRIVATE KEY-----\n",
                "is a 'RSA PRIVATE KEY' (PKCS#1 or SEC1): expected an unencrypted PKCS#8 key",
                "-----BEGIN ENCRYPTED PRIVATE KEY-----" + body + "-----END ENCRYPTED PRIVATE KEY-----\n",
                "is encrypted (BEGIN ENCRYPTED PRIVATE KEY): expected an unencrypted PKCS#8 key",
                "-----BEGIN PRIVATE KEY-----" + body + "-----END PRIVATE KEY-----\n",
                ": the PRIVATE KEY block is not a PKCS#8 RSA, DSA or EC key",
                "not a key\n",
                "holds no '-----BEGIN PRIVATE KEY-----' block");
        int i = 0;
        for (Map.Entry<String, String> k : refused.entrySet()) {
            Path key = Files.writeString(root.resolve("key-" + i++ + ".pem"), k.getKey(), StandardCharsets.US_ASCII);
            IOException e = assertThrows(IOException.class, () -> PrefetchServer.builder(root).tls(rsa[0], key).start().close());
            assertTrue(e.getMessage().startsWith("cannot listen on 127.0.0.1:0: TLS key " + key) && e.getMessage().contains(k.getValue()),
                    e.getMessage());
        }
        IOException cert = assertThrows(IOException.class, () -> PrefetchServer.builder(root).tls(rsa[1], rsa[1]).start().close());
        assertEquals("cannot listen on 127.0.0.1:0: TLS certificate " + rsa[1] + " holds no '-----BEGIN CERTIFICATE-----' block: "
                + "expected a PEM certificate chain, the server's certificate first", cert.getMessage());
    }

    @Test
    void eachClientIsAdmittedUnderItsOwnNameBesideTheSharedToken() throws Exception {
        ServiceShards.write(root.resolve("train"), ServiceTestBase.SHARDS);
        Path file = Files.writeString(root.resolve("clients"), "# name:token\nalice:" + ALICE + "\n\n  bob : " + BOB + "  \n");
        assertEquals(Map.of("alice", ALICE, "bob", BOB), BearerAuth.readNamed(file));
        PrefetchServer s = started(PrefetchServer.builder(root).bind("0.0.0.0").token(SHARED).clientTokens(BearerAuth.readNamed(file)));
        Logger producer = Logger.getLogger("dev.gdsloader.service.server.PrefetchProducer");
        ConcurrentLinkedQueue<String> lines = new ConcurrentLinkedQueue<>();
        Handler h = new Handler() {
            @Override
            public void publish(LogRecord r) {
                lines.add(r.getMessage());
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Level was = producer.getLevel();
        producer.setLevel(Level.FINE);
        producer.addHandler(h);
        try {
            for (Map.Entry<String, String> c : Map.of("alice", ALICE, "bob", BOB, BearerAuth.SHARED_NAME, SHARED).entrySet()) {
                try (PrefetchClient pc = client(s.port()).token(c.getValue()).open()) {
                    assertEquals(ServiceTestBase.RECORDS, readEpoch(pc).cardinality(), c.getKey());
                }
                assertTrue(lines.stream().anyMatch(l -> l.startsWith("gdsloader: DoGet of 'train' by client '" + c.getKey() + "': session ")),
                        "a log line names " + c.getKey() + ": " + lines);
            }
        } finally {
            producer.removeHandler(h);
            producer.setLevel(was);
        }
        PrefetchServiceException wrong = assertThrows(PrefetchServiceException.class,
                () -> client(s.port()).token("c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3").open().close());
        assertEquals(FlightStatusCode.UNAUTHENTICATED, wrong.code(), wrong.getMessage());
        // client tokens alone are a token: a non-loopback bind starts
        started(PrefetchServer.builder(root).bind("0.0.0.0").clientTokens(Map.of("alice", ALICE)));
    }

    @Test
    void aBadClientTokensFileIsNamedByLineWithoutQuotingATokenAndTheSharedNameIsReserved() throws Exception {
        Map<String, String> bad = Map.of(
                "alice " + ALICE + "\n", "line 1: expected name:token (no ':' on the line)",
                "# c\nal ice:" + ALICE + "\n", "line 2: the name before ':' must be 1 to 64 characters of A-Z a-z 0-9 . _ - (it is 'al ice')",
                "alice:" + ALICE + "\nalice:" + BOB + "\n", "line 2: the name 'alice' is listed twice",
                "alice:" + ALICE + "\nbob:" + ALICE + "\n", "line 2: the token of 'bob' is also the token of 'alice'",
                "alice:short\n", "line 1: the token of 'alice': a bearer token must have 16",
                "# nobody\n", "holds no name:token line");
        int i = 0;
        for (Map.Entry<String, String> b : bad.entrySet()) {
            Path f = Files.writeString(root.resolve("clients-" + i++), b.getKey());
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BearerAuth.readNamed(f));
            assertTrue(e.getMessage().startsWith("client tokens file " + f) && e.getMessage().contains(b.getValue()), e.getMessage());
            assertFalse(e.getMessage().contains(ALICE) || e.getMessage().contains("short"), e.getMessage());
        }
        IOException shared = assertThrows(IOException.class, () -> PrefetchServer.builder(root).token(SHARED)
                .clientTokens(Map.of(BearerAuth.SHARED_NAME, ALICE)).start().close());
        assertEquals("cannot listen on 127.0.0.1:0: the client tokens name a client 'shared', the name of the shared token "
                + "(--token-file): rename that client", shared.getMessage());
        IllegalArgumentException same = assertThrows(IllegalArgumentException.class,
                () -> PrefetchServer.builder(root).clientTokens(Map.of("alice", ALICE, "bob", ALICE)));
        assertFalse(same.getMessage().contains(ALICE), same.getMessage());
    }

    @Test
    void withClientCertificatesRequiredOnlyAClientPresentingOneOfTheCasReads() throws Exception {
        ServiceShards.write(root.resolve("train"), ServiceTestBase.SHARDS);
        Path[] pem = SecurityTest.selfSigned(root.resolve("tls"), "127.0.0.1");
        Path[] mine = SecurityTest.selfSigned(root.resolve("client"), "127.0.0.1");
        Path[] stranger = SecurityTest.selfSigned(root.resolve("stranger"), "127.0.0.1");
        PrefetchServer s = started(PrefetchServer.builder(root).tls(pem[0], pem[1]).tlsClientCa(mine[0]).token(SHARED));
        try (PrefetchClient c = client(s.port()).tls(pem[0]).tlsClientCertificate(mine[0], mine[1]).token(SHARED).open()) {
            assertEquals(ServiceTestBase.RECORDS, readEpoch(c).cardinality());
        }
        PrefetchServiceException none = assertThrows(PrefetchServiceException.class,
                () -> client(s.port()).tls(pem[0]).token(SHARED).open().close());
        assertEquals(FlightStatusCode.UNAVAILABLE, none.code(), none.getMessage());
        PrefetchServiceException other = assertThrows(PrefetchServiceException.class,
                () -> client(s.port()).tls(pem[0]).tlsClientCertificate(stranger[0], stranger[1]).token(SHARED).open().close());
        assertEquals(FlightStatusCode.UNAVAILABLE, other.code(), other.getMessage());
        IOException plain = assertThrows(IOException.class, () -> PrefetchServer.builder(root).tlsClientCa(mine[0]).start().close());
        assertEquals("cannot listen on 127.0.0.1:0: client certificates (Builder.tlsClientCa, serve --tls-client-ca) need TLS: give "
                + "the server's certificate and key too", plain.getMessage());
    }

    /** Parts of the two-member cluster: records 0..39 on member 0, 40..70 on member 1. */
    private Path part(int j) throws IOException {
        Path r = root.resolve("part-" + j);
        ServiceShards.writeFrom(r.resolve("train"), j == 0 ? 0 : 40, j == 0 ? new int[] {23, 17} : new int[] {31});
        return r;
    }

    private static int[] freePorts(int n) throws IOException {
        int[] ports = new int[n];
        for (int j = 0; j < n; j++) {
            try (ServerSocket s = new ServerSocket(0)) {
                ports[j] = s.getLocalPort();
            }
        }
        return ports;
    }

    @Test
    void aClusterOverTlsCallsItsMembersOverTlsVerifyingThem() throws Exception {
        Path[] pem = SecurityTest.selfSigned(root.resolve("tls"), "127.0.0.1");
        Path[] other = SecurityTest.selfSigned(root.resolve("other"), "127.0.0.1");
        int[] ports = freePorts(2);
        String members = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
        // mutual TLS too: each member requires a client certificate of pem's, and presents its own to the other
        PrefetchServer m0 = started(PrefetchServer.builder(part(0)).port(ports[0]).cluster(Cluster.parse(members, 0))
                .tls(pem[0], pem[1]).tlsClientCa(pem[0]).token(SHARED));
        started(PrefetchServer.builder(part(1)).port(ports[1]).cluster(Cluster.parse(members, 1)).tls(pem[0], pem[1])
                .tlsClientCa(pem[0]).token(SHARED));
        assertEquals("grpc+tls", m0.location().getUri().getScheme());
        try (PrefetchClient c = client(ports[0]).tls(pem[0]).tlsClientCertificate(pem[0], pem[1]).token(SHARED).open()) {
            BitSet seen = readEpoch(c);
            assertEquals(71, seen.cardinality(), "every record of both parts, member 1's over TLS: " + seen);
        }
        // a member that does not trust the other's certificate cannot call it: the peer call is TLS and verified
        servers.remove(m0);
        m0.close();
        PrefetchServer distrusting = started(PrefetchServer.builder(part(0)).port(ports[0]).cluster(Cluster.parse(members, 0))
                .tls(pem[0], pem[1]).clusterTrust(other[0]).token(SHARED));
        PrefetchServiceException e = assertThrows(PrefetchServiceException.class,
                () -> client(distrusting.port()).tls(pem[0]).tlsClientCertificate(pem[0], pem[1]).token(SHARED).open().close());
        assertEquals(FlightStatusCode.UNAVAILABLE, e.code(), e.getMessage());
        assertTrue(e.getMessage().contains("part 1 of 2 at grpc+tls://127.0.0.1:" + ports[1]), e.getMessage());
        // with client tokens and no shared token, a member needs the token named 'cluster' for its peers
        IOException none = assertThrows(IOException.class, () -> PrefetchServer.builder(part(1)).cluster(Cluster.parse(members, 1))
                .clientTokens(Map.of("alice", ALICE)).start().close());
        assertEquals("cannot listen on 127.0.0.1:0: a cluster member sends the other members a token: give the shared token "
                + "(--token-file) or a client named 'cluster' in the client tokens, the same on every member", none.getMessage());
    }
}
