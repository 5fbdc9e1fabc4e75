package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.gdsloader.cuda.MappedShards;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The MAPPED registry's linger, asked for through the loader's API, is the process registry's (no GPU needed). */
class MappedRegistrationsTest {
    @Test
    void aRequestSetsTheProcessLingerUntilClosed() {
        Duration before = MappedShards.process().linger();
        try (MappedShards.LingerRequest r = MappedRegistrations.requestLinger(Duration.ofHours(7))) {
            assertEquals(Duration.ofHours(7), r.linger());
            assertEquals(Duration.ofHours(7), MappedShards.process().linger());
        }
        assertEquals(before, MappedShards.process().linger());
    }

    @Test
    void aNegativeLingerIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MappedRegistrations.requestLinger(Duration.ofSeconds(-1)));
        assertEquals("registration linger must be >= 0, got PT-1S", e.getMessage());
    }
}
