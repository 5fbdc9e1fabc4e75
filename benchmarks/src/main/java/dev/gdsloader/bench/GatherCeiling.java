package dev.gdsloader.bench;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.cuda.DeviceBuffer;
import dev.gdsloader.cuda.MappedShards;
import dev.gdsloader.cuda.PinnedBuffer;
import dev.gdsloader.formats.RecordLayout;
import dev.gdsloader.loader.gather.GatherKernel;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.StandardOpenOption;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The gather ceiling of this machine for one record size, measured in the benchmark's own run: a plain
 * {@link GatherKernel} reading records in a random order straight from host memory the device can read (pinned
 * memory from {@code cudaHostAlloc}, read by the kernel over the link through its device-side address: no copy
 * engine, no CPU copy) into device memory, a batch per launch, every record of the source once per epoch, the
 * launches writing as many batch buffers in turn as the compared loader has slots ({@link Result#destinations()}). It
 * is what a loader gathering shuffled records from registered host memory can at best reach. Stateless; each call
 * owns and frees its buffers.
 */
public final class GatherCeiling {
    /** The default host source: 1 GiB, or the data's size when smaller. */
    public static final long DEFAULT_SOURCE_BYTES = 1L << 30;
    /** Epochs are repeated until the timed part has run this long (at least one epoch). */
    private static final long MIN_NANOS = 300_000_000L;
    private static final int MAX_EPOCHS = 50;

    private GatherCeiling() {
    }

    /**
     * What one measurement found.
     *
     * @param recordBytes bytes per record
     * @param sourceRecords records in the host source (each gathered once per epoch)
     * @param batchRecords records per launch
     * @param epochs epochs timed
     * @param gigabytesPerSecond gathered record bytes per second over the timed epochs, GB/s (1e9 bytes/s)
     * @param recordsPerSecond records gathered per second
     * @param byteExact whether the last batch's device bytes equal their source records (copied back and compared)
     * @param destinations device buffers of one batch the launches write in turn (launch {@code b} of an epoch into
     *     buffer {@code b % destinations}): 1 writes every batch over the last, which the GPU's L2 cache then holds;
     *     a loader writes each batch into its own slot of a ring of prefetch-depth slots. On the H200, 784-byte records
     *     gathered from the registered page cache into one 16 MiB buffer ran at 33.7 GB/s, into four in turn at 26.3
     *     GB/s (session 6, one run): compare a loader with a ceiling of as many buffers as it has slots
     */
    public record Result(long recordBytes, long sourceRecords, int batchRecords, int epochs, double gigabytesPerSecond,
                         double recordsPerSecond, boolean byteExact, int destinations) {
    }

    /**
     * Measures the gather ceiling on the current device.
     *
     * @param recordBytes bytes per record, &gt; 0
     * @param batchRecords records per kernel launch, &gt; 0 (capped at the source's records)
     * @param sourceBytes size of the host source, at least one record (rounded down to whole records)
     * @param seed seed of the random order
     * @param destinations batch buffers written in turn, &gt;= 1 (the compared loader's prefetch depth; see {@link Result})
     * @return the result
     * @throws IllegalArgumentException if a size is not positive
     * @throws IllegalStateException if CUDA is not available (naming why)
     * @throws dev.gdsloader.cuda.CudaException if an allocation, the compilation or a launch fails
     */
    public static Result measure(long recordBytes, int batchRecords, long sourceBytes, long seed, int destinations) {
        check(recordBytes, batchRecords, sourceBytes);
        int records = (int) Math.max(1, Math.min(Integer.MAX_VALUE / 8, sourceBytes / recordBytes));
        try (PinnedBuffer src = PinnedBuffer.allocate(records * recordBytes)) {
            fill(src.segment());
            long base = src.devicePointer();
            return run(r -> base + r * recordBytes, recordBytes, records, batchRecords, n -> permutation(n, seed), destinations,
                    (record, into) -> MemorySegment.copy(src.segment(), record * recordBytes, into, 0, recordBytes));
        }
    }

    /**
     * Measures the gather ceiling of registered shards on the current device: the same kernel and a random order over
     * every record of {@code shards}, read from their page-cache mappings registered for the GPU as the MAPPED path
     * registers them ({@link MappedShards#process()}: read-only, mapped, shared with loaders of this process). This is
     * the ceiling of what a loader gathering from the page cache can reach: the GPU reads 4 KiB pages of the page
     * cache scattered in physical memory, where {@link #measure}'s pinned buffer comes in large contiguous chunks.
     * The expected bytes of the last batch are read with {@code pread}, never from a mapping.
     *
     * @param all the shards of one column (same record size), page-cached for a hot ceiling
     * @param batchRecords records per kernel launch, &gt; 0 (capped at the shards' records)
     * @param seed seed of the random order
     * @param destinations batch buffers written in turn, &gt;= 1 (the compared loader's prefetch depth; see {@link Result})
     * @return the result
     * @throws IOException naming the file if one cannot be mapped, registered or read
     * @throws IllegalArgumentException if the shards hold no records, differ in record size, or the batch is not positive
     * @throws IllegalStateException if CUDA is not available (naming why)
     * @throws dev.gdsloader.cuda.CudaException if an allocation, the compilation or a launch fails
     */
    public static Result measureRegistered(List<RecordLayout> all, int batchRecords, long seed, int destinations)
            throws IOException {
        return measureRegistered(all, batchRecords, n -> permutation(n, seed), destinations);
    }

    /**
     * As {@link #measureRegistered(List, int, long, int)}, with the records gathered in a given order (e.g. a loader
     * sampler's, to separate the cost of its order from the rest of the loader's pipeline).
     *
     * @param all the shards of one column (same record size), page-cached for a hot ceiling
     * @param batchRecords records per kernel launch, &gt; 0 (capped at the shards' records)
     * @param order given the number of records {@code n}, a permutation of {@code [0, n)}: the gather order of one epoch
     * @param destinations batch buffers written in turn, &gt;= 1 (see {@link Result})
     * @return the result
     * @throws IOException naming the file if one cannot be mapped, registered or read
     * @throws IllegalArgumentException if the shards hold no records, differ in record size, the batch is not
     *     positive, or {@code order} does not return {@code n} entries
     * @throws IllegalStateException if CUDA is not available (naming why)
     * @throws dev.gdsloader.cuda.CudaException if an allocation, the compilation or a launch fails
     */
    public static Result measureRegistered(List<RecordLayout> all, int batchRecords, java.util.function.IntFunction<int[]> order,
                                           int destinations) throws IOException {
        List<RecordLayout> shards = all.stream().filter(s -> s.recordCount() > 0).toList();
        long recordBytes = shards.isEmpty() ? 0 : shards.get(0).recordBytes();
        long total = 0;
        for (RecordLayout s : shards) {
            if (s.recordBytes() != recordBytes) {
                throw new IllegalArgumentException("gather ceiling: " + s.file() + " holds " + s.recordBytes()
                        + "-byte records, expected " + recordBytes + " like " + shards.get(0).file());
            }
            total += s.recordCount();
        }
        check(recordBytes, batchRecords, total * recordBytes);
        int records = (int) Math.min(Integer.MAX_VALUE / 8, total);
        long[] first = new long[shards.size() + 1]; // first[s]: global index of shard s's first record
        List<MappedShards.Lease> leases = new ArrayList<>();
        List<FileChannel> channels = new ArrayList<>();
        try {
            for (int s = 0; s < shards.size(); s++) {
                first[s + 1] = first[s] + shards.get(s).recordCount();
                leases.add(MappedShards.process().acquire(shards.get(s).file()));
                channels.add(FileChannel.open(shards.get(s).file(), StandardOpenOption.READ));
            }
            return run(r -> {
                int s = shardOf(first, r);
                return leases.get(s).deviceAddress(shards.get(s).dataOffset() + (r - first[s]) * recordBytes);
            }, recordBytes, records, batchRecords, order, destinations, (r, into) -> {
                int s = shardOf(first, r);
                long at = shards.get(s).dataOffset() + (r - first[s]) * recordBytes;
                ByteBuffer b = into.asByteBuffer();
                while (b.hasRemaining()) {
                    if (channels.get(s).read(b, at + b.position()) < 0) {
                        throw new IOException(shards.get(s).file() + ": at byte offset " + (at + b.position())
                                + ": end of file, expected " + recordBytes + " bytes of record " + (r - first[s]));
                    }
                }
            });
        } finally {
            for (FileChannel ch : channels) {
                ch.close();
            }
            leases.forEach(MappedShards.Lease::close);
        }
    }

    private static int shardOf(long[] first, long record) {
        int i = java.util.Arrays.binarySearch(first, record);
        return i >= 0 ? i : -i - 2;
    }

    /** The device-side address of record {@code record}. */
    @FunctionalInterface
    private interface Address {
        long of(long record);
    }

    /** Reads record {@code record}'s expected bytes into {@code into} (exactly one record long). */
    @FunctionalInterface
    private interface Expected {
        void read(long record, MemorySegment into) throws IOException;
    }

    private static void check(long recordBytes, int batchRecords, long sourceBytes) {
        if (recordBytes <= 0 || batchRecords <= 0 || sourceBytes <= 0) {
            throw new IllegalArgumentException("gather ceiling: record bytes " + recordBytes + ", batch records "
                    + batchRecords + " and source bytes " + sourceBytes + " must all be > 0");
        }
        if (!Cuda.availability().available()) {
            throw new IllegalStateException("gather ceiling needs a GPU: " + Cuda.availability().reason());
        }
    }

    /** Gathers {@code records} records (each at its device-side address) in a random order; see {@link #measure}. */
    private static Result run(Address address, long recordBytes, int records, int batchRecords,
                              java.util.function.IntFunction<int[]> orderOf, int destinations, Expected expected) {
        if (destinations < 1) {
            throw new IllegalArgumentException("gather ceiling: destinations must be >= 1, got " + destinations);
        }
        int batch = Math.min(batchRecords, records);
        long batchBytes = batch * recordBytes;
        try (GatherKernel kernel = GatherKernel.load(); PinnedBuffer order = PinnedBuffer.allocate(8L * records);
             DeviceBuffer addrs = DeviceBuffer.allocate(8L * records); DeviceBuffer dst = DeviceBuffer.allocate(destinations * batchBytes);
             PinnedBuffer back = PinnedBuffer.allocate(batch * recordBytes); CudaStream stream = CudaStream.create();
             Arena arena = Arena.ofConfined()) {
            int[] perm = orderOf.apply(records);
            if (perm.length != records) {
                throw new IllegalArgumentException("gather ceiling: an order of " + perm.length + " entries for " + records
                        + " records");
            }
            for (int i = 0; i < records; i++) {
                order.segment().setAtIndex(ValueLayout.JAVA_LONG, i, address.of(perm[i]));
            }
            stream.copyToDevice(addrs, 0, order, 0, 8L * records);
            epoch(kernel, addrs, dst, recordBytes, records, batch, destinations, stream); // warm-up: module, TLBs, clocks
            stream.synchronize();
            long t0 = System.nanoTime();
            int epochs = 0;
            long elapsed;
            do {
                epoch(kernel, addrs, dst, recordBytes, records, batch, destinations, stream);
                stream.synchronize();
                epochs++;
                elapsed = System.nanoTime() - t0;
            } while (elapsed < MIN_NANOS && epochs < MAX_EPOCHS);
            int lastFrom = (records - 1) / batch * batch;
            int lastCount = records - lastFrom;
            long lastAt = (long) (lastFrom / batch % destinations) * batchBytes; // the buffer the last launch wrote
            stream.copyToHost(back, 0, dst, lastAt, lastCount * recordBytes);
            stream.synchronize();
            MemorySegment want = arena.allocate(recordBytes, 16);
            boolean exact = true;
            for (int i = 0; i < lastCount && exact; i++) {
                expected.read(perm[lastFrom + i], want);
                exact = MemorySegment.mismatch(want, 0, recordBytes, back.segment(), i * recordBytes, (i + 1) * recordBytes) == -1;
            }
            double seconds = elapsed / 1e9;
            double perSecond = (double) epochs * records / seconds;
            return new Result(recordBytes, records, batch, epochs, perSecond * recordBytes / 1e9, perSecond, exact, destinations);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void epoch(GatherKernel kernel, DeviceBuffer addrs, DeviceBuffer dst, long recordBytes, int records,
                              int batch, int destinations, CudaStream stream) {
        for (int from = 0; from < records; from += batch) {
            int n = Math.min(batch, records - from);
            long at = (long) (from / batch % destinations) * batch * recordBytes;
            kernel.launchRecords(addrs.address() + 8L * from, dst.address() + at, recordBytes, n, stream);
        }
    }

    /** Distinct bytes everywhere (a golden-ratio sequence of longs), so a misplaced record cannot match. */
    private static void fill(MemorySegment s) {
        long words = s.byteSize() / 8;
        for (long j = 0; j < words; j++) {
            s.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, j, (j + 1) * 0x9E3779B97F4A7C15L);
        }
        for (long b = words * 8; b < s.byteSize(); b++) {
            s.set(ValueLayout.JAVA_BYTE, b, (byte) (b * 31 + 7));
        }
    }

    private static int[] permutation(int n, long seed) {
        int[] p = new int[n];
        for (int i = 0; i < n; i++) {
            p[i] = i;
        }
        Random r = new Random(seed);
        for (int i = n - 1; i > 0; i--) {
            int j = r.nextInt(i + 1);
            int t = p[i];
            p[i] = p[j];
            p[j] = t;
        }
        return p;
    }
}
