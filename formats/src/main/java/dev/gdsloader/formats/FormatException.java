package dev.gdsloader.formats;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A shard file does not follow its format, or uses a feature of the format that this module
 * does not support.
 *
 * <p>The message always has the form {@code <file>: at byte offset <offset>: <detail>}, where
 * the detail is either {@code expected <what>, found <what>} (see
 * {@link #FormatException(Path, long, String, String)}) or a free-form sentence (see
 * {@link #FormatException(Path, long, String)}). The offset is a byte offset from the start of
 * the file; for gzip-compressed files it counts bytes of the decompressed stream.
 *
 * <p>Readers in this module report every malformed input as a {@code FormatException}: sizes
 * read from a file are validated against the file size before anything is allocated, and
 * arithmetic overflow is reported as a {@code FormatException} rather than an
 * {@link ArithmeticException}.
 *
 * <p>Instances are immutable and therefore thread-safe.
 */
public class FormatException extends IOException {

    /** Serialization version. */
    private static final long serialVersionUID = 1L;

    /** The file, or {@code null} when not known; {@link Path} is not serializable. */
    private final transient Path file;
    /** Byte offset of the problem from the start of the file. */
    private final long offset;
    /** The message without its file and offset prefix. */
    private final String detail;

    /**
     * Creates an exception for a value that differs from what the format requires.
     *
     * @param file the offending file, or {@code null} if unknown (rendered as {@code <unknown file>})
     * @param offset byte offset from the start of the file where the problem was found
     * @param expected what the format requires there, e.g. {@code "\\x93NUMPY magic"}
     * @param found what the file holds instead
     */
    public FormatException(Path file, long offset, String expected, String found) {
        this(file, offset, "expected " + expected + ", found " + found);
    }

    /**
     * Creates an exception with a free-form detail message.
     *
     * @param file the offending file, or {@code null} if unknown (rendered as {@code <unknown file>})
     * @param offset byte offset from the start of the file where the problem was found
     * @param message what is wrong, e.g. {@code "big-endian dtype '>f4' is not supported"}
     */
    public FormatException(Path file, long offset, String message) {
        super(describe(file) + ": at byte offset " + offset + ": " + message);
        this.file = file;
        this.offset = offset;
        this.detail = message;
    }

    /**
     * Creates an exception for a value that differs from what the format requires, with a cause.
     *
     * @param file the offending file, or {@code null} if unknown
     * @param offset byte offset from the start of the file where the problem was found
     * @param expected what the format requires there
     * @param found what the file holds instead
     * @param cause the underlying exception, e.g. a {@link java.util.zip.ZipException}
     */
    public FormatException(Path file, long offset, String expected, String found, Throwable cause) {
        this(file, offset, "expected " + expected + ", found " + found, cause);
    }

    /**
     * Creates an exception with a free-form detail message and a cause.
     *
     * @param file the offending file, or {@code null} if unknown
     * @param offset byte offset from the start of the file where the problem was found
     * @param message what is wrong
     * @param cause the underlying exception, e.g. a {@link java.util.zip.ZipException}
     */
    public FormatException(Path file, long offset, String message, Throwable cause) {
        super(describe(file) + ": at byte offset " + offset + ": " + message, cause);
        this.file = file;
        this.offset = offset;
        this.detail = message;
    }

    /**
     * Returns the offending file.
     *
     * @return the file, or {@code null} if it was not known (or after deserialization)
     */
    public Path file() {
        return file;
    }

    /**
     * Returns where in the file the problem was found.
     *
     * @return byte offset from the start of the file (of the decompressed stream for gzip files)
     */
    public long offset() {
        return offset;
    }

    /**
     * Returns what is wrong, without the file and offset, so that a container format (an {@code .npz} member) can
     * report the problem at its own offset.
     *
     * @return the detail, e.g. {@code "expected \\x93NUMPY magic, found 'PK'"}
     */
    public String detail() {
        return detail;
    }

    private static String describe(Path file) {
        return file == null ? "<unknown file>" : file.toString();
    }
}
