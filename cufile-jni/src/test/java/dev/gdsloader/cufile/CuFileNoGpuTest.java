package dev.gdsloader.cufile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.gdsloader.cuda.Cuda;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** cuFile on a machine without a GPU (and usually without libcufile): clean answers, no crash. */
class CuFileNoGpuTest {
    @TempDir
    Path dir;

    private static void assumeNoGpu() {
        assumeFalse(Cuda.availability().available(), "CUDA is available here; these tests are for machines without a GPU");
    }

    @Test
    void probeWithADirectoryIsUnavailableWithAReasonAndLeavesNoFiles() throws Exception {
        assumeNoGpu();
        CuFileStatus st = CuFileProbe.probe(Optional.of(dir));
        assertEquals(CuFileMode.UNAVAILABLE, st.mode());
        assertFalse(st.usable());
        assertTrue(st.reason().startsWith("no GPU: "), st.reason());
        assertTrue(st.reason().contains(Cuda.availability().reason()), st.reason());
        assertTrue(st.libraryVersion().isEmpty());
        assertTrue(st.properties().isEmpty());
        try (Stream<Path> s = Files.list(dir)) {
            assertEquals(0, s.count(), "no probe file is left in the data directory");
        }
    }

    @Test
    void probeWithoutADirectoryIsUnavailable() {
        assumeNoGpu();
        CuFileStatus st = CuFileProbe.probe(Optional.empty());
        assertEquals(CuFileMode.UNAVAILABLE, st.mode());
        assertFalse(st.reason().isBlank());
    }

    @Test
    void driverOpenFailsWithCuFileExceptionNamingTheGpuAndRepeatsTheSameFailure() {
        assumeNoGpu();
        CuFileException first = assertThrows(CuFileException.class, CuFileDriver::get);
        assertTrue(first.getMessage().contains("GPU"), first.getMessage());
        assertTrue(first.getMessage().contains(Cuda.availability().reason()), first.getMessage());
        CuFileException second = assertThrows(CuFileException.class, CuFileDriver::get);
        assertSame(first, second, "the open failure is remembered, not retried");
    }

    @Test
    void libraryLookupNeverThrowsAndIsStable() {
        CuFileLibrary lib = CuFileLibrary.get();
        assertSame(lib, CuFileLibrary.get());
        assertEquals(lib.isPresent(), lib.failure().isEmpty());
    }

    @Test
    void absentLibcufileIsReportedByItsSonameAndExportsNothing() {
        CuFileLibrary lib = CuFileLibrary.get();
        assumeFalse(lib.isPresent(), "libcufile is installed here");
        String why = lib.failure().orElseThrow();
        assertTrue(why.contains("libcufile.so.0"), why);
        assertFalse(lib.exports("cuFileRead"));
        assertFalse(lib.exports("cuFileDriverOpen"));
    }

    @Test
    void cuFileLogIsPointedAtTheTempDirectoryUnlessTheUserChoseOne() {
        assumeFalse(System.getenv("CUFILE_LOGFILE_PATH") != null, "CUFILE_LOGFILE_PATH set by the user");
        String log = CuFileLibrary.get().logPath().orElseThrow();
        assertTrue(log.startsWith(System.getProperty("java.io.tmpdir")), log);
        assertTrue(log.endsWith(".log"), log);
    }
}
