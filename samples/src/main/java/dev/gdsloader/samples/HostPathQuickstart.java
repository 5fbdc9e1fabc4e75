package dev.gdsloader.samples;

import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.path.ReadPath;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;

/** One epoch on the host path, no GPU needed (README.md's example): {@code HostPathQuickstart DATASET_DIR}. */
public final class HostPathQuickstart {
    /** @param args the directory of a dataset with a column "data" (gdsloader generate makes one) */
    public static void main(String[] args) throws Exception {
        long records = 0;
        long sum = 0;
        try (GdsLoader loader = GdsLoader.builder(Path.of(args[0]))  // batch size: 256 records unless set
                .path(ReadPath.HOST)                                   // read into host memory: no CUDA
                .build()) {
            for (Batch batch : loader) {                               // one epoch
                MemorySegment data = batch.column("data").hostSegment();  // uint8 [records, recordBytes]
                for (long i = 0; i < data.byteSize(); i++) {
                    sum += Byte.toUnsignedLong(data.get(ValueLayout.JAVA_BYTE, i));
                }
                records += batch.records();
                batch.close();                                         // the loader may refill its slot now
            }
        }
        System.out.println(records + " records, byte sum " + sum);
    }
}
