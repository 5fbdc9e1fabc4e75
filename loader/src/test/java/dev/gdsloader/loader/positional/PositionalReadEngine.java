package dev.gdsloader.loader.positional;

import dev.gdsloader.loader.dataset.Dataset;
import dev.gdsloader.loader.path.PathTaken;
import dev.gdsloader.loader.path.ReadPath;
import dev.gdsloader.loader.plan.ColumnPieces;
import dev.gdsloader.loader.plan.SlotPlan;
import dev.gdsloader.loader.slot.HostTarget;
import dev.gdsloader.loader.spi.EngineConfig;
import dev.gdsloader.loader.spi.EngineProvider;
import dev.gdsloader.loader.spi.IoEngine;
import dev.gdsloader.loader.spi.SlotLayout;
import dev.gdsloader.loader.spi.SlotLoad;
import dev.gdsloader.memory.NativeAllocator;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * An engine that lives only in the test sources, added as any engine is: this one class plus its line in
 * {@code src/test/resources/META-INF/services/dev.gdsloader.loader.spi.EngineProvider}. It reads each piece's exact
 * bytes with a positional {@link FileChannel#read(ByteBuffer, long)} straight into its place in a host slot (the
 * SPI's {@link HostTarget}), so its batches report {@link PathTaken#HOST}.
 *
 * <p>Its provider serves {@code HOST} with preference 150 (above the host engine, below every GPU path), and only
 * a data directory that holds a file named {@value Provider#MARKER}, so that the other tests of this module keep
 * their engines. Thread-safe: reads of several slots run concurrently; owns its open channels.
 */
public final class PositionalReadEngine implements IoEngine<HostTarget> {
    /** Engines opened by the provider in this JVM, so a test can tell that {@code AUTO} took this one. */
    public static final AtomicInteger OPENED = new AtomicInteger();

    private final Dataset dataset;
    private final long maxIo;
    private final ConcurrentHashMap<Path, FileChannel> channels = new ConcurrentHashMap<>();
    private final AtomicLong ioNanos = new AtomicLong();

    private PositionalReadEngine(Dataset dataset, EngineConfig config) {
        this.dataset = dataset;
        this.maxIo = config.maxIo();
    }

    @Override
    public PathTaken pathTaken() {
        return PathTaken.HOST;
    }

    @Override
    public HostTarget allocateSlot(int index, SlotLayout layout, NativeAllocator allocator) {
        return HostTarget.allocate(layout.targetBytes(), allocator);
    }

    @Override
    public SlotLoad newLoad(int index, HostTarget slot, SlotLayout layout, int[] maxPieces) {
        int capacity = maxOps(layout, maxPieces);
        return new SlotLoad("slot " + index, capacity, new Reads(slot.hostTarget(), layout, capacity), ioNanos);
    }

    @Override
    public int maxOps(SlotLayout layout, int[] maxPieces) {
        return IoEngine.maxReads(layout, maxPieces, maxIo);
    }

    @Override
    public long viewOffset(SlotLayout layout, ColumnPieces column) {
        return layout.targetOffsets()[column.column()];
    }

    @Override
    public long hostBytesPerSlot(SlotLayout layout) {
        return layout.targetBytes();
    }

    @Override
    public long ioNanos() {
        return ioNanos.get();
    }

    @Override
    public void close() {
        for (FileChannel c : channels.values()) {
            try {
                c.close();
            } catch (IOException e) {
                throw new UncheckedIOException("closing a shard: " + e.getMessage(), e);
            }
        }
        channels.clear();
    }

    private FileChannel channel(Path file) throws IOException {
        try {
            return channels.computeIfAbsent(file, f -> {
                try {
                    return FileChannel.open(f, StandardOpenOption.READ);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** One slot's reads: each piece cut at {@code maxIo}, read to its place in the view; arrays sized once. */
    private final class Reads implements SlotLoad.Work {
        private final MemorySegment target;
        private final SlotLayout layout;
        private final Path[] file;
        private final long[] fileOffset;
        private final long[] length;
        private final long[] dest;

        Reads(MemorySegment target, SlotLayout layout, int capacity) {
            this.target = target;
            this.layout = layout;
            this.file = new Path[capacity];
            this.fileOffset = new long[capacity];
            this.length = new long[capacity];
            this.dest = new long[capacity];
        }

        @Override
        public void plan(SlotPlan plan, SlotLoad load) {
            for (int c = 0; c < plan.columnCount(); c++) {
                ColumnPieces col = plan.column(c);
                for (int i = 0; i < col.count(); i++) {
                    Path f = dataset.columns().get(c).shards().get(col.shard(i)).file();
                    long base = layout.targetOffsets()[c] + col.view(i) - col.start(i);
                    for (long off = col.start(i); off < col.end(i); off += maxIo) {
                        int op = load.add(Math.min(maxIo, col.end(i) - off));
                        file[op] = f;
                        fileOffset[op] = off;
                        length[op] = Math.min(maxIo, col.end(i) - off);
                        dest[op] = base + off;
                    }
                }
            }
        }

        @Override
        public long run(int from, int to) throws IOException {
            long total = 0;
            for (int op = from; op < to; op++) {
                ByteBuffer into = target.asSlice(dest[op], length[op]).asByteBuffer();
                FileChannel ch = channel(file[op]);
                while (into.hasRemaining()) {
                    long at = fileOffset[op] + into.position();
                    if (ch.read(into, at) < 0) {
                        throw new IOException(file[op] + ": short read: " + into.position() + " bytes at offset "
                                + fileOffset[op] + " where " + length[op] + " were expected (file truncated?)");
                    }
                }
                total += length[op];
            }
            return total;
        }

        @Override
        public void finish() {
            // reads land in the view: nothing to copy on
        }
    }

    /** Serves {@code HOST} for a data directory holding {@value #MARKER}; above the host engine under AUTO. */
    public static final class Provider implements EngineProvider {
        /** The file whose presence in a data directory asks for this engine. */
        public static final String MARKER = ".positional-reads";

        /** A provider; {@link java.util.ServiceLoader} makes one from {@code META-INF/services}. */
        public Provider() {
        }

        @Override
        public ReadPath path() {
            return ReadPath.HOST;
        }

        @Override
        public int preference() {
            return 150;
        }

        @Override
        public Optional<String> refusesHostDecoded() {
            return Optional.of("positional reads return file bytes as stored");
        }

        @Override
        public Verdict check(Path dataDir, EngineConfig config, boolean requested) {
            return Files.isRegularFile(dataDir.resolve(MARKER))
                    ? Verdict.yes("positional reads into host memory (" + MARKER + " in " + dataDir + ")")
                    : Verdict.no("positional reads serve only a directory holding " + MARKER);
        }

        @Override
        public PositionalReadEngine open(Dataset dataset, EngineConfig config, Verdict verdict) {
            OPENED.incrementAndGet();
            return new PositionalReadEngine(dataset, config);
        }
    }
}
