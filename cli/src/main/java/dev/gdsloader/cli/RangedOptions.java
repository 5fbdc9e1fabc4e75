package dev.gdsloader.cli;

import java.util.List;

/**
 * A command whose whole-number and size options declare the ranges they allow: the command checks a given value
 * against its range ({@link Checks.Range#check}), and the usage message for a value that does not even fit the
 * option's Java type ({@code --threads 99999999999}) names the same range ({@link UsageErrors}).
 */
interface RangedOptions {
    /**
     * @return the ranges of this command's options (those of its mixins too), at most one per option name; the ranges
     *     in {@link Checks#SHARED_RANGES} need not be listed
     */
    List<Checks.Range> ranges();
}
