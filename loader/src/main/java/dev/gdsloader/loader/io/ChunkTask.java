package dev.gdsloader.loader.io;

/**
 * One unit of work for the I/O pool: read {@code length} bytes at {@code fileOffset} of shard {@code shard}
 * of column {@code column} to {@code target}, then (staged paths) copy file bytes {@code [copyFrom, copyTo)}
 * to {@code viewTarget}. Tasks are allocated once per slot and refilled for every batch, so submitting a batch
 * allocates nothing.
 */
final class ChunkTask implements Runnable {
    private final IoEngine.SlotLoad load;
    int column;
    int shard;
    long fileOffset;
    long length;
    long target;
    long copyFrom;
    long copyTo;
    long viewTarget;

    ChunkTask(IoEngine.SlotLoad load) {
        this.load = load;
    }

    @Override
    public void run() {
        load.execute(this);
    }
}
