package dev.gdsloader.loader.sampler;

/**
 * One rank's records for one epoch, in the order they are to be delivered.
 *
 * @param epoch the epoch, from 0
 * @param records global record indices ({@code records.length} entries; owned by this object, not copied)
 * @param firstPadded index in {@code records} from which entries are padding (repeats); {@code records.length}
 *     when there is none
 */
public record EpochOrder(long epoch, long[] records, int firstPadded) {
    /** @return number of entries */
    public int size() {
        return records.length;
    }

    /**
     * @param i position in this order
     * @return true if entry {@code i} is a repeat added by {@link Partition#PAD}
     */
    public boolean isPadding(int i) {
        return i >= firstPadded;
    }
}
