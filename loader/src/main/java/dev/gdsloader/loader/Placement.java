package dev.gdsloader.loader;

import dev.gdsloader.cuda.Cuda;
import dev.gdsloader.cuda.CudaDevice;
import dev.gdsloader.loader.topology.DevicePlacement;
import dev.gdsloader.loader.topology.PciTopology;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The builder's {@code deviceNearData}: the visible GPUs' bus ids from CUDA, their places and the dataset's block device
 * from this machine's sysfs, the choice by {@link DevicePlacement}. Stateless.
 */
final class Placement {
    private Placement() {
    }

    /**
     * @param data the dataset's directory (or shard)
     * @return the GPU nearest its block device, and why
     * @throws dev.gdsloader.cuda.CudaException if CUDA is unavailable
     */
    static DevicePlacement.Choice nearData(Path data) {
        Cuda.ensure();
        PciTopology sys = PciTopology.system();
        List<DevicePlacement.Gpu> gpus = new ArrayList<>();
        for (int i = 0; i < Cuda.availability().deviceCount(); i++) {
            Optional<PciTopology.PciLocation> at;
            try {
                at = sys.locate(CudaDevice.get(i).pciBusId());
            } catch (IllegalArgumentException e) {
                at = Optional.empty();
            }
            gpus.add(new DevicePlacement.Gpu(i, at));
        }
        Optional<PciTopology.BlockDevice> dev;
        try {
            dev = sys.blockDeviceOf(data);
        } catch (IOException e) {
            dev = Optional.empty();
        }
        return DevicePlacement.nearest(gpus, dev, data.toString());
    }
}
