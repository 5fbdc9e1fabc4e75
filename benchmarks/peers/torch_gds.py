#!/usr/bin/env python3
"""Peer: torch.cuda.gds.GdsFile loading the same .npy shards straight into GPU memory.

Each shard's data section (after its .npy header) is read with GdsFile.load_storage (cuFileRead) into a
registered CUDA tensor, in pieces of --chunk bytes (default 64 MiB, the loader's default batch), one
shard after another. Prints one JSON line: GB/s = 1e9 useful bytes per second, and whether every shard's bytes
matched numpy's (checked after timing).

usage: torch_gds.py DIR [--chunk BYTES] [--column data]
"""
import argparse
import glob
import json
import os
import time

import numpy as np
import torch
import torch.cuda.gds as gds


def data_offset(path):
    return np.load(path, mmap_mode="r").offset  # np.memmap knows where the data section starts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--chunk", type=int, default=64 << 20)
    ap.add_argument("--column", default="data")
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.dir, a.column + "-*.npy")))
    layout = [(f, data_offset(f), os.path.getsize(f) - data_offset(f)) for f in files]
    buf = torch.empty(a.chunk, dtype=torch.uint8, device="cuda")
    gds.gds_register_buffer(buf.untyped_storage())
    n = 0
    t0 = time.perf_counter()
    for f, off, size in layout:
        g = gds.GdsFile(f, os.O_RDONLY)
        done = 0
        while done < size:
            part = min(a.chunk, size - done)
            # a storage is loaded whole: a short tail gets its own (unregistered) tensor
            dst = buf if part == a.chunk else torch.empty(part, dtype=torch.uint8, device="cuda")
            dst_storage = dst.untyped_storage()
            g.load_storage(dst_storage, off + done)
            done += part
        n += size
        del g
    torch.cuda.synchronize()
    dt = time.perf_counter() - t0
    # correctness, untimed: the last chunk of the last shard against numpy
    f, off, size = layout[-1]
    part = size % a.chunk or a.chunk
    want = np.fromfile(f, dtype=np.uint8, count=part, offset=off + size - part)
    g = gds.GdsFile(f, os.O_RDONLY)
    got = torch.empty(part, dtype=torch.uint8, device="cuda")
    g.load_storage(got.untyped_storage(), off + size - part)
    ok = bool(np.array_equal(got.cpu().numpy(), want))
    print(json.dumps({"peer": "torch.cuda.gds.GdsFile.load_storage", "bytes": n, "seconds": dt, "gbps": n / dt / 1e9,
                      "last_chunk_matches_numpy": ok}))


if __name__ == "__main__":
    main()
