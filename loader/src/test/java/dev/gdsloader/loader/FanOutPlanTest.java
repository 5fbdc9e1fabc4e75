package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.gdsloader.loader.FanOutPlan.Way;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which way each member of a device group gets its copy, and the one line that says why. */
class FanOutPlanTest {
    @Test
    void groupsAreCheckedAsGiven() {
        assertEquals(List.of(1, 0), FanOutPlan.checkGroup(1, 0));
        assertThrows(IllegalArgumentException.class, FanOutPlan::checkGroup);
        assertEquals("deviceGroup: GPU 1 is named twice in [1, 0, 1]",
                assertThrows(IllegalArgumentException.class, () -> FanOutPlan.checkGroup(1, 0, 1)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> FanOutPlan.checkGroup(0, -1));
        assertThrows(IllegalArgumentException.class, () -> FanOutPlan.checkGroup(new int[65]));
    }

    @Test
    void peersBothWaysCopyPeerToPeerOthersThroughPinnedMemory() {
        // GPU 0 and 1 are peers both ways; 2 can reach 0 but not the reverse; 3 is no peer of 0
        Set<String> peers = Set.of("0>1", "1>0", "2>0", "0>3x");
        FanOutPlan p = FanOutPlan.plan(List.of(0, 1, 2, 3), true, (a, b) -> peers.contains(a + ">" + b));
        assertEquals(List.of(Way.FIRST, Way.PEER, Way.HOST_STAGED, Way.HOST_STAGED), p.ways());
        assertTrue(p.staged());
        assertEquals("device group [0, 1, 2, 3]: each batch is read once into GPU 0's slot; GPU 1 by peer copy "
                + "(cudaDeviceCanAccessPeer both ways); GPU 2 through pinned host memory (cudaDeviceCanAccessPeer(0, 2) is "
                + "false); GPU 3 through pinned host memory (cudaDeviceCanAccessPeer(3, 0) is false)", p.reason());
    }

    @Test
    void allPeersStageNothing() {
        FanOutPlan p = FanOutPlan.plan(List.of(1, 0), true, (a, b) -> true);
        assertEquals(List.of(Way.FIRST, Way.PEER), p.ways());
        assertFalse(p.staged());
        assertTrue(p.reason().startsWith("device group [1, 0]: each batch is read once into GPU 1's slot"), p.reason());
    }

    @Test
    void theHostPathSharesTheSlotAndNeverAsksCuda() {
        FanOutPlan p = FanOutPlan.plan(List.of(0, 1, 2), false, (a, b) -> {
            throw new AssertionError("peer access asked on the host path");
        });
        assertEquals(List.of(Way.FIRST, Way.SHARED_HOST, Way.SHARED_HOST), p.ways());
        assertFalse(p.staged());
        assertTrue(p.reason().endsWith("host path: every member reads the one host slot, no copy"), p.reason());
    }

    @Test
    void aGroupOfOneIsAPlainLoader() {
        FanOutPlan p = FanOutPlan.plan(List.of(3), true, (a, b) -> {
            throw new AssertionError("a group of one has no peers");
        });
        assertEquals(List.of(Way.FIRST), p.ways());
        assertEquals("device group of one (GPU 3): a plain loader", p.reason());
    }
}
