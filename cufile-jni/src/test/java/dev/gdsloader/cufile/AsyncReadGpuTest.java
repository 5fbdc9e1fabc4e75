package dev.gdsloader.cufile;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.PinnedBuffer;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * cuFileReadAsync on a registered stream, on a real GPU; skipped where there is none, where cuFile cannot be
 * used, or where libcufile lacks the stream API (the skip says which).
 */
@Tag("gpu")
class AsyncReadGpuTest {
    @TempDir
    Path dir;

    @BeforeAll
    static void needsGpuCuFileAndTheStreamApi() {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        CudaDevice.makeCurrent(0);
        CuFileStatus st = CuFileProbe.probe(Optional.empty());
        assumeTrue(st.usable(), () -> "cuFile unusable: " + st.reason());
        Optional<String> missing = CuFileStream.unavailableReason();
        assumeTrue(missing.isEmpty(), () -> missing.orElse(""));
    }

    private static byte[] download(CudaStream s, DeviceBuffer dev, long offset, int n) {
        try (PinnedBuffer host = PinnedBuffer.allocate(n)) {
            s.copyToHost(host, 0, dev, offset, n);
            s.synchronize();
            return host.segment().toArray(ValueLayout.JAVA_BYTE);
        }
    }

    private Path file(byte[] data) throws IOException {
        new Random(data.length).nextBytes(data);
        return Files.write(dir.resolve("shard-" + data.length + ".bin"), data);
    }

    private void readsByteExact(int flags) throws IOException {
        byte[] data = new byte[(5 << 20) + 777];
        Path f = file(data);
        try (CudaStream s = CudaStream.create(); CuFileHandle h = CuFileHandle.register(f);
             DeviceBuffer dev = DeviceBuffer.allocate(8 << 20);
             CuFileBufferRegistration reg = CuFileBufferRegistration.register(dev);
             CuFileStream cs = CuFileStream.register(s, flags);
             AsyncRead a = AsyncRead.on(cs); AsyncRead b = AsyncRead.on(cs)) {
            assertEquals(8 << 20, reg.bytes(), "the whole device buffer is registered for the reads below");
            a.start(h, dev, 0, 4 << 20, 4096);
            b.start(h, dev, 5 << 20, 1000, 4097);
            assertEquals(1000, b.await());
            assertTrue(a.isDone(), "reads on one stream complete in order");
            assertEquals(4 << 20, a.bytesRead());
            assertEquals(4 << 20, a.await());
            assertArrayEquals(Arrays.copyOfRange(data, 4096, 4096 + (4 << 20)), download(s, dev, 0, 4 << 20));
            assertArrayEquals(Arrays.copyOfRange(data, 4097, 5097), download(s, dev, 5 << 20, 1000));
            a.start(h, dev, 123, 1 << 20, data.length - 777);
            assertEquals(777, a.await(), "a read past end of file returns the bytes that exist");
            assertArrayEquals(Arrays.copyOfRange(data, data.length - 777, data.length), download(s, dev, 123, 777));
        }
    }

    @Test
    void readsLandByteExactInDeviceMemory() throws IOException {
        readsByteExact(0);
    }

    @Test
    void readsLandByteExactWithTheFixedAtEnqueueFlags() throws IOException {
        readsByteExact(CuFileStream.FIXED_AT_ENQUEUE);
    }

    @Test
    void aReadStartingPastEndOfFileGivesNoBytesOrADecodedErrorAndTheReadIsReusable() throws IOException {
        byte[] data = new byte[3 * 4096];
        Path f = file(data);
        try (CudaStream s = CudaStream.create(); CuFileHandle h = CuFileHandle.register(f);
             DeviceBuffer dev = DeviceBuffer.allocate(1 << 20);
             CuFileStream cs = CuFileStream.register(s, 0); AsyncRead a = AsyncRead.on(cs)) {
            try {
                a.start(h, dev, 0, 4096, 1L << 40);
                assertEquals(0, a.await(), "past end of file: nothing read");
            } catch (CuFileException e) {
                // refused at enqueue (a CUfileOpError) or failed on the stream (negative bytes_read): named either way
                assertTrue(e.getMessage().contains(f.getFileName().toString()) && e.getMessage().contains("cuFileReadAsync")
                        && e.code() != 0 && !e.getMessage().contains("without writing bytes_read"), e.getMessage());
            }
            a.start(h, dev, 0, data.length, 0);
            assertEquals(data.length, a.await());
            assertArrayEquals(data, download(s, dev, 0, data.length));
        }
    }

    @Test
    void aReadOutsideTheDeviceBufferIsRefusedBeforeCuFileAndEnqueuesNothing() throws IOException {
        Path f = file(new byte[8192]);
        try (CudaStream s = CudaStream.create(); CuFileHandle h = CuFileHandle.register(f);
             DeviceBuffer dev = DeviceBuffer.allocate(4096);
             CuFileStream cs = CuFileStream.register(s, 0); AsyncRead a = AsyncRead.on(cs)) {
            IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, () -> a.start(h, dev, 0, 8192, 0));
            assertTrue(e.getMessage().contains(f.getFileName().toString()), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> a.start(h, dev, 0, 4096, -1));
            assertThrows(IllegalStateException.class, a::bytesRead, "nothing was started");
            assertTrue(a.isDone());
        }
    }

    @Test
    void closingWhileAReadIsInFlightWaitsAndFreesOnceAndTheRegistrationsAreCounted() throws IOException {
        byte[] data = new byte[16 << 20];
        Path f = file(data);
        int before = CuFileDriver.get().liveRegistrations();
        try (CudaStream s = CudaStream.create(); CuFileHandle h = CuFileHandle.register(f);
             DeviceBuffer dev = DeviceBuffer.allocate(data.length)) {
            CuFileStream cs = CuFileStream.register(s, 0);
            assertEquals(before + 2, CuFileDriver.get().liveRegistrations());
            AsyncRead a = AsyncRead.on(cs);
            a.start(h, dev, 0, data.length, 0);
            a.close();
            a.close();
            assertTrue(a.isClosed());
            assertThrows(IllegalStateException.class, a::await);
            assertArrayEquals(data, download(s, dev, 0, data.length), "the read ran to its end before the block was freed");
            cs.close();
            cs.close();
            assertThrows(IllegalStateException.class, () -> AsyncRead.on(cs));
        }
        assertEquals(before, CuFileDriver.get().liveRegistrations());
    }
}
