package dev.gdsloader.loader.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.HostRegistration;
import dev.gdsloader.cuda.MappedShards;
import dev.gdsloader.cuda.PinnedBuffer;
import dev.gdsloader.loader.gather.GatherKernel;
import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gather kernel alone, over a real registered mapping: entries of every alignment class (all 16-byte aligned,
 * source and destination equally misaligned, 4-byte aligned, neither) and lengths from 1 byte to 64 KiB land
 * byte-exact, and the bytes between them stay untouched.
 */
@Tag("gpu")
class MappedGatherGpuTest {
    @TempDir
    Path dir;

    @Test
    void everyAlignmentClassGathersByteExact() throws IOException {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        CudaDevice.makeCurrent(0);
        HostRegistration.Support s = HostRegistration.support(0);
        assumeTrue(s.readOnlyRegistration(), s::reason);
        Random rnd = new Random(42);
        byte[] file = new byte[4 << 20];
        rnd.nextBytes(file);
        Path f = Files.write(dir.resolve("data.bin"), file);
        List<long[]> entries = new ArrayList<>(); // {src offset, dst offset, length}
        long dst = 0;
        for (int i = 0; i < 3000; i++) {
            int kind = i % 4;
            long len = switch (kind) {
                case 0 -> 16L * (1 + rnd.nextInt(4096)); // 16-byte multiples up to 64 KiB
                case 1 -> 32 + rnd.nextInt(3000); // equally misaligned
                case 2 -> 4L * (1 + rnd.nextInt(500));
                default -> 1 + rnd.nextInt(200);
            };
            long src = switch (kind) {
                case 0 -> 16L * rnd.nextInt((int) ((file.length - len) / 16));
                case 2 -> 4L * rnd.nextInt((int) ((file.length - len) / 4));
                default -> rnd.nextInt((int) (file.length - len));
            };
            long at = switch (kind) {
                case 0 -> (dst + 15) & ~15L;
                case 1 -> ((dst + 15) & ~15L) + (src & 15);
                case 2 -> (dst + 3) & ~3L;
                default -> dst + 1;
            };
            entries.add(new long[] {src, at, len});
            dst = at + len + rnd.nextInt(3);
        }
        long outBytes = dst + 16;
        int n = entries.size();
        try (MappedShards.Lease lease = MappedShards.process().acquire(f);
             GatherKernel m = GatherKernel.load();
             DeviceBuffer out = DeviceBuffer.allocate(outBytes);
             DeviceBuffer dev = DeviceBuffer.allocate(24L * n);
             PinnedBuffer staged = PinnedBuffer.allocate(Math.max(24L * n, outBytes));
             CudaStream stream = CudaStream.create()) {
            out.fill(0);
            for (int i = 0; i < n; i++) {
                long[] e = entries.get(i);
                staged.segment().setAtIndex(ValueLayout.JAVA_LONG, 3L * i, lease.deviceAddress(e[0]));
                staged.segment().setAtIndex(ValueLayout.JAVA_LONG, 3L * i + 1, out.address() + e[1]);
                staged.segment().setAtIndex(ValueLayout.JAVA_LONG, 3L * i + 2, e[2]);
            }
            stream.copyToDevice(dev, 0, staged, 0, 24L * n);
            m.launchEntries(dev.address(), n, stream);
            stream.copyToHost(staged, 0, out, 0, outBytes);
            stream.synchronize();
            byte[] got = staged.segment().asSlice(0, outBytes).toArray(ValueLayout.JAVA_BYTE);
            byte[] want = new byte[(int) outBytes];
            for (long[] e : entries) {
                System.arraycopy(file, (int) e[0], want, (int) e[1], (int) e[2]);
            }
            for (int i = 0; i < want.length; i++) {
                if (got[i] != want[i]) {
                    fail("byte " + i + " of the output: " + got[i] + ", expected " + want[i]);
                }
            }
        }
        assertEquals(0, MappedShards.process().size());
    }
}
