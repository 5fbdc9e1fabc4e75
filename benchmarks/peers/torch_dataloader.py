#!/usr/bin/env python3
"""Peer: PyTorch DataLoader over the same .npy shards, as people write it.

Memory-mapped np.load per shard, one record per __getitem__, num_workers=8, pin_memory=True, and
.to('cuda', non_blocking=True) per batch. Prints one JSON line: GB/s = 1e9 useful bytes per second, from the
first batch requested to the last batch on the GPU (torch.cuda.synchronize).

usage: torch_dataloader.py DIR [--batch N] [--workers 8] [--column data]
"""
import argparse
import glob
import json
import os
import time

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset


class Shards(Dataset):
    def __init__(self, files):
        self.files = files
        self.arrays = None  # opened lazily in each worker
        lengths = [np.load(f, mmap_mode="r").shape[0] for f in files]
        self.starts = np.cumsum([0] + lengths)

    def __len__(self):
        return int(self.starts[-1])

    def __getitem__(self, i):
        if self.arrays is None:
            self.arrays = [np.load(f, mmap_mode="r") for f in self.files]
        s = int(np.searchsorted(self.starts, i, side="right")) - 1
        return torch.from_numpy(np.array(self.arrays[s][i - self.starts[s]]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--batch", type=int, default=445)
    ap.add_argument("--workers", type=int, default=8)
    ap.add_argument("--column", default="data")
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.dir, a.column + "-*.npy")))
    loader = DataLoader(Shards(files), batch_size=a.batch, shuffle=False, num_workers=a.workers, pin_memory=True)
    torch.cuda.init()
    n = 0
    t0 = time.perf_counter()
    for x in loader:
        y = x.to("cuda", non_blocking=True)
        n += y.numel() * y.element_size()
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    print(json.dumps({"peer": "torch DataLoader (mmap np.load, 8 workers, pin_memory)", "bytes": n,
                      "seconds": dt, "gbps": n / dt / 1e9}))


if __name__ == "__main__":
    main()
