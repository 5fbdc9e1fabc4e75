package dev.gdsloader.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.cuda.CudaStream;
import dev.gdsloader.loader.Batch;
import dev.gdsloader.loader.ColumnView;
import dev.gdsloader.loader.GdsLoader;
import dev.gdsloader.loader.GroupEpoch;
import dev.gdsloader.loader.HostReadback;
import dev.gdsloader.loader.LoaderOptions;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.zip.CRC32C;

/**
 * {@code gdsloader fanout}: a device group against one GPU loading alone, on the same data and options. Each consumer
 * makes its own stream (on its GPU) wait for every batch and releases the batch on it, the least work a training step
 * does with a batch. Per run: batches per second for the GPU alone and for each group member, the loader's storage
 * bytes (the group's should equal one GPU's: read once), and the epoch's wall time. Hot: one untimed epoch first (it
 * warms the page cache and, with {@code verify}, checks every member's every batch byte-exact against the GPU alone:
 * CRC32C per column of the bytes read back to the host), then the timed epochs. Cold: the page cache is dropped before
 * each timed epoch (needs root; where it cannot be dropped the run says so), nothing checked (the hot run checks).
 *
 * <p>Stateless; {@link #run} owns its loaders, threads and streams and closes them.
 */
public final class FanOutBench {
    private FanOutBench() {
    }

    /**
     * One loader's timed epochs.
     *
     * @param what "alone" or "group"
     * @param devices the GPUs (one for alone)
     * @param batches batches per epoch
     * @param memberBatchesPerSecond per member (one for alone): batches over the time from the epoch's start to the
     *     member's last release, best epoch
     * @param epochSeconds the epoch's wall time (the slowest member's), best epoch
     * @param storageBytes bytes the loader read from storage in the last timed epoch
     * @param reason the loader's path reason
     */
    public record Run(String what, List<Integer> devices, long batches, List<Double> memberBatchesPerSecond,
                      double epochSeconds, long storageBytes, String reason) {
        /** Copies the lists. */
        public Run {
            devices = List.copyOf(devices);
            memberBatchesPerSecond = List.copyOf(memberBatchesPerSecond);
        }
    }

    /**
     * The comparison.
     *
     * @param alone GPU {@code devices[0]} loading alone
     * @param group the device group
     * @param cold whether the page cache was dropped before each timed epoch
     * @param exact whether every member's every batch equalled the GPU alone's (null: not checked)
     * @param note what could not be done as asked (empty if nothing)
     */
    public record Result(Run alone, Run group, boolean cold, Boolean exact, String note) {
        /** @return the slowest member's batch rate over the GPU alone's (acceptance: at least 0.9 hot) */
        public double worstRateRatio() {
            double a = alone.memberBatchesPerSecond().get(0);
            return group.memberBatchesPerSecond().stream().mapToDouble(Double::doubleValue).min().orElse(0) / a;
        }

        /** @return the group's storage bytes over the GPU alone's (acceptance: 1.00) */
        public double storageRatio() {
            return alone.storageBytes() == 0 ? Double.NaN : (double) group.storageBytes() / alone.storageBytes();
        }

        /** @return the group's epoch time over the GPU alone's (acceptance: at most 1.05 cold) */
        public double epochRatio() {
            return group.epochSeconds() / alone.epochSeconds();
        }
    }

    /**
     * @param data the dataset
     * @param options the loader's options (its device is replaced by {@code devices[0]})
     * @param devices the group's GPUs, 1..n distinct ordinals
     * @param epochs timed epochs, &ge; 1 (the best is reported)
     * @param cold drop the page cache before each timed epoch
     * @param verify check every batch byte-exact in the untimed warm-up epoch (hot runs only)
     * @param out progress lines
     * @return the comparison
     * @throws IOException if the dataset cannot be read
     * @throws Exception if a consumer thread failed (its failure)
     */
    public static Result run(Path data, LoaderOptions options, List<Integer> devices, int epochs, boolean cold, boolean verify,
                             PrintStream out) throws Exception {
        if (epochs < 1) {
            throw new IllegalArgumentException("fanout needs at least 1 timed epoch, got " + epochs);
        }
        StringBuilder note = new StringBuilder();
        LoaderOptions alone = options.withDevice(devices.get(0));
        Map<Long, long[]> want = verify && !cold ? new ConcurrentHashMap<>() : null;
        Run a;
        try (GdsLoader l = GdsLoader.builder(data).options(alone).build()) {
            a = timed("alone", l, List.of(devices.get(0)), epochs, cold, want, null, note, out);
        }
        boolean[] exact = {true};
        Run g;
        int[] ordinals = devices.stream().mapToInt(Integer::intValue).toArray();
        try (GdsLoader l = GdsLoader.builder(data).options(options).deviceGroup(ordinals).build()) {
            g = timed("group", l, devices, epochs, cold, want, exact, note, out);
        }
        return new Result(a, g, cold, want == null ? null : exact[0], note.toString());
    }

    /** An untimed warm-up epoch (hot; recording or checking CRCs), then {@code epochs} timed ones. */
    private static Run timed(String what, GdsLoader l, List<Integer> devices, int epochs, boolean cold, Map<Long, long[]> want,
                             boolean[] exact, StringBuilder note, PrintStream out) throws Exception {
        boolean groupApi = what.equals("group"); // a group of one still goes through groupEpoch()
        if (!cold) {
            epoch(l, devices, want, exact, groupApi);
        }
        double bestEpoch = Double.MAX_VALUE;
        List<Double> bestRates = null;
        for (int e = 0; e < epochs; e++) {
            if (cold) {
                String why = PageCache.drop();
                if (why != null && note.indexOf(why) < 0) {
                    note.append(note.isEmpty() ? "" : "; ").append(why);
                }
            }
            double[] t = epoch(l, devices, null, null, groupApi);
            double wall = 0;
            for (double x : t) {
                wall = Math.max(wall, x);
            }
            if (wall < bestEpoch) {
                bestEpoch = wall;
                bestRates = new ArrayList<>();
                for (double x : t) {
                    bestRates.add(l.batchesPerEpoch() / x);
                }
            }
            out.printf(Locale.ROOT, "%s %s epoch %d: %.3f s, batches/s per member %s%n", what, devices, e, wall,
                    java.util.Arrays.stream(t).mapToObj(x -> String.format(Locale.ROOT, "%.1f", l.batchesPerEpoch() / x)).toList());
        }
        return new Run(what, devices, l.batchesPerEpoch(), bestRates, bestEpoch, l.stats().storageBytes(), l.pathReason());
    }

    /**
     * One epoch, a consumer thread per member.
     *
     * @return each member's seconds from the epoch's start to its last release (stream synchronised)
     */
    private static double[] epoch(GdsLoader l, List<Integer> devices, Map<Long, long[]> want, boolean[] exact, boolean group)
            throws Exception {
        int k = devices.size();
        long t0 = System.nanoTime();
        List<Iterator<Batch>> its = new ArrayList<>();
        if (group) {
            GroupEpoch e = l.groupEpoch();
            for (int m = 0; m < k; m++) {
                its.add(e.member(m));
            }
        } else {
            its.add(l.iterator());
        }
        boolean device = l.pathTaken().onDevice();
        ExecutorService threads = Executors.newThreadPerTaskExecutor(Thread.ofPlatform().name("fanout-member-", 0).factory());
        try {
            List<Future<Double>> done = new ArrayList<>();
            for (int m = 0; m < k; m++) {
                int member = m;
                done.add(threads.submit(() -> consume(its.get(member), device ? devices.get(member) : -1, want,
                        exact, group || want == null, t0)));
            }
            double[] seconds = new double[k];
            for (int m = 0; m < k; m++) {
                seconds[m] = done.get(m).get();
            }
            return seconds;
        } finally {
            threads.shutdown();
        }
    }

    /**
     * One member's consumer: its stream waits for every batch, then the batch is released on it.
     *
     * @param gpu the member's GPU, or -1 on the host path
     * @param check whether to compare with {@code want} (else record into it)
     */
    private static double consume(Iterator<Batch> it, int gpu, Map<Long, long[]> want, boolean[] exact, boolean check, long t0) {
        if (gpu >= 0) {
            CudaDevice.makeCurrent(gpu);
        }
        try (CudaStream s = gpu >= 0 ? CudaStream.create() : null;
             HostReadback back = want != null ? new HostReadback(1 << 20, gpu >= 0) : null) {
            while (it.hasNext()) {
                Batch b = it.next();
                if (back != null) {
                    back.await(b);
                    long[] crc = new long[b.columns().size()];
                    int c = 0;
                    for (ColumnView v : b.columns()) {
                        CRC32C x = new CRC32C();
                        x.update(back.bytes(v).asByteBuffer());
                        crc[c++] = x.getValue();
                    }
                    if (check) {
                        long[] w = want.get(b.index());
                        if (w == null || !java.util.Arrays.equals(w, crc)) {
                            synchronized (exact) {
                                exact[0] = false;
                            }
                        }
                    } else {
                        want.put(b.index(), crc);
                    }
                }
                if (s != null) {
                    b.awaitOn(s);
                    b.release(s);
                } else {
                    b.close();
                }
            }
            if (s != null) {
                s.synchronize();
            }
        }
        return (System.nanoTime() - t0) / 1e9;
    }

    /**
     * Prints the comparison and the acceptance ratios.
     *
     * @param r the result
     * @param out where
     */
    public static void print(Result r, PrintStream out) {
        out.printf(Locale.ROOT, "alone  GPU %s: %.1f batches/s, epoch %.3f s, storage %d bytes%n", r.alone().devices(),
                r.alone().memberBatchesPerSecond().get(0), r.alone().epochSeconds(), r.alone().storageBytes());
        out.printf(Locale.ROOT, "group  GPUs %s: batches/s per member %s, epoch %.3f s, storage %d bytes%n", r.group().devices(),
                r.group().memberBatchesPerSecond().stream().map(x -> String.format(Locale.ROOT, "%.1f", x)).toList(),
                r.group().epochSeconds(), r.group().storageBytes());
        out.println("path   " + r.group().reason());
        out.printf(Locale.ROOT, "ratios (%s): slowest member / alone %.3f (hot target >= 0.9), storage group / alone %.3f "
                        + "(target 1.00), epoch group / alone %.3f (cold target <= 1.05), byte-exact %s%n",
                r.cold() ? "cold" : "hot", r.worstRateRatio(), r.storageRatio(), r.epochRatio(),
                r.exact() == null ? "not checked" : r.exact() ? "yes" : "NO");
        if (!r.note().isEmpty()) {
            out.println("note   " + r.note());
        }
    }

    /**
     * Writes {@code fanout.json} into {@code dir}.
     *
     * @param r the result
     * @param command the command line, recorded
     * @param dir the output directory, made if absent
     * @return the file
     * @throws IOException if it cannot be written
     */
    public static Path write(Result r, String command, Path dir) throws IOException {
        Files.createDirectories(dir);
        Path json = dir.resolve(r.cold() ? "fanout-cold.json" : "fanout-hot.json");
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("command", command);
        doc.put("result", r);
        doc.put("worstRateRatio", r.worstRateRatio());
        doc.put("storageRatio", r.storageRatio());
        doc.put("epochRatio", r.epochRatio());
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(json.toFile(), doc);
        return json;
    }
}
