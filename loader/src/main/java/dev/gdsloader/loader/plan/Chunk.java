package dev.gdsloader.loader.plan;

/**
 * One I/O task: read {@code length} bytes at {@code fileOffset} of one shard into the target at
 * {@code targetOffset}.
 *
 * @param shard shard index in its column
 * @param fileOffset byte offset in the file
 * @param length bytes to read
 * @param targetOffset byte offset in the destination (staging buffer or device region)
 */
public record Chunk(int shard, long fileOffset, long length, long targetOffset) {
}
