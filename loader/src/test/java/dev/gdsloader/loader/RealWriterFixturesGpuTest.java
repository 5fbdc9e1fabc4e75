package dev.gdsloader.loader;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cufile.CuFileProbe;
import dev.gdsloader.cufile.CuFileStatus;
import dev.gdsloader.formats.fixtures.RealWriterFixtures;
import dev.gdsloader.loader.path.ReadPath;
import java.nio.file.Path;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * The real-writer fixtures in GPU memory: every column the loader accepts, loaded through BOUNCE and GDS, is
 * byte-identical on the device (downloaded) to what the HOST path delivers, and to the writer's values. Host-decoded
 * runs (compressed Arrow bodies, deflated {@code .npz} members) are refused by an explicit GDS, naming the run.
 */
@Tag("gpu")
class RealWriterFixturesGpuTest {
    /** A check of one column of one fixture. */
    @FunctionalInterface
    interface ColumnTest {
        void run(RealWriterFixtures.Column column) throws Exception;
    }

    @BeforeAll
    static void needsGpu() {
        assumeTrue(Cuda.availability().available(), () -> "no GPU: " + Cuda.availability().reason());
        CudaDevice.makeCurrent(0);
    }

    @TestFactory
    Stream<DynamicTest> bounceDeliversTheHostPathsBytesToTheDevice() {
        return RealWriterFixturesLoadTest.perColumn(c -> {
            assumeTrue(c.refusal().isEmpty(), () -> "refused, see RealWriterFixturesLoadTest: " + c.refusal().get());
            byte[] host = FixtureLoads.load(c.fixture(), c.name(), ReadPath.HOST);
            assertArrayEquals(c.littleEndianBytes(), host);
            assertArrayEquals(host, FixtureLoads.load(c.fixture(), c.name(), ReadPath.BOUNCE), c.fixture() + " " + c.name());
        });
    }

    @TestFactory
    Stream<DynamicTest> gdsDeliversTheHostPathsBytesToTheDeviceOrRefusesHostDecodedRuns() {
        return RealWriterFixturesLoadTest.perColumn(c -> {
            assumeTrue(c.refusal().isEmpty(), () -> "refused, see RealWriterFixturesLoadTest: " + c.refusal().get());
            Path f = c.fixture();
            if (FixtureLoads.hostDecoded(FixtureLoads.open(f, c.name()))) {
                IllegalStateException x = assertThrows(IllegalStateException.class,
                        () -> FixtureLoads.load(f, c.name(), ReadPath.GDS));
                assertTrue(x.getMessage().startsWith("GDS path cannot read host-decoded data (cuFile reads file bytes as "
                        + "stored): HOST-DECODE: " + f), x.getMessage());
                return;
            }
            CuFileStatus st = CuFileProbe.probe(Optional.of(f.getParent()));
            assumeTrue(st.usable(), () -> "cuFile unusable here: " + st.reason());
            byte[] host = FixtureLoads.load(f, c.name(), ReadPath.HOST);
            assertArrayEquals(host, FixtureLoads.load(f, c.name(), ReadPath.GDS), f + " " + c.name());
        });
    }
}
