package dev.gdsloader.service;

import dev.gdsloader.memory.NativeAllocator;
import dev.gdsloader.service.server.PrefetchServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;


/**
 * A server that cannot listen says so in one line naming the address, the port and why: an unknown host, an address
 * that is not this machine's, a port in use (a real listening socket on loopback); and it leaves nothing behind.
 */
@Timeout(60)
class ServerBindErrorsTest {
    @TempDir
    Path root;

    private IOException refused(String bind, int port) {
        return assertThrows(IOException.class, () -> PrefetchServer.builder(root).bind(bind).port(port).start().close());
    }

    @Test
    void anUnknownHostIsNamedAsSuch() {
        assertEquals("cannot listen on garbage.invalid:0: unknown host 'garbage.invalid' (no such name or address)",
                refused("garbage.invalid", 0).getMessage());
    }

    @Test
    void anAddressOfAnotherMachineIsNamedAsSuch() {
        // 192.0.2.1: TEST-NET-1 (RFC 5737), documentation only, never an address of this machine
        assertEquals("cannot listen on 192.0.2.1:0: 192.0.2.1 is not an address of this machine (Cannot assign requested address)",
                refused("192.0.2.1", 0).getMessage());
    }

    @Test
    void aPortInUseIsNamedAsSuchAndTheServerLeavesNothingBehind() throws IOException {
        long before = NativeAllocator.root().outstandingBytes();
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            int port = taken.getLocalPort();
            assertEquals("cannot listen on 127.0.0.1:" + port + ": port " + port + " is in use (Address already in use)",
                    refused("127.0.0.1", port).getMessage());
        }
        assertEquals(before, NativeAllocator.root().outstandingBytes());
    }
}
