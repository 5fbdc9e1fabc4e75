package dev.gdsloader.formats.idx;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The split and column an IDX file name stands for, e.g. {@code train-images-idx3-ubyte.gz}
 * is split {@code train}, column {@code images}.
 *
 * <p>Rules: drop a trailing {@code .gz} (any case); drop the type suffix {@code -idxN-ubyte}
 * (also {@code .idxN-ubyte}, as some mirrors name it); what remains is {@code <split>-<column>},
 * split at the first {@code '-'}; the MNIST split name {@code t10k} becomes {@code test}; a name
 * without {@code '-'} is a split of that name with column {@code data}.
 *
 * <p>Immutable and thread-safe.
 *
 * @param split the split, e.g. {@code train} or {@code test}
 * @param column the column, e.g. {@code images} or {@code labels}
 */
record IdxFileName(String split, String column) {

    private static final Pattern TYPE_SUFFIX = Pattern.compile("[-.]idx\\d+-ubyte$");

    /**
     * Derives split and column from a file name.
     *
     * @param fileName a file name without directories
     * @return the split and column
     * @throws IllegalArgumentException if the name leaves an empty split or column
     */
    static IdxFileName parse(String fileName) {
        String name = fileName;
        if (name.toLowerCase(Locale.ROOT).endsWith(".gz")) {
            name = name.substring(0, name.length() - 3);
        }
        name = TYPE_SUFFIX.matcher(name).replaceFirst("");
        int dash = name.indexOf('-');
        String split = dash < 0 ? name : name.substring(0, dash);
        String column = dash < 0 ? "data" : name.substring(dash + 1);
        if (split.equals("t10k")) {
            split = "test";
        }
        if (split.isEmpty() || column.isEmpty()) {
            throw new IllegalArgumentException("cannot derive split and column from IDX file name '"
                    + fileName + "'");
        }
        return new IdxFileName(split, column);
    }
}
