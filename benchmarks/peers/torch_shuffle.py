#!/usr/bin/env python3
"""Peer: PyTorch DataLoader with a global shuffle over the same .npy shards, as issue 10 item 4 describes it.

A BatchSampler over a random permutation of every record of every shard (RandomSampler, seeded), and ONE fetch
per batch: the dataset's __getitem__ receives the batch's global indices, maps them to (shard, row), and gathers
each shard's rows with one np.take(arr, rows, axis=0) from np.load(mmap_mode='r'), each shard's rows written
straight into its slice of the batch (records of a batch come grouped by shard: still the sampler's random set).
num_workers=8 (persistent across rounds), pin_memory=True, .to('cuda', non_blocking=True) per batch, each batch
dropped at once (no compute), torch.cuda.synchronize() at the end of each round.

A round is one epoch, timed from iter(loader) (the first round includes starting the workers) to the
synchronize after the last batch. Prints one JSON line: medians over the rounds of records/s, GB/s (1e9 useful
bytes per second) and CPU seconds per GB (this process, all its threads, plus the worker processes, from
/proc/PID/stat), and the per-round values.

usage: torch_shuffle.py DIR [--batch-bytes 16777216] [--workers 8] [--column data] [--seed 0] [--rounds 1]
"""
import argparse
import glob
import json
import os
import resource
import statistics
import sys
import time

import numpy as np


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description="PyTorch DataLoader, global shuffle, one np.take per shard per batch")
    ap.add_argument("dir", help="directory of COLUMN-NNNNN.npy shards (all the same record shape and dtype)")
    ap.add_argument("--batch-bytes", type=int, default=16 << 20,
                    help="target bytes per batch; records per batch = this // record bytes, at least 1 (default 16 MiB)")
    ap.add_argument("--workers", type=int, default=8, help="DataLoader worker processes (default 8)")
    ap.add_argument("--column", default="data", help="shard file prefix (default data: data-00000.npy, ...)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the sampler's generator (each round draws the next permutation)")
    ap.add_argument("--rounds", type=int, default=1, help="epochs, each timed; medians are reported (default 1)")
    a = ap.parse_args(argv)
    if a.batch_bytes < 1:
        ap.error("--batch-bytes must be at least 1, got %d" % a.batch_bytes)
    if a.workers < 0:
        ap.error("--workers must be 0 or more, got %d" % a.workers)
    if a.rounds < 1:
        ap.error("--rounds must be at least 1, got %d" % a.rounds)
    return a


class Shards:
    """The shards of one column as one indexable set of records; __getitem__ takes a list of global indices."""

    def __init__(self, files):
        if not files:
            raise ValueError("no shards given")
        self.files = files
        self.arrays = None  # opened lazily in each worker (a memmap does not cross the fork as an open mapping)
        first = np.load(files[0], mmap_mode="r")
        self.record_shape, self.dtype = first.shape[1:], first.dtype
        lengths = []
        for f in files:
            a = np.load(f, mmap_mode="r")
            if a.shape[1:] != self.record_shape or a.dtype != self.dtype:
                raise ValueError("%s: records of shape %s %s, expected %s %s like %s"
                                 % (f, a.shape[1:], a.dtype, self.record_shape, self.dtype, files[0]))
            lengths.append(a.shape[0])
        self.starts = np.cumsum([0] + lengths).astype(np.int64)
        self.record_bytes = int(first.dtype.itemsize * int(np.prod(self.record_shape, dtype=np.int64)))

    def __len__(self):
        return int(self.starts[-1])

    def gather(self, idx):
        """The records of the global indices idx as one array (grouped by shard, in idx's order within a shard)."""
        if self.arrays is None:
            self.arrays = [np.load(f, mmap_mode="r") for f in self.files]
        idx = np.asarray(idx, dtype=np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= len(self)):
            raise IndexError("record index out of 0..%d" % (len(self) - 1))
        shard = np.searchsorted(self.starts, idx, side="right") - 1
        order = np.argsort(shard, kind="stable")
        shard, rows = shard[order], idx[order] - self.starts[shard[order]]
        out = np.empty((idx.size,) + self.record_shape, dtype=self.dtype)
        cuts = np.flatnonzero(np.diff(shard)) + 1
        for lo, hi in zip(np.concatenate(([0], cuts)), np.concatenate((cuts, [idx.size]))):
            if hi > lo:  # one np.take per shard, straight into the batch (mode clip: indices were checked above)
                np.take(self.arrays[shard[lo]], rows[lo:hi], axis=0, out=out[lo:hi], mode="clip")
        return out

    def __getitem__(self, idx):
        import torch
        return torch.from_numpy(self.gather(idx))


def worker_cpu_seconds(pids):
    """utime + stime of the given processes, seconds (from /proc/PID/stat); processes that are gone count 0."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick  # fields 14 and 15 of proc(5), after pid and comm
        except (OSError, IndexError, ValueError):
            pass
    return total


def self_cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(argv=None):
    a = parse_args(argv)
    import torch
    from torch.utils.data import BatchSampler, DataLoader, RandomSampler

    files = sorted(glob.glob(os.path.join(a.dir, a.column + "-*.npy")))
    if not files:
        sys.exit("torch_shuffle.py: no %s-*.npy shards in %s" % (a.column, a.dir))
    ds = Shards(files)
    batch = max(1, a.batch_bytes // ds.record_bytes)
    torch.cuda.init()
    torch.empty(1, device="cuda")  # the context exists before the first round is timed
    g = torch.Generator()
    g.manual_seed(a.seed)  # each epoch draws the next permutation from it
    sampler = BatchSampler(RandomSampler(ds, generator=g), batch_size=batch, drop_last=False)
    loader = DataLoader(ds, sampler=sampler, batch_size=None, num_workers=a.workers, pin_memory=True,
                        persistent_workers=a.workers > 0)
    rounds = []
    for r in range(a.rounds):
        cpu0, n, records = self_cpu_seconds(), 0, 0
        t0 = time.perf_counter()
        it = iter(loader)
        pids = [w.pid for w in getattr(it, "_workers", [])]
        wcpu0 = worker_cpu_seconds(pids)
        for x in it:
            y = x.to("cuda", non_blocking=True)
            n += y.numel() * y.element_size()
            records += y.shape[0]
            del x, y  # released at once: no compute
        torch.cuda.synchronize()
        dt = time.perf_counter() - t0
        cpu = self_cpu_seconds() - cpu0 + worker_cpu_seconds(pids) - wcpu0
        rounds.append({"seconds": dt, "bytes": n, "records": records, "cpu_seconds": cpu})
        if records != len(ds):
            sys.exit("torch_shuffle.py: round %d delivered %d records, the shards hold %d" % (r, records, len(ds)))
        del it
    rps = [x["records"] / x["seconds"] for x in rounds]
    gbps = [x["bytes"] / x["seconds"] / 1e9 for x in rounds]
    cpu = [x["cpu_seconds"] / (x["bytes"] / 1e9) for x in rounds]
    print(json.dumps({
        "peer": "torch DataLoader (BatchSampler over a random permutation, one np.take per shard per batch from "
                "np.load(mmap_mode='r'), %d workers, pin_memory, .to(cuda, non_blocking))" % a.workers,
        "record_bytes": ds.record_bytes, "records": len(ds), "shards": len(files), "batch_records": batch,
        "batch_bytes": batch * ds.record_bytes, "workers": a.workers, "rounds": a.rounds,
        "records_per_s": statistics.median(rps), "gbps": statistics.median(gbps),
        "cpu_s_per_gb": statistics.median(cpu), "records_per_s_rounds": rps,
        "seconds_rounds": [x["seconds"] for x in rounds]}))


if __name__ == "__main__":
    main()
