package dev.gdsloader.service;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.formats.DType;
import dev.gdsloader.formats.npy.NpyWriter;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.service.client.PrefetchClient;
import dev.gdsloader.service.client.PrefetchServiceException;
import dev.gdsloader.service.client.RemoteBatch;
import dev.gdsloader.service.server.PrefetchServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Arrays;
import org.apache.arrow.flight.FlightStatusCode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 21, findings 1 and 2, re-run on a real server on loopback with real files: a shard swapped after
 * {@code GetFlightInfo} (for a link to a file outside the root, for another regular file, or with a directory of its
 * path swapped for a link) is refused when the loader opens it, naming the shard, and nothing outside the root is
 * served; a hard link under the root to a file outside is refused unless the server allows hard links. The file
 * outside is a valid shard of the same shape holding {@link #SECRET} bytes, so a served byte of it would show.
 */
@Timeout(120)
class SwappedFilesTest extends ServiceTestBase {
    /** Every byte of the outside shard; no record of the dataset is all of them. */
    private static final byte SECRET = 0x5A;

    @TempDir
    Path outside;

    /** @return a valid {@code .npy} outside the root with the shape of {@code train}'s last x shard, all {@link #SECRET} */
    private Path outsideShard() throws IOException {
        int n = SHARDS[2];
        byte[] b = new byte[n * ServiceShards.X_BYTES];
        Arrays.fill(b, SECRET);
        Path f = outside.resolve("x-00002.npy");
        NpyWriter.write(f, DType.UINT8, new long[] {n, ServiceShards.X_BYTES}, b);
        return f;
    }

    private PrefetchClient open(PrefetchServer s, String dataset) {
        // prefetch depth 2 of batches of 4: the last shard (records 87..99) is opened long after GetFlightInfo. No
        // reconnect: a resumed stream is a fresh request, checked anew (it may serve a file replaced inside the root)
        return PrefetchClient.builder("127.0.0.1", s.port()).dataset(dataset).batchSize(4).prefetchDepth(2)
                .path(ReadPath.HOST).timeout(Duration.ofSeconds(30)).reconnectTimeout(Duration.ZERO).open();
    }

    /**
     * Reads the epoch of an open client, each batch checked against the dataset's own bytes (a byte of the outside
     * shard fails it); @return the error that ended it
     */
    private static PrefetchServiceException readUntilRefused(PrefetchClient c) {
        return assertThrows(PrefetchServiceException.class, () -> {
            for (RemoteBatch b : c) {
                try (b) {
                    byte[] x = b.column("x").toByteArray();
                    assertFalse(allSecret(x), "bytes of the file outside the root were served in " + b);
                    checkBytes(b);
                }
            }
        }, "the swapped shard was read");
    }

    private static boolean allSecret(byte[] x) {
        for (byte v : x) {
            if (v != SECRET) {
                return false;
            }
        }
        return x.length > 0;
    }

    /** The refusal names the shard relative to the root, and neither the root's nor the outside file's path. */
    private void assertNamesTheShard(String m, String shard, String why) throws IOException {
        assertTrue(m.contains(shard) && m.contains("refused") && m.contains(why), m);
        assertFalse(m.contains(root.toRealPath().toString()) || m.contains(outside.toRealPath().toString()), m);
    }

    @Test
    void aLinkSwappedInAfterGetFlightInfoIsRefusedAndNothingOutsideIsServed() throws Exception {
        Path secret = outsideShard();
        Path shard = root.resolve("train/x-00002.npy");
        try (PrefetchClient c = open(server, "train")) {
            Files.delete(shard);
            Files.createSymbolicLink(shard, secret);
            PrefetchServiceException e = readUntilRefused(c);
            assertNamesTheShard(e.getMessage(), "train/x-00002.npy", "symbolic link");
        }
        awaitSessions(0);
        // a fresh request is refused at once, as before
        var fresh = assertThrows(PrefetchServiceException.class, () -> open(server, "train").close());
        assertEquals(FlightStatusCode.UNAUTHORIZED, fresh.code(), fresh.getMessage());
    }

    @Test
    void anotherRegularFilePutInPlaceAfterTheCheckIsRefusedNamingIt() throws Exception {
        Path other = outsideShard();
        Path shard = root.resolve("train/x-00002.npy");
        try (PrefetchClient c = open(server, "train")) {
            Path tmp = root.resolve("train/incoming.tmp");
            Files.copy(other, tmp);
            Files.move(tmp, shard, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            PrefetchServiceException e = readUntilRefused(c);
            assertNamesTheShard(e.getMessage(), "train/x-00002.npy", "not the file checked when the dataset was planned");
        }
        awaitSessions(0);
    }

    @Test
    void aDirectorySwappedForALinkInTheMiddleOfAShardsPathIsRefused() throws Exception {
        ServiceShards.write(root.resolve("nested/sub"), SHARDS);
        try (PrefetchClient c = open(server, "nested/sub")) {
            // the same files, now reached through a link: the checked path has a link in its middle
            Files.move(root.resolve("nested"), root.resolve("moved"));
            Files.createDirectories(root.resolve("nested"));
            Files.createSymbolicLink(root.resolve("nested/sub"), root.resolve("moved/sub"));
            PrefetchServiceException e = readUntilRefused(c);
            // the first shard opened after the swap: x or y of any shard (shards open when a batch first reads them)
            String m = e.getMessage();
            assertTrue(m.matches(".*nested/sub/[xy]-0000[0-2]\\.npy.*"), m);
            assertNamesTheShard(m, "nested/sub/", "symbolic link");
        }
        awaitSessions(0);
    }

    @Test
    void aHardLinkToAFileOutsideIsRefusedUnlessTheServerAllowsHardLinks() throws Exception {
        Path secret = outsideShard();
        ServiceShards.write(root.resolve("linked"), SHARDS);
        Path shard = root.resolve("linked/x-00002.npy");
        Files.delete(shard);
        Files.createLink(shard, secret); // both temporary directories lie on one filesystem
        var e = assertThrows(PrefetchServiceException.class, () -> open(server, "linked").close());
        assertEquals(FlightStatusCode.UNAUTHORIZED, e.code(), e.getMessage());
        assertNamesTheShard(e.getMessage(), "linked/x-00002.npy", "--allow-hard-links");
        awaitSessions(0);
        try (PrefetchServer allowing = PrefetchServer.builder(root).allowHardLinks().start();
             PrefetchClient c = open(allowing, "linked")) {
            long secretRecords = 0;
            for (RemoteBatch b : c) {
                try (b) {
                    byte[] x = b.column("x").toByteArray();
                    long[] rec = b.recordIndices();
                    for (int i = 0; i < rec.length; i++) {
                        byte[] got = Arrays.copyOfRange(x, i * ServiceShards.X_BYTES, (i + 1) * ServiceShards.X_BYTES);
                        if (rec[i] >= SHARDS[0] + SHARDS[1]) { // the hard-linked shard: served as asked
                            assertTrue(allSecret(got), "record " + rec[i]);
                            secretRecords++;
                        } else {
                            assertArrayEquals(ServiceShards.record("x", rec[i]), got, "record " + rec[i]);
                        }
                    }
                }
            }
            assertEquals(SHARDS[2], secretRecords);
        }
    }
}
