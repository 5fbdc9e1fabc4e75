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

/** cuFile on a real GPU; skipped where there is none or where cuFile cannot be used at all. */
@Tag("gpu")
class CuFileGpuTest {
    @TempDir
    Path dir;

    @BeforeAll
    static void needsGpuAndCuFile() {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        CudaDevice.makeCurrent(0);
        CuFileStatus st = CuFileProbe.probe(Optional.empty());
        assumeTrue(st.usable(), () -> "cuFile unusable: " + st.reason());
    }

    private static byte[] download(DeviceBuffer dev, long offset, int n) {
        try (PinnedBuffer host = PinnedBuffer.allocate(n); CudaStream s = CudaStream.create()) {
            s.copyToHost(host, 0, dev, offset, n);
            s.synchronize();
            return host.segment().toArray(ValueLayout.JAVA_BYTE);
        }
    }

    @Test
    void probeOnTheTestDirectoryIsUsableAndNamesItsMode() throws IOException {
        CuFileStatus st = CuFileProbe.probe(Optional.of(dir));
        assertTrue(st.usable(), st.reason());
        assertTrue(st.reason().length() > 10);
        assertTrue(CuFileDriver.get().properties().maxDirectIoBytes() > 0);
    }

    @Test
    void readsLandByteExactInDeviceMemoryAlignedAndNot() throws IOException {
        byte[] data = new byte[(5 << 20) + 777];
        new Random(3).nextBytes(data);
        Path f = Files.write(dir.resolve("shard.bin"), data);
        try (CuFileHandle h = CuFileHandle.register(f);
             DeviceBuffer dev = DeviceBuffer.allocate(8 << 20);
             CuFileBufferRegistration reg = CuFileBufferRegistration.register(dev)) {
            assertEquals(8 << 20, reg.bytes(), "the whole device buffer is registered for the reads below");
            assertEquals(4 << 20, h.read(dev, 0, 4 << 20, 4096));
            assertArrayEquals(Arrays.copyOfRange(data, 4096, 4096 + (4 << 20)), download(dev, 0, 4 << 20));
            assertEquals(1000, h.read(dev, 123, 1000, 4097));
            assertArrayEquals(Arrays.copyOfRange(data, 4097, 5097), download(dev, 123, 1000));
            long tail = h.read(dev, 0, 1 << 20, data.length - 777);
            assertEquals(777, tail, "a read past end of file returns the bytes that exist");
            assertArrayEquals(Arrays.copyOfRange(data, data.length - 777, data.length), download(dev, 0, 777));
        }
    }

    @Test
    void readOutsideTheDeviceBufferIsRefusedWithoutCallingCuFile() throws IOException {
        Path f = Files.write(dir.resolve("small.bin"), new byte[8192]);
        try (CuFileHandle h = CuFileHandle.register(f); DeviceBuffer dev = DeviceBuffer.allocate(4096)) {
            IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, () -> h.read(dev, 0, 8192, 0));
            assertTrue(e.getMessage().contains("small.bin"), e.getMessage());
        }
    }

    @Test
    void tmpfsFilesReadByteExactOrFailNamingTheFilesystem() throws IOException {
        Path shm = Path.of("/dev/shm");
        assumeTrue(Files.isDirectory(shm), "no /dev/shm");
        Path f = Files.createTempFile(shm, "gdsloader-test-", ".bin");
        try {
            byte[] data = new byte[3 * 4096];
            new Random(5).nextBytes(data);
            Files.write(f, data);
            CuFileHandle h;
            try {
                h = CuFileHandle.register(f);
            } catch (CuFileException e) {
                // libcufile 1.15 refuses tmpfs files (no block device to classify): the message must say so
                assertTrue(e.getMessage().contains("tmpfs") && e.getMessage().contains(f.toString()), e.getMessage());
                return;
            }
            try (h; DeviceBuffer dev = DeviceBuffer.allocate(data.length)) {
                assertTrue(!h.isDirect(), "tmpfs refuses O_DIRECT, so the handle is buffered");
                assertEquals(data.length, h.read(dev, 0, data.length, 0));
                assertArrayEquals(data, download(dev, 0, data.length));
            }
        } finally {
            Files.deleteIfExists(f);
        }
    }

    @Test
    void handlesAndRegistrationsAreCountedAndReleasedOnce() throws IOException {
        Path f = Files.write(dir.resolve("count.bin"), new byte[4096]);
        int before = CuFileDriver.get().liveRegistrations();
        CuFileHandle h = CuFileHandle.register(f);
        assertEquals(before + 1, CuFileDriver.get().liveRegistrations());
        h.close();
        h.close();
        assertEquals(before, CuFileDriver.get().liveRegistrations());
    }
}
