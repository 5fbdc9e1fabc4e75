package dev.gdsloader.cufile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.gdsloader.cuda.Cuda;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The parts of the cuFileReadAsync binding that need no GPU: the parameter block, symbol checks, refusals. */
class AsyncReadHostTest {
    @Test
    void parameterBlockHoldsTheInputsAndMarksBytesReadUnwritten() {
        try (AsyncReadParams p = new AsyncReadParams()) {
            p.set(4 << 20, 8192, 4096);
            assertEquals(4 << 20, p.get(AsyncReadParams.SIZE));
            assertEquals(8192, p.get(AsyncReadParams.FILE_OFFSET));
            assertEquals(4096, p.get(AsyncReadParams.BUF_OFFSET));
            assertEquals(AsyncReadParams.NOT_WRITTEN, p.get(AsyncReadParams.BYTES_READ));
        }
    }

    @Test
    void parameterWordsAreFourConsecutiveEightByteAlignedWords() {
        try (AsyncReadParams p = new AsyncReadParams()) {
            long base = p.address(AsyncReadParams.SIZE);
            assertEquals(0, base % Long.BYTES, "size_t and off_t words must be naturally aligned");
            assertEquals(base + 8, p.address(AsyncReadParams.FILE_OFFSET));
            assertEquals(base + 16, p.address(AsyncReadParams.BUF_OFFSET));
            assertEquals(base + 24, p.address(AsyncReadParams.BYTES_READ));
        }
    }

    @Test
    void parameterBlockIsFreedOnceAndRefusesUseAfterward() {
        AsyncReadParams p = new AsyncReadParams();
        p.set(1, 2, 3);
        p.close();
        assertTrue(p.isClosed());
        p.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> p.get(AsyncReadParams.BYTES_READ));
        assertTrue(e.getMessage().contains("freed"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> p.address(AsyncReadParams.SIZE));
        assertThrows(IllegalStateException.class, () -> p.set(1, 2, 3));
    }

    @Test
    void aLibraryWithoutTheStreamApiIsNamedBeforeAnyCall() {
        Optional<String> none = CuFileStream.missingSymbol(s -> false);
        assertTrue(none.orElseThrow().contains("does not export cuFileStreamRegister"), none.toString());
        Set<String> old = Set.of("cuFileStreamRegister", "cuFileStreamDeregister");
        String m = CuFileStream.missingSymbol(old::contains).orElseThrow();
        assertTrue(m.contains("cuFileReadAsync") && m.contains("CUDA 12.2"), m);
        assertEquals(Optional.empty(), CuFileStream.missingSymbol(s -> true));
    }

    @Test
    void unknownStreamFlagsAreRefusedBeforeCuFileIsTouched() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> CuFileStream.register(null, 16));
        assertTrue(e.getMessage().contains("16"), e.getMessage());
        assertEquals(7, CuFileStream.FIXED_AT_ENQUEUE);
    }

    @Test
    void withoutAGpuRegisteringAStreamIsACuFileExceptionNamingTheGpu() {
        assumeFalse(Cuda.availability().available(), "CUDA is available here");
        CuFileException e = assertThrows(CuFileException.class, () -> CuFileStream.register(null, 0));
        assertTrue(e.getMessage().contains("GPU"), e.getMessage());
    }
}
