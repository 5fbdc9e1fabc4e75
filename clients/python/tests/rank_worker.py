#!/usr/bin/env python3
"""One rank of a multi-process job, as torchrun would start it (RANK / WORLD_SIZE / LOCAL_RANK in the
environment): reads epochs of a dataset through FlightLoader, checks every batch byte-exact against the .npy files
on disk, and saves each epoch's non-padding record indices to OUT-epochE.npy for the parent to check the union.

Usage: rank_worker.py LOCATION DATASET_DIR DELIVERY BATCH_SIZE EPOCHS OUT_PREFIX
"""

import os
import sys

import numpy as np

from harness import EpochCheck, read_npy_dataset

from gdsloader_client import FlightLoader


def main() -> int:
    location, data, delivery, batch, epochs, out = sys.argv[1:7]
    ref = read_npy_dataset(data)
    with FlightLoader(location, os.path.basename(data), int(batch), shuffle=True, seed=21, delivery=delivery,
                      output="torch", reconnect_deadline=60, wait_timeout=60) as loader:
        for epoch in range(int(epochs)):
            loader.set_epoch(epoch)
            chk = EpochCheck(ref, f"rank {loader.rank} epoch {epoch}")
            for b in loader:
                chk.add(b, epoch=epoch)
            np.save(f"{out}-epoch{epoch}.npy", chk.all_records())
            print(f"rank {loader.rank}/{loader.world_size} epoch {epoch}: {chk.batches} batches, {chk.rows} rows "
                  f"byte-exact ({delivery})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
