package dev.gdsloader.loader.io;

import dev.gdsloader.loader.plan.Chunk;

/**
 * One unit of work for the I/O pool: a chunk of one column's shard, with what to do with it.
 *
 * @param column column index
 * @param chunk the file range and where it lands
 * @param copyFrom for staged paths, first file byte to copy on (inside the chunk); ignored by GDS
 * @param copyTo end (exclusive) of the file bytes to copy on
 * @param viewTarget target offset the byte {@code copyFrom} is copied to
 */
record ChunkRead(int column, Chunk chunk, long copyFrom, long copyTo, long viewTarget) {
}
