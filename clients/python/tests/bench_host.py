#!/usr/bin/env python3
"""HOST delivery throughput of the Python client (pyarrow.flight DoGet) against ``./gdsloader serve`` on loopback.

Generates a dataset with ``gdsloader generate`` (unless --data names one), starts the server over its parent
directory (unless --location names a running one), reads one warm-up epoch, then --epochs measured epochs, and
prints records/s and GB/s (GB = 1e9 bytes of dataset columns delivered) per epoch and their median, for:

* ``loader``: FlightLoader, batches as numpy arrays (zero-copy views) or torch tensors (--output torch);
* ``raw``:    a bare pyarrow.flight do_get/read_chunk loop over the same ticket (no conversion, no checks): the
              transport ceiling the loader's own work is measured against.

The last line is ``BENCH_JSON {...}`` for scripts. Example (the lead runs the Java client on the same data):

    python3 clients/python/tests/bench_host.py --size 1GiB --record-bytes 150528 --batch-size 128 --epochs 3
"""

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

from harness import Server, generate_dataset

from gdsloader_client import FlightLoader
from gdsloader_client import protocol as P


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="existing dataset directory (default: generate one in a temporary directory)")
    ap.add_argument("--size", default="1GiB", help="generated dataset size (default 1GiB)")
    ap.add_argument("--record-bytes", default="150528", help="generated record size (default 150528)")
    ap.add_argument("--shards", type=int, default=8)
    ap.add_argument("--batch-size", type=int, default=128, help="records per batch (default 128)")
    ap.add_argument("--epochs", type=int, default=3, help="measured epochs after one warm-up epoch (default 3)")
    ap.add_argument("--output", choices=("numpy", "torch"), default="numpy")
    ap.add_argument("--location", help="a running server (grpc://host:port) serving the dataset's parent directory")
    ap.add_argument("--shuffle", action="store_true", help="GLOBAL shuffle (seed 1) instead of sequential")
    ap.add_argument("--prefetch-depth", type=int, default=None)
    ap.add_argument("--no-raw", action="store_true", help="skip the bare pyarrow loop")
    args = ap.parse_args()

    tmp = None
    if args.data:
        data = os.path.abspath(args.data)
    else:
        tmp = tempfile.mkdtemp(prefix="gdsloader-bench-")
        data = os.path.join(tmp, "bench")
        t0 = time.monotonic()
        generate_dataset(data, args.size, args.record_bytes, args.shards)
        print(f"generated {args.size} of {args.record_bytes}-byte records in {time.monotonic() - t0:.1f} s: {data}")
    server = None
    try:
        if args.location:
            location = args.location
        else:
            server = Server(os.path.dirname(data)).start()
            location = server.location
        name = os.path.basename(data)
        options = {"prefetchDepth": args.prefetch_depth} if args.prefetch_depth else None
        rows = []
        with FlightLoader(location, name, args.batch_size, shuffle=args.shuffle, seed=1, output=args.output,
                          options=options, environ={}) as loader:
            for epoch in range(args.epochs + 1):
                loader.set_epoch(epoch)
                t0 = time.perf_counter()
                records = nbytes = batches = 0
                for b in loader:
                    records += b.rows - b.padding
                    nbytes += sum(int(v.nbytes) for v in b.columns.values())
                    batches += 1
                dt = time.perf_counter() - t0
                tag = "warm-up" if epoch == 0 else f"epoch {epoch}"
                print(f"loader[{args.output}] {tag}: {records} records, {nbytes / 1e9:.3f} GB, {batches} batches in "
                      f"{dt:.3f} s: {records / dt:,.0f} records/s, {nbytes / dt / 1e9:.3f} GB/s", flush=True)
                if epoch > 0:
                    rows.append((records / dt, nbytes / dt / 1e9))
            path = loader.last_info.get("pathTaken")
        result = {"client": "python", "delivery": "HOST", "output": args.output, "batchSize": args.batch_size,
                  "epochs": args.epochs, "pathTaken": path,
                  "records_per_s": statistics.median(r for r, _ in rows),
                  "GBps": statistics.median(g for _, g in rows)}
        print(f"loader[{args.output}] median of {args.epochs} epochs: {result['records_per_s']:,.0f} records/s, "
              f"{result['GBps']:.3f} GB/s (path {path})")
        if not args.no_raw:
            import pyarrow.flight as fl
            client = fl.FlightClient(location)
            raw = []
            for epoch in range(args.epochs):
                opts = P.loader_options(args.batch_size, shuffle=args.shuffle, seed=1, extra=options)
                ticket = fl.Ticket(P.encode_request(P.build_request(name, opts, epoch=epoch)))
                t0 = time.perf_counter()
                reader = client.do_get(ticket)
                nbytes = rows_n = 0
                for chunk in reader:
                    rb = chunk.data
                    rows_n += rb.num_rows
                    nbytes += sum(rb.column(i).nbytes for i in range(rb.num_columns)
                                  if rb.schema.field(i).name not in (P.RECORD_COLUMN, P.PADDING_COLUMN))
                dt = time.perf_counter() - t0
                raw.append((rows_n / dt, nbytes / dt / 1e9))
                print(f"raw pyarrow epoch {epoch}: {rows_n / dt:,.0f} records/s, {nbytes / dt / 1e9:.3f} GB/s",
                      flush=True)
            client.close()
            result["raw_records_per_s"] = statistics.median(r for r, _ in raw)
            result["raw_GBps"] = statistics.median(g for _, g in raw)
            print(f"raw pyarrow median: {result['raw_records_per_s']:,.0f} records/s, {result['raw_GBps']:.3f} GB/s; "
                  f"loader/raw = {result['GBps'] / result['raw_GBps']:.2f}")
        print("BENCH_JSON " + json.dumps(result))
        return 0
    finally:
        if server is not None:
            server.stop()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
