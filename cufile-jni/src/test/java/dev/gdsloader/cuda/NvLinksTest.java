package dev.gdsloader.cuda;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** NVLink counting from NVML's answers (given here), and that querying never throws where NVML is missing. */
class NvLinksTest {
    private static final String G0 = "00000000:18:00.0";
    private static final String G1 = "00000000:2A:00.0";

    @Test
    void directLinksAreCountedPerPeer() {
        NvLinks.Result r = new NvLinks.Result(Map.of(G0, List.of("0000:2a:00.0", "0000:2a:00.0", "0000:2a:00.0"),
                G1, List.of("0000:18:00.0", "0000:18:00.0", "0000:18:00.0")), "");
        assertEquals(3, r.linksBetween(G0, G1));
        assertEquals(3, r.linksBetween(G1, "0000:18:00.0"));
        assertEquals(0, r.linksBetween(G0, "0000:99:00.0"));
    }

    @Test
    void linksThroughSharedNvSwitchesCountAsNvidiaSmiCountsThem() {
        // each GPU: 18 links spread over 4 NVSwitches (5 + 4 + 5 + 4), as on HGX H100/H200
        List<String> switches = List.of("0000:c1:00.0", "0000:c2:00.0", "0000:c3:00.0", "0000:c4:00.0");
        java.util.ArrayList<String> links = new java.util.ArrayList<>();
        for (int i = 0; i < 18; i++) {
            links.add(switches.get(i % 4));
        }
        NvLinks.Result r = new NvLinks.Result(Map.of(G0, links, G1, links), "");
        assertEquals(18, r.linksBetween(G0, G1));
        NvLinks.Result apart = new NvLinks.Result(Map.of(G0, links, G1, Collections.nCopies(18, "0000:d1:00.0")), "");
        assertEquals(0, apart.linksBetween(G0, G1), "switches the other GPU does not reach");
    }

    @Test
    void queryNeverThrowsAndSaysWhyWhereNvmlCannotAnswer() {
        NvLinks.Result r = NvLinks.query(List.of("0000:00:00.0"));
        if (r.links().isEmpty()) {
            assertFalse(r.note().isEmpty(), "empty links need a reason");
        }
        assertTrue(r.linksBetween("0000:00:00.0", "0000:01:00.0") >= 0);
    }
}
