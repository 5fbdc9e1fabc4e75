package dev.gdsloader.loader;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BiPredicate;

/**
 * How a device group gets each batch: read once into the first device's slot, then to each other member by the way
 * its pair allows. Pure planning over the devices and a peer-access predicate, so CI tests every case without a GPU.
 *
 * @param devices the group's CUDA ordinals, the first one read into
 * @param ways one way per member, in member order ({@link Way#FIRST} for member 0)
 * @param reason one line: the group, how each member gets its copy and why (said once, in the loader's path reason)
 */
record FanOutPlan(List<Integer> devices, List<Way> ways, String reason) {
    /** How one member receives a batch. */
    enum Way {
        /** The member whose slot the engine fills: no copy. */
        FIRST,
        /** The host path: every member reads the one host slot; no copy. */
        SHARED_HOST,
        /** {@code cudaMemcpyPeerAsync} with peer access on in both directions: over NVLink or PCIe, no host memory. */
        PEER,
        /** Device to pinned host memory once per batch, then pinned host memory to this member's device. */
        HOST_STAGED
    }

    /** Copies the lists. */
    FanOutPlan {
        devices = List.copyOf(devices);
        ways = List.copyOf(ways);
    }

    /**
     * Checks a device group as given to the builder.
     *
     * @param devices CUDA ordinals
     * @return them, as a list
     * @throws IllegalArgumentException if empty, longer than {@value ReleaseGroup#MAX_MEMBERS}, negative or repeated
     */
    static List<Integer> checkGroup(int... devices) {
        if (devices.length == 0 || devices.length > ReleaseGroup.MAX_MEMBERS) {
            throw new IllegalArgumentException("deviceGroup needs 1.." + ReleaseGroup.MAX_MEMBERS + " CUDA ordinals, got "
                    + devices.length);
        }
        Set<Integer> seen = new HashSet<>();
        List<Integer> out = new ArrayList<>();
        for (int d : devices) {
            if (d < 0) {
                throw new IllegalArgumentException("deviceGroup: a CUDA ordinal must be >= 0, got " + d);
            }
            if (!seen.add(d)) {
                throw new IllegalArgumentException("deviceGroup: GPU " + d + " is named twice in " + java.util.Arrays.toString(devices));
            }
            out.add(d);
        }
        return out;
    }

    /**
     * @param devices the group ({@link #checkGroup}), first device first
     * @param onDevice whether the loader's slots are in device memory (false: the host path)
     * @param canAccessPeer {@code cudaDeviceCanAccessPeer(device, peer)}; asked only on device paths
     * @return the plan
     */
    static FanOutPlan plan(List<Integer> devices, boolean onDevice, BiPredicate<Integer, Integer> canAccessPeer) {
        int first = devices.get(0);
        List<Way> ways = new ArrayList<>();
        ways.add(Way.FIRST);
        if (devices.size() == 1) {
            return new FanOutPlan(devices, ways, "device group of one (GPU " + first + "): a plain loader");
        }
        StringBuilder why = new StringBuilder("device group " + devices + ": each batch is read once into GPU " + first + "'s slot");
        if (!onDevice) {
            for (int m = 1; m < devices.size(); m++) {
                ways.add(Way.SHARED_HOST);
            }
            return new FanOutPlan(devices, ways, why.append("; host path: every member reads the one host slot, no copy").toString());
        }
        for (int m = 1; m < devices.size(); m++) {
            int d = devices.get(m);
            boolean to = canAccessPeer.test(d, first);
            boolean from = canAccessPeer.test(first, d);
            if (to && from) {
                ways.add(Way.PEER);
                why.append("; GPU ").append(d).append(" by peer copy (cudaDeviceCanAccessPeer both ways)");
            } else {
                ways.add(Way.HOST_STAGED);
                why.append("; GPU ").append(d).append(" through pinned host memory (cudaDeviceCanAccessPeer(").append(to ? first : d)
                        .append(", ").append(to ? d : first).append(") is false)");
            }
        }
        return new FanOutPlan(devices, ways, why.toString());
    }

    /** @return whether any member gets its copy through pinned host memory */
    boolean staged() {
        return ways.contains(Way.HOST_STAGED);
    }
}
