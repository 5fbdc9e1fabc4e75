package dev.gdsloader.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import dev.gdsloader.service.client.PrefetchClient;
import dev.gdsloader.service.client.RemoteBatch;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code gdsloader serve}: serves a root over Arrow Flight in a child JVM until SIGTERM; refuses {@code /} and system
 * directories as its root unless {@code --allow-system-root} is given (the server that flag starts is tested in the
 * service module's {@code SafeRootTest}).
 */
@Timeout(60)
class ServeCommandTest {
    @TempDir
    Path dir;

    /** {@code gdsloader serve ROOT} in a child JVM: prints where it listens, serves an epoch over Flight, stops on SIGTERM. */
    @Test
    void serveListensOnLoopbackAndServesAnEpochOverFlight() throws Exception {
        Path train = Files.createDirectories(dir.resolve("root").resolve("train"));
        byte[] x = new byte[30 * 4];
        for (int i = 0; i < x.length; i++) {
            x[i] = (byte) (i * 5 + 1);
        }
        NpyWriter.write(train.resolve("x-00000.npy"), DType.UINT8, new long[] {30, 4}, x);
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "@" + Objects.requireNonNull(System.getProperty("gds.jvm.flags"), "system property gds.jvm.flags"),
                "-cp", System.getProperty("java.class.path"), GdsLoaderMain.class.getName(), "serve", dir.resolve("root").toString(),
                "--port", "0"));
        Process p = new ProcessBuilder(cmd).redirectError(dir.resolve("serve.err").toFile()).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String line = out.readLine();
            Matcher m = Pattern.compile("gdsloader: serving .* on 127\\.0\\.0\\.1:(\\d+)").matcher(String.valueOf(line));
            assertTrue(m.matches(), line + " / " + Files.readString(dir.resolve("serve.err")));
            int port = Integer.parseInt(m.group(1));
            try (PrefetchClient c = PrefetchClient.builder("127.0.0.1", port).dataset("train").batchSize(8)
                    .timeout(Duration.ofSeconds(30)).open()) {
                assertEquals("HOST", c.pathTaken());
                int records = 0;
                for (RemoteBatch b : c) {
                    try (b) {
                        byte[] got = b.column("x").toByteArray();
                        assertArrayEquals(java.util.Arrays.copyOfRange(x, records * 4, records * 4 + got.length), got);
                        records += b.records();
                    }
                }
                assertEquals(30, records);
            }
            // a ticket over --max-message (1 MiB): the client is told why, the server's console gets one line, no stack trace
            var e = org.junit.jupiter.api.Assertions.assertThrows(dev.gdsloader.service.client.PrefetchServiceException.class,
                    () -> PrefetchClient.builder("127.0.0.1", port).dataset("x".repeat(2 << 20)).batchSize(8)
                            .timeout(Duration.ofSeconds(30)).open().close());
            assertEquals(org.apache.arrow.flight.FlightStatusCode.RESOURCE_EXHAUSTED, e.code(), e.toString());
        } finally {
            p.destroy(); // SIGTERM: the shutdown hook closes the server
            assertTrue(p.waitFor(30, TimeUnit.SECONDS), "serve did not stop on SIGTERM");
        }
        String err = Files.readString(dir.resolve("serve.err"));
        assertTrue(err.contains("exceeds maximum size 1048576"), err);
        assertTrue(err.lines().noneMatch(l -> l.strip().startsWith("at ")), "no stack trace on the server's console: " + err);
    }

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

    @Test
    void aClusterNeedsItsIndexAndWellFormedMembers(@org.junit.jupiter.api.io.TempDir java.nio.file.Path root) {
        String[][] cases = {
            {"--cluster", "127.0.0.1:9001,127.0.0.1:9002", "--cluster needs --cluster-index I"},
            {"--cluster-index", "0", "--cluster-index needs --cluster HOST:PORT"},
            {"--cluster-index", "-1", "--cluster-index needs --cluster HOST:PORT"},
            {"--registration-linger", "-5", "--registration-linger must be 0..86400 seconds, got -5"},
            {"--session-linger", "-5", "--session-linger must be 0..86400 seconds, got -5"},
            {"--registration-linger", "9223372037", "--registration-linger must be 0..86400 seconds, got 9223372037"},
            {"--session-linger", "1.5", "--session-linger: '1.5' is not a whole number in 0..86400 seconds"},
            {"--cluster", "127.0.0.1:9001,127.0.0.1:9002", "--cluster-index", "-2", "--cluster-index must be 0..1, got -2 (this server's "
                + "position in --cluster 127.0.0.1:9001,127.0.0.1:9002)"},
            {"--cluster", "127.0.0.1:9001,127.0.0.1:9002", "--cluster-index", "5", "--cluster-index must be 0..1, got 5 (this server's "
                + "position in --cluster 127.0.0.1:9001,127.0.0.1:9002)"},
            {"--cluster", "a:1,b:2", "--cluster-index", "99999999999", "--cluster-index: '99999999999' is out of range: must be "
                + "0..2147483647"},
            // a negative or too large size names the option's own range, as the command's check does
            {"--max-message", "-1", "--max-message must be 1..2147483647 bytes, got -1"},
            {"--max-message", "99999999999PiB", "--max-message must be 1..2147483647 bytes, got 99999999999PiB"},
            {"--max-message", "0", "--max-message must be 1..2147483647 bytes, got 0"},
            {"--memory-budget", "-1", "--memory-budget must be 1.." + dev.gdsloader.memory.NativeAllocator.hostMemoryBytes()
                + " bytes, got -1"},
            {"--memory-budget", "-4KiB", "--memory-budget must be 1.." + dev.gdsloader.memory.NativeAllocator.hostMemoryBytes()
                + " bytes, got -4KiB"},
            {"--memory-budget", "99999999999PiB", "--memory-budget must be 1.." + dev.gdsloader.memory.NativeAllocator.hostMemoryBytes()
                + " bytes, got 99999999999PiB"},
            {"--cluster", "127.0.0.1:9001,node1", "--cluster-index", "0", "cluster member 'node1' is not host:port"},
            {"--cluster", "127.0.0.1:9001,127.0.0.1:9001", "--cluster-index", "0", "cluster member '127.0.0.1:9001' is listed twice"},
        };
        for (String[] c : cases) {
            String[] args = new String[c.length];
            args[0] = root.toString();
            System.arraycopy(c, 0, args, 1, c.length - 1);
            CommandRun r = CommandRun.execute(new ServeCommand(), args);
            assertEquals(2, r.exitCode(), r.toString());
            assertTrue(r.err().contains(c[c.length - 1]), r.toString());
            assertTrue(r.out().isEmpty(), "nothing served: " + r);
        }
    }

    @Test
    void aClusterFileThatIsAFifoOrADirectoryIsOneLineWithoutBlocking(@org.junit.jupiter.api.io.TempDir java.nio.file.Path root)
            throws Exception {
        Path fifo = root.resolve("cluster-fifo");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).inheritIO().start().waitFor(), "mkfifo");
        for (Path f : new Path[] {root, fifo}) { // the directory first: without the check a FIFO blocks CommandRun for good
            CommandRun r = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(20),
                    () -> CommandRun.execute(new ServeCommand(), root.toString(), "--cluster", "@" + f, "--cluster-index", "0"));
            assertEquals(2, r.exitCode(), r.toString());
            assertEquals("gdsloader serve: cluster file " + f + " is not a regular file: expected one host:port a line", r.err().strip(),
                    r.toString());
        }
    }

    @Test
    void aNonLoopbackBindWithoutATokenRefusesToStartInOneLine(@org.junit.jupiter.api.io.TempDir java.nio.file.Path root) {
        org.junit.jupiter.api.Assumptions.assumeTrue(System.getenv("GDSLOADER_TOKEN") == null, "GDSLOADER_TOKEN is set here");
        CommandRun r = CommandRun.execute(new ServeCommand(), root.toString(), "--bind", "0.0.0.0");
        assertEquals(2, r.exitCode(), r.toString());
        assertEquals("gdsloader serve: cannot listen on 0.0.0.0:0: a non-loopback address needs a bearer token (serve --token-file "
                + "FILE or the environment variable GDSLOADER_TOKEN; Builder.token): without one anyone who can reach it reads every "
                + "dataset", r.err().strip(), r.toString());
        assertTrue(r.out().isEmpty(), "nothing served: " + r);
    }

    @Test
    void aBadTokenFileIsOneLineWithoutTheToken(@org.junit.jupiter.api.io.TempDir java.nio.file.Path root) throws Exception {
        java.nio.file.Path f = root.resolve("token");
        java.nio.file.Files.writeString(f, "tooshort\n");
        CommandRun r = CommandRun.execute(new ServeCommand(), root.toString(), "--token-file", f.toString());
        assertEquals(2, r.exitCode(), r.toString());
        assertTrue(r.err().startsWith("gdsloader serve: token file " + f + ": a bearer token must have 16") && !r.err().contains("tooshort"),
                r.toString());
        CommandRun half = CommandRun.execute(new ServeCommand(), root.toString(), "--tls-cert", f.toString());
        assertEquals(2, half.exitCode(), half.toString());
        assertTrue(half.err().contains("--tls-cert and --tls-key go together"), half.toString());
    }

    @Test
    void clientTokensAndClusterCaAreCheckedInOneLine(@org.junit.jupiter.api.io.TempDir java.nio.file.Path root) throws Exception {
        java.nio.file.Path f = root.resolve("clients");
        java.nio.file.Files.writeString(f, "alice:0123456789abcdef0123456789abcdef\nbob 0123456789abcdef0123456789abcdef\n");
        CommandRun r = CommandRun.execute(new ServeCommand(), root.toString(), "--client-tokens", f.toString());
        assertEquals(2, r.exitCode(), r.toString());
        assertEquals("gdsloader serve: client tokens file " + f + " line 2: expected name:token (no ':' on the line)", r.err().strip(),
                r.toString());
        CommandRun ca = CommandRun.execute(new ServeCommand(), root.toString(), "--cluster-ca", f.toString());
        assertEquals(2, ca.exitCode(), ca.toString());
        assertEquals("gdsloader serve: --cluster-ca needs --cluster and --tls-cert: it is what a member trusts when it calls the "
                + "others over TLS", ca.err().strip(), ca.toString());
        CommandRun mtls = CommandRun.execute(new ServeCommand(), root.toString(), "--tls-client-ca", f.toString());
        assertEquals(2, mtls.exitCode(), mtls.toString());
        assertEquals("gdsloader serve: --tls-client-ca needs --tls-cert and --tls-key: client certificates are part of TLS",
                mtls.err().strip(), mtls.toString());
        assertTrue(r.out().isEmpty() && ca.out().isEmpty(), "nothing served: " + r + ca);
    }

    @Test
    void limitFlagsReachTheServerLimitsAndBadOnesAreOneLine(@org.junit.jupiter.api.io.TempDir java.nio.file.Path root) {
        ServeCommand c = new ServeCommand();
        new picocli.CommandLine(c).parseArgs(root.toString(), "--max-connections", "10", "--max-sessions", "5",
                "--max-sessions-per-client", "2", "--max-calls-per-connection", "3", "--idle-timeout", "7", "--max-message", "64KiB",
                "--memory-budget", "2GiB", "--max-connections-per-address", "4", "--auth-timeout", "2", "--io-threads", "8",
                "--max-prefetch-depth", "6", "--max-batch-bytes", "64MiB");
        dev.gdsloader.service.server.ServerLimits l = c.limits();
        assertEquals("connections 10 (4 per address, 2000 ms to authenticate), sessions 5, sessions per client 2, calls per "
                + "connection 3, idle timeout 7000 ms, largest message 65536 B, memory budget 2147483648 B, I/O threads 8, "
                + "prefetch depth <= 6, batch <= 67108864 B", l.toString());
        assertEquals(dev.gdsloader.service.server.ServerLimits.defaults().toString(), new ServeCommand().limits().toString());
        CommandRun r = CommandRun.execute(new ServeCommand(), root.toString(), "--max-sessions", "0");
        assertEquals(2, r.exitCode(), r.toString());
        assertEquals("gdsloader serve: --max-sessions must be 1..2147483647, got 0", r.err().strip(), r.toString());
    }

    /**
     * Every limit flag's refusal is one line naming the option as typed, the value given and what it allows, in the
     * option's terms (not {@link dev.gdsloader.service.server.ServerLimits}' field names such as {@code maxMessageBytes}); a new
     * user's {@code --max-message 0} got {@code limit maxMessageBytes must be > 0}, and a number past an int got the int's
     * range, negatives included.
     */
    @Test
    void everyLimitFlagsRefusalNamesTheOptionTheValueAndWhatItAllows(@org.junit.jupiter.api.io.TempDir java.nio.file.Path root) {
        long physical = dev.gdsloader.memory.NativeAllocator.hostMemoryBytes();
        String[][] cases = {
            {"--max-connections", "0", "--max-connections must be 1..2147483647, got 0"},
            {"--max-connections", "-3", "--max-connections must be 1..2147483647, got -3"},
            {"--max-connections", "99999999999", "--max-connections: '99999999999' is out of range: must be 1..2147483647"},
            {"--max-sessions", "0", "--max-sessions must be 1..2147483647, got 0"},
            {"--max-sessions", "99999999999", "--max-sessions: '99999999999' is out of range: must be 1..2147483647"},
            {"--max-sessions-per-client", "0", "--max-sessions-per-client must be 1..2147483647, got 0"},
            {"--max-sessions-per-client", "99999999999", "--max-sessions-per-client: '99999999999' is out of range: must be 1..2147483647"},
            {"--max-calls-per-connection", "0", "--max-calls-per-connection must be 1..2147483647, got 0"},
            {"--max-connections-per-address", "0", "--max-connections-per-address must be 1..2147483647, got 0"},
            {"--io-threads", "1025", "--io-threads must be 1..1024, got 1025"},
            {"--max-batch-bytes", "0", "--max-batch-bytes must be >= 1 bytes, got 0"},
            {"--max-calls-per-connection", "99999999999", "--max-calls-per-connection: '99999999999' is out of range: must be 1..2147483647"},
            {"--idle-timeout", "-1", "--idle-timeout must be 1..2147483647 seconds, got -1"},
            {"--idle-timeout", "99999999999", "--idle-timeout: '99999999999' is out of range: must be 1..2147483647 seconds"},
            {"--max-message", "0", "--max-message must be 1..2147483647 bytes, got 0"},
            {"--max-message", "0KiB", "--max-message must be 1..2147483647 bytes, got 0"},
            {"--max-message", "2GiB", "--max-message must be 1..2147483647 bytes, got 2147483648 (2.00 GiB)"},
            {"--memory-budget", "0", "--memory-budget must be 1.." + physical + " bytes (this machine's physical memory, "
                + ByteSize.format(physical) + "), got 0"},
        };
        for (String[] c : cases) {
            CommandRun r = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(20),
                    () -> CommandRun.execute(new ServeCommand(), root.toString(), c[0], c[1]));
            assertEquals(2, r.exitCode(), r.toString());
            assertEquals("gdsloader serve: " + c[2], r.err().lines().findFirst().orElse(""), String.join(" ", c) + ": " + r);
            assertTrue(r.out().isEmpty(), "nothing served: " + r);
        }
        ServeCommand largest = new ServeCommand(); // the top of each range is taken
        new picocli.CommandLine(largest).parseArgs(root.toString(), "--max-message", Integer.toString(Integer.MAX_VALUE),
                "--max-connections", Integer.toString(Integer.MAX_VALUE), "--idle-timeout", Integer.toString(Integer.MAX_VALUE));
        assertEquals(Integer.MAX_VALUE, largest.limits().maxMessageBytes());
        assertEquals(Integer.MAX_VALUE, largest.limits().connections());
    }

    @Test
    void aPortOutsideZeroTo65535IsRefusedNamingTheOption(@org.junit.jupiter.api.io.TempDir java.nio.file.Path root) {
        for (String port : new String[] {"70000", "-1"}) {
            CommandRun r = CommandRun.execute(new ServeCommand(), root.toString(), "--port", port);
            assertEquals(2, r.exitCode(), r.toString());
            assertEquals("gdsloader serve: --port must be 0..65535, got " + port, r.err().strip(), r.toString());
        }
    }

    @Test
    void moreSessionsPerClientThanOnTheServerIsRefusedNamingBoth(@org.junit.jupiter.api.io.TempDir java.nio.file.Path root) {
        CommandRun r = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(20), () -> CommandRun.execute(
                new ServeCommand(), root.toString(), "--max-sessions", "4", "--max-sessions-per-client", "8"));
        assertEquals(2, r.exitCode(), r.toString());
        assertEquals("gdsloader serve: --max-sessions-per-client 8 is more than --max-sessions 4: one client cannot have more "
                + "streams than the server", r.err().strip(), r.toString());
        CommandRun d = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(20), () -> CommandRun.execute(
                new ServeCommand(), root.toString(), "--max-sessions-per-client", "65"));
        assertEquals(2, d.exitCode(), d.toString());
        assertTrue(d.err().contains("--max-sessions-per-client 65 is more than --max-sessions 64 (its default)"), d.toString());
        ServeCommand equal = new ServeCommand();
        new picocli.CommandLine(equal).parseArgs(root.toString(), "--max-sessions", "4", "--max-sessions-per-client", "4");
        assertEquals(4, equal.limits().sessionsPerClient());
    }

    @Test
    void aMemoryBudgetOverThePhysicalMemoryIsRefusedNamingBothSizes(@org.junit.jupiter.api.io.TempDir java.nio.file.Path root) {
        long physical = dev.gdsloader.memory.NativeAllocator.hostMemoryBytes();
        CommandRun r = org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(Duration.ofSeconds(20), () -> CommandRun.execute(
                new ServeCommand(), root.toString(), "--memory-budget", "8000PiB"));
        assertEquals(2, r.exitCode(), r.toString());
        assertEquals("gdsloader serve: --memory-budget " + ByteSize.format(8000L << 50) + " (" + (8000L << 50) + " B) is more than this "
                + "machine's physical memory, " + ByteSize.format(physical) + " (" + physical + " B): the budget bounds the sessions' "
                + "host memory too (host and device each)", r.err().strip(), r.toString());
        assertTrue(r.out().isEmpty(), "nothing served: " + r);
        ServeCommand all = new ServeCommand();
        new picocli.CommandLine(all).parseArgs(root.toString(), "--memory-budget", Long.toString(physical));
        assertEquals(physical, all.limits().memoryBudget(), "all of the physical memory is allowed");
    }
}
