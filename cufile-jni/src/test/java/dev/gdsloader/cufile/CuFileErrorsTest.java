package dev.gdsloader.cufile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Names of cuFile error codes and of cuFileRead's negative return values. */
class CuFileErrorsTest {

    @Test
    void handleNotRegisteredIsNamed() {
        assertEquals("CU_FILE_HANDLE_NOT_REGISTERED (5027)", CuFileErrors.describe(5027));
        assertEquals(5027, CuFileErrors.HANDLE_NOT_REGISTERED);
    }

    @Test
    void successIsNamed() {
        assertEquals("CU_FILE_SUCCESS (0)", CuFileErrors.describe(0));
    }

    @Test
    void ioReturnOfMinusCuFileCodeIsNamedAsTheCuFileError() {
        assertEquals("CU_FILE_IO_ERROR (5044)", CuFileErrors.describeIoReturn(-5044));
        // cufile.h: CU_FILE_DRIVER_NOT_INITIALIZED = 5001, CU_FILE_INVALID_VALUE = 5022
        assertEquals("CU_FILE_DRIVER_NOT_INITIALIZED (5001)", CuFileErrors.describe(5001));
        assertEquals("CU_FILE_INVALID_VALUE (5022)", CuFileErrors.describe(5022));
    }

    @Test
    void ioReturnOfMinusCuFileCodeNamesTheCodeAtLeastByNumber() {
        String d = CuFileErrors.describeIoReturn(-5044);
        assertTrue(d.endsWith("(5044)"), d);
        assertTrue(d.startsWith("CU"), d);
    }

    @Test
    void ioReturnOfMinusErrnoIsNamedAsTheErrno() {
        assertEquals("EIO (5)", CuFileErrors.describeIoReturn(-5));
        assertEquals("EINVAL (22)", CuFileErrors.describeIoReturn(-22));
    }

    @Test
    void ioReturnOfMinusOneSaysErrnoWasSet() {
        String d = CuFileErrors.describeIoReturn(-1);
        assertTrue(d.startsWith("-1"), d);
        assertTrue(d.contains("errno"), d);
    }

    @Test
    void unknownCodesKeepTheirNumber() {
        assertEquals("CUfileOpError (4999)", CuFileErrors.describe(4999));
        assertTrue(CuFileErrors.describe(5999).endsWith("(5999)"));
    }
}
