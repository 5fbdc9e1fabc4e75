package dev.gdsloader.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import java.util.zip.CRC32;

/**
 * The file ranges one read benchmark issues: every file cut into requests of one size, in file order, the
 * last request of a file short. Each reader under comparison reads exactly these ranges. Immutable.
 *
 * @param files the files, in order
 * @param ranges the requests
 */
public record ReadRanges(List<Path> files, List<Range> ranges) {
    /**
     * One request.
     *
     * @param file index into {@link #files()}
     * @param offset byte offset in the file
     * @param length bytes, &gt; 0
     */
    public record Range(int file, long offset, long length) {
    }

    /** Copies the lists. */
    public ReadRanges {
        files = List.copyOf(files);
        ranges = List.copyOf(ranges);
    }

    /**
     * The files a path names: the file itself, or the regular, non-empty, non-hidden files of a directory
     * (not its subdirectories), sorted by name.
     *
     * @param fileOrDir a file or a directory
     * @return the files, at least one
     * @throws IOException if the path is missing, or a directory holds no such file
     */
    public static List<Path> filesOf(Path fileOrDir) throws IOException {
        if (Files.isRegularFile(fileOrDir)) {
            if (Files.size(fileOrDir) == 0) {
                throw new IOException(fileOrDir + ": empty file, nothing to read");
            }
            return List.of(fileOrDir);
        }
        if (!Files.isDirectory(fileOrDir)) {
            if (Files.exists(fileOrDir)) {
                throw new IOException(fileOrDir + ": not a regular file or directory (a FIFO, device or socket cannot be read by offset)");
            }
            throw new java.nio.file.NoSuchFileException(fileOrDir.toString());
        }
        List<Path> out = new ArrayList<>();
        try (Stream<Path> s = Files.list(fileOrDir)) {
            for (Path p : s.sorted().toList()) {
                if (Files.isRegularFile(p) && !p.getFileName().toString().startsWith(".") && Files.size(p) > 0) {
                    out.add(p);
                }
            }
        }
        if (out.isEmpty()) {
            throw new IOException(fileOrDir + ": no non-empty regular files to read");
        }
        return out;
    }

    /**
     * @param files the files
     * @param requestBytes request size, &gt; 0
     * @return every file cut into requests of {@code requestBytes}
     * @throws IOException if a file's size cannot be read
     */
    public static ReadRanges of(List<Path> files, long requestBytes) throws IOException {
        if (requestBytes <= 0) {
            throw new IllegalArgumentException("request size must be > 0 bytes, got " + requestBytes);
        }
        List<Range> r = new ArrayList<>();
        for (int f = 0; f < files.size(); f++) {
            long size = Files.size(files.get(f));
            for (long off = 0; off < size; off += requestBytes) {
                r.add(new Range(f, off, Math.min(requestBytes, size - off)));
            }
        }
        return new ReadRanges(files, r);
    }

    /** @return the sum of all request lengths: every byte of every file */
    public long totalBytes() {
        return ranges.stream().mapToLong(Range::length).sum();
    }

    /** @return the longest request in bytes */
    public long maxLength() {
        return ranges.stream().mapToLong(Range::length).max().orElse(0);
    }

    /**
     * CRC32 of each request's bytes, read from the files with plain buffered Java reads (independent of cuFile);
     * reading them also brings the files into the page cache.
     *
     * @return {@code crc[i]} for {@code ranges().get(i)}
     * @throws IOException if a file is shorter than its ranges
     */
    public long[] expectedCrc32() throws IOException {
        long[] out = new long[ranges.size()];
        ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20);
        FileChannel ch = null;
        int open = -1;
        try {
            for (int i = 0; i < ranges.size(); i++) {
                Range r = ranges.get(i);
                if (r.file() != open) {
                    if (ch != null) {
                        ch.close();
                    }
                    ch = FileChannel.open(files.get(r.file()), StandardOpenOption.READ);
                    open = r.file();
                }
                CRC32 crc = new CRC32();
                for (long off = r.offset(), end = r.offset() + r.length(); off < end; ) {
                    buf.clear().limit((int) Math.min(buf.capacity(), end - off));
                    int n = ch.read(buf, off);
                    if (n <= 0) {
                        throw new IOException(files.get(r.file()) + ": ended at offset " + off + ", expected data up to " + end);
                    }
                    crc.update(buf.flip());
                    off += n;
                }
                out[i] = crc.getValue();
            }
            return out;
        } finally {
            if (ch != null) {
                ch.close();
            }
        }
    }
}
