package dev.gdsloader.loader.sampler;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Map;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** {@link Sampler}: orders as pure functions of (seed, epoch, rank, world size). */
class SamplerTest {
    private static SamplerOptions opts(Shuffle s, int rank, int world, Partition p, boolean dropLast) {
        return SamplerOptions.sequential().withShuffle(s, 1234).withBlockRecords(4).withRanks(rank, world, p).withDropLast(dropLast);
    }

    @Test
    void threeRecordsOnSevenRanksPadToZeroOneTwoZeroOneTwoZeroAndFlagTheLastFour() {
        long[] expected = {0, 1, 2, 0, 1, 2, 0};
        for (int r = 0; r < 7; r++) {
            EpochOrder o = new Sampler(opts(Shuffle.NONE, r, 7, Partition.PAD, false), new long[] {3}, 1).order(0);
            assertEquals(1, o.size());
            assertEquals(expected[r], o.records()[0], "rank " + r + " gets padded position " + r);
            assertEquals(r >= 3, o.isPadding(0), "rank " + r + " padding flag");
        }
    }

    @Test
    void threeRecordsOnSevenRanksWithDropLastIsAnErrorNamingTheRank() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Sampler(opts(Shuffle.NONE, 0, 7, Partition.PAD, true), new long[] {3}, 1));
        assertTrue(e.getMessage().contains("rank 0 of 7") && e.getMessage().contains("3 records"), e.getMessage());
    }

    @Test
    void oneShardOnTwoRanksSplitsItsRecords() {
        long[] r0 = new Sampler(opts(Shuffle.NONE, 0, 2, Partition.EXACT_ONCE, false), new long[] {5}, 2).order(0).records();
        long[] r1 = new Sampler(opts(Shuffle.NONE, 1, 2, Partition.EXACT_ONCE, false), new long[] {5}, 2).order(0).records();
        assertArrayEquals(new long[] {0, 1, 2}, r0);
        assertArrayEquals(new long[] {3, 4}, r1);
    }

    @Test
    void aRankLeftWithNothingFailsAtPlanningNamingIt() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new Sampler(opts(Shuffle.NONE, 0, 3, Partition.EXACT_ONCE, false), new long[] {2}, 1));
        assertTrue(e.getMessage().contains("rank 2 of 3"), e.getMessage());
    }

    @ParameterizedTest
    @EnumSource(Shuffle.class)
    void twentyTwoRecordsGiveTheSameOrderInEveryRunAndCoverEveryRecordOncePerEpoch(Shuffle shuffle) {
        long[] shards = {7, 8, 7};
        for (int world : new int[] {1, 2}) {
            for (int epoch = 0; epoch < 3; epoch++) {
                long[] all = new long[0];
                for (int r = 0; r < world; r++) {
                    long[] a = new Sampler(opts(shuffle, r, world, Partition.EXACT_ONCE, false), shards, 5).order(epoch).records();
                    long[] b = new Sampler(opts(shuffle, r, world, Partition.EXACT_ONCE, false), shards, 5).order(epoch).records();
                    assertArrayEquals(a, b, "same order in every run");
                    all = LongStream.concat(Arrays.stream(all), Arrays.stream(a)).toArray();
                }
                Arrays.sort(all);
                assertArrayEquals(LongStream.range(0, 22).toArray(), all, "every record exactly once, world " + world);
            }
        }
    }

    @Test
    void withoutShuffleEveryEpochIsTheSameAndWithShuffleEachEpochDiffers() {
        long[] shards = {7, 8, 7};
        Sampler none = new Sampler(opts(Shuffle.NONE, 0, 1, Partition.EXACT_ONCE, false), shards, 5);
        assertArrayEquals(none.order(0).records(), none.order(2).records());
        for (Shuffle s : new Shuffle[] {Shuffle.GLOBAL, Shuffle.SHARD_BLOCKS}) {
            // blocks of 2 records: 3 shards of 3-4 blocks give thousands of orders, so consecutive epochs differ
            Sampler sh = new Sampler(SamplerOptions.sequential().withShuffle(s, 1234).withBlockRecords(2), shards, 5);
            assertFalse(Arrays.equals(sh.order(0).records(), sh.order(1).records()), s + " epochs 0 and 1");
            assertFalse(Arrays.equals(sh.order(1).records(), sh.order(2).records()), s + " epochs 1 and 2");
            assertNotEquals(Arrays.toString(none.order(0).records()), Arrays.toString(sh.order(0).records()));
        }
    }

    @Test
    void shardBlocksKeepRecordsOfABlockTogetherAndInsideTheirShard() {
        long[] shards = {10, 6};
        long[] o = new Sampler(opts(Shuffle.SHARD_BLOCKS, 0, 1, Partition.EXACT_ONCE, false), shards, 4).order(3).records();
        // blocks of 4 (the last block of a shard may be shorter): every run of the order is ascending and stays in a shard
        for (int i = 0; i < o.length; ) {
            long start = o[i];
            int len = 1;
            while (i + len < o.length && o[i + len] == start + len && (start + len) % 4 != 0 && start + len != 10) {
                len++;
            }
            assertTrue(start % 4 == 0 || start == 10 || start == 14, "block starts at a block boundary: " + Arrays.toString(o));
            i += len;
        }
    }

    @Test
    void theFeistelPermutationIsABijectionForEverySmallDomain() {
        for (int n = 1; n <= 300; n++) {
            boolean[] hit = new boolean[n];
            for (int x = 0; x < n; x++) {
                long v = FeistelPermutation.apply(n, 42L * n, x);
                assertTrue(v >= 0 && v < n && !hit[(int) v], "n=" + n + " x=" + x + " -> " + v);
                hit[(int) v] = true;
            }
        }
    }

    @Test
    void padGivesEveryRankTheSameCountAndExactOnceDiffersByAtMostOne() {
        long[] shards = {10};
        for (int r = 0; r < 3; r++) {
            assertEquals(4, new Sampler(opts(Shuffle.GLOBAL, r, 3, Partition.PAD, false), shards, 1).order(0).size());
            long n = new Sampler(opts(Shuffle.GLOBAL, r, 3, Partition.EXACT_ONCE, false), shards, 1).order(0).size();
            assertEquals(r == 0 ? 4 : 3, n);
            assertEquals(3, new Sampler(opts(Shuffle.GLOBAL, r, 3, Partition.PAD, true), shards, 1).order(0).size());
        }
    }

    @Test
    void rankAndWorldSizeComeFromTheEnvironment() {
        SamplerOptions o = SamplerOptions.sequential().withRankFrom(Map.of("RANK", "3", "WORLD_SIZE", "8"));
        assertEquals(3, o.rank());
        assertEquals(8, o.worldSize());
        assertEquals(0, SamplerOptions.sequential().withRankFrom(Map.of()).rank());
        assertThrows(IllegalArgumentException.class, () -> SamplerOptions.sequential().withRankFrom(Map.of("RANK", "x")));
        assertThrows(IllegalArgumentException.class, () -> SamplerOptions.sequential().withRankFrom(Map.of("RANK", "2", "WORLD_SIZE", "2")));
    }
}
