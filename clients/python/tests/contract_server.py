#!/usr/bin/env python3
"""A small pure-Python implementation of the Flight contract (protocol v4), for checking the client on a machine
without the Java build or a GPU (CUDA_IPC's message flow with shared-memory files standing in for GPU slots). It is NOT the product: the real tests (flight_tests.py) run
the Java server. It serves ``<column>-<NNNNN>.npy`` datasets under a root: GetFlightInfo (schema, one endpoint,
batchesPerEpoch), DoGet of one epoch (sequential or a seeded global shuffle; EXACT_ONCE rank split), batch
app_metadata with a resumable state, and resume from that state.

Usage: python3 contract_server.py ROOT PORT [--token TOKEN] [--delay-ms N]
"""

import glob
import json
import os
import re
import sys
import time

import numpy as np
import pyarrow as pa
import pyarrow.flight as fl

PROTOCOL_VERSION = 4

ARROW = {"|b1": (pa.bool_(), "BOOL"), "|i1": (pa.int8(), "INT8"), "|u1": (pa.uint8(), "UINT8"),
         "<i2": (pa.int16(), "INT16"), "<u2": (pa.uint16(), "UINT16"), "<i4": (pa.int32(), "INT32"),
         "<u4": (pa.uint32(), "UINT32"), "<i8": (pa.int64(), "INT64"), "<u8": (pa.uint64(), "UINT64"),
         "<f2": (pa.float16(), "FLOAT16"), "<f4": (pa.float32(), "FLOAT32"), "<f8": (pa.float64(), "FLOAT64")}


def load(root, name):
    path = os.path.join(root, name)
    if not os.path.isdir(path) or "/" in name or name.startswith("."):
        raise KeyError(f"dataset '{name}' not found")
    cols = {}
    for f in sorted(glob.glob(os.path.join(path, "*.npy"))):
        m = re.match(r"(.+)-(\d{5})\.npy$", os.path.basename(f))
        if m:
            cols.setdefault(m.group(1), []).append(np.load(f))
    return {k: np.concatenate(v) for k, v in cols.items()}


def schema_of(cols):
    fields = []
    for name, arr in cols.items():
        t, dname = ARROW[arr.dtype.str]
        shape = list(arr.shape[1:])
        n = int(np.prod(shape)) if shape else 1
        ft = pa.list_(t, n) if n > 1 else t
        fields.append(pa.field(name, ft, nullable=False,
                               metadata={"gdsloader.dtype": dname, "gdsloader.shape": json.dumps(shape)}))
    fields += [pa.field("_record", pa.int64(), nullable=False), pa.field("_padding", pa.bool_(), nullable=False)]
    return pa.schema(fields, metadata={"gdsloader.version": str(PROTOCOL_VERSION)})


def state_after(b, epoch, n, bs, sampler):
    """The LoaderState after batch b; after an epoch's last batch it names the next epoch, as the Java loader's."""
    last = b + 1 == -(-n // bs)
    return {"version": 2, "epoch": epoch + 1 if last else epoch, "batchesConsumed": 0 if last else b + 1,
            "records": n, "batchSize": bs, "sampler": sampler}


def order(n, sampler, epoch):
    idx = np.arange(n)
    if sampler.get("shuffle", "NONE") == "GLOBAL":
        idx = np.random.default_rng([sampler.get("seed", 0), epoch]).permutation(n)
    w, r = sampler.get("worldSize", 1), sampler.get("rank", 0)
    base, extra = divmod(n, w)
    start = r * base + min(r, extra)
    return idx[start:start + base + (1 if r < extra else 0)]


class Server(fl.FlightServerBase):
    def __init__(self, root, port, token=None, delay=0.0):
        super().__init__(f"grpc+tcp://127.0.0.1:{port}", middleware={"headers": _HeaderFactory()})
        self.root, self.token, self.delay = root, token, delay

    def _auth(self, context):
        if self.token is None:
            return
        got = dict((k, v) for k, v in ((k.lower(), v) for k, v in _headers(context)))
        if got.get("authorization") != f"Bearer {self.token}":
            raise fl.FlightUnauthenticatedError("missing or wrong bearer token")

    def do_exchange(self, context, descriptor, reader, writer):
        """CUDA_IPC's message flow with host shared-memory files standing in for GPU slots (no GPU needed): each
        batch's columns are written into a free slot file, the 64-byte "ipcHandle" names that file, and a slot is
        reused only after the client's {"release": id}; at most prefetchDepth slots are lent at once."""
        import base64
        import threading
        self._auth(context)
        req = self._request(descriptor.command, ipc=True)
        cols = load(self.root, req["dataset"])
        epoch, bs = req.get("epoch", 0), req["options"]["batchSize"]
        sampler = req["options"].get("sampler", {})
        depth = req["options"].get("prefetchDepth", 4)
        idx = order(len(next(iter(cols.values()))), sampler, epoch)
        first = 0 if req.get("state") is None else req["state"]["batchesConsumed"]
        slot_bytes = sum(a[0].nbytes for a in cols.values()) * bs
        slot_dir = os.environ.get("CONTRACT_SLOT_DIR", "/dev/shm")
        # a handle is the slot file's name (<= 64 bytes) in CONTRACT_SLOT_DIR, which the client's process shares
        slots = [os.path.join(slot_dir, f"gdsl-contract-{os.getpid()}-{id(req) % 10**9}-{k}") for k in range(depth)]
        for path in slots:
            with open(path, "wb") as f:
                f.truncate(max(slot_bytes, 1))
        lent = {}  # batch id -> slot
        cv = threading.Condition()
        done = []

        def releases():
            try:
                while True:
                    chunk = reader.read_chunk()
                    msg = json.loads(bytes(chunk.app_metadata))
                    with cv:
                        if msg.get("release") not in lent:
                            raise ValueError(f"release of unknown batch {msg}")
                        lent.pop(msg["release"])
                        cv.notify_all()
            except StopIteration:
                pass
            finally:
                with cv:
                    done.append(True)
                    cv.notify_all()
        t = threading.Thread(target=releases, daemon=True)
        t.start()
        schema = pa.schema([pa.field("_record", pa.int64(), nullable=False),
                            pa.field("_padding", pa.bool_(), nullable=False)])
        writer.begin(schema)
        try:
            for b in range(first, -(-len(idx) // bs)):
                if self.delay:
                    time.sleep(self.delay)
                with cv:
                    while len(lent) >= depth and not done:
                        cv.wait()
                    if done:
                        return
                    slot = next(k for k in range(depth) if k not in lent.values())
                    lent[b] = slot
                rec = idx[b * bs:(b + 1) * bs]
                columns, offset = [], 0
                with open(slots[slot], "r+b") as f:
                    for name, arr in cols.items():
                        data = np.ascontiguousarray(arr[rec])
                        f.seek(offset)
                        f.write(data.tobytes())
                        handle = os.path.basename(slots[slot]).encode().ljust(64, b"\0")
                        columns.append({"name": name, "dtype": ARROW[arr.dtype.str][1], "shape": list(data.shape),
                                        "bytes": data.nbytes, "offset": offset, "device": 0,
                                        "ipcHandle": base64.b64encode(handle).decode()})
                        offset += data.nbytes
                state = state_after(b, epoch, len(idx), bs, sampler)
                meta = {"id": b, "epoch": epoch, "index": b, "padding": 0, "state": state, "columns": columns,
                        "event": None}
                rb = pa.RecordBatch.from_arrays([pa.array(rec, pa.int64()), pa.array(np.zeros(len(rec), bool))],
                                                schema=schema)
                writer.write_with_metadata(rb, json.dumps(meta).encode())
            # the end message (protocol 4), then the call stays open until the client half-closes: it maps the slots
            # until it has released every batch and unmapped them
            writer.write_metadata(json.dumps({"end": True, "batches": -(-len(idx) // bs) - first}).encode())
            with cv:
                while not done:
                    cv.wait()
        finally:
            for path in slots:
                try:
                    os.unlink(path)
                except OSError:
                    pass

    def _request(self, raw, ipc=False):
        req = json.loads(raw)
        unknown = set(req) - {"version", "dataset", "options", "delivery", "epoch", "state"}
        if unknown:
            raise pa.ArrowInvalid(f"unknown request field(s) {sorted(unknown)}")
        if req.get("version") != PROTOCOL_VERSION:
            raise pa.ArrowInvalid(f"version {req.get('version')} is not {PROTOCOL_VERSION}")
        if ipc is not None and req.get("delivery", "HOST") != ("CUDA_IPC" if ipc else "HOST"):
            raise pa.ArrowInvalid(f"delivery {req.get('delivery')} on the wrong RPC")
        bad = set(req["options"]) - {"batchSize", "sampler", "columns", "prefetchDepth", "device"}
        if bad:
            raise pa.ArrowInvalid(f"unknown option(s) {sorted(bad)}")
        return req

    def get_flight_info(self, context, descriptor):
        self._auth(context)
        req = self._request(descriptor.command, ipc=None)
        cols = load(self.root, req["dataset"])
        n = len(order(len(next(iter(cols.values()))), req["options"].get("sampler", {}), req.get("epoch", 0)))
        bs = req["options"]["batchSize"]
        meta = json.dumps({"pathTaken": "HOST", "pathReason": "contract server", "batchesPerEpoch": -(-n // bs)})
        ep = fl.FlightEndpoint(descriptor.command, [])
        return fl.FlightInfo(schema_of(cols), descriptor, [ep], n, -1, app_metadata=meta)

    def do_get(self, context, ticket):
        self._auth(context)
        req = self._request(ticket.ticket)
        cols = load(self.root, req["dataset"])
        epoch, bs = req.get("epoch", 0), req["options"]["batchSize"]
        sampler = req["options"].get("sampler", {})
        idx = order(len(next(iter(cols.values()))), sampler, epoch)
        first = 0
        if req.get("state") is not None:
            st = req["state"]
            if st["epoch"] != epoch:
                raise pa.ArrowInvalid("state of another epoch")
            first = st["batchesConsumed"]
        schema = schema_of(cols)

        def gen():
            for b in range(first, -(-len(idx) // bs)):
                if self.delay:
                    time.sleep(self.delay)
                rec = idx[b * bs:(b + 1) * bs]
                arrays = []
                for name, arr in cols.items():
                    f = schema.field(name)
                    flat = pa.array(arr[rec].reshape(-1), type=f.type.value_type if pa.types.is_fixed_size_list(f.type)
                                    else f.type)
                    arrays.append(pa.FixedSizeListArray.from_arrays(flat, f.type.list_size)
                                  if pa.types.is_fixed_size_list(f.type) else flat)
                arrays += [pa.array(rec, pa.int64()), pa.array(np.zeros(len(rec), bool))]
                state = state_after(b, epoch, len(idx), bs, sampler)
                meta = json.dumps({"epoch": epoch, "index": b, "padding": 0, "state": state}).encode()
                yield pa.RecordBatch.from_arrays(arrays, schema=schema), meta
        return fl.GeneratorStream(schema, gen())


def _headers(context):
    try:
        hs = context.get_middleware("headers")
        if hs is not None:
            return hs.items()
    except Exception:
        pass
    return []


class _HeaderMiddleware(fl.ServerMiddleware):
    def __init__(self, headers):
        self.headers = headers

    def items(self):
        return [(k, v[0] if isinstance(v, list) else v) for k, v in self.headers.items()]


class _HeaderFactory(fl.ServerMiddlewareFactory):
    def start_call(self, info, headers):
        return _HeaderMiddleware(headers)


if __name__ == "__main__":
    root, port = sys.argv[1], int(sys.argv[2])
    token = sys.argv[sys.argv.index("--token") + 1] if "--token" in sys.argv else None
    delay = float(sys.argv[sys.argv.index("--delay-ms") + 1]) / 1000 if "--delay-ms" in sys.argv else 0.0
    s = Server(root, port, token, delay)
    print(f"contract server: serving {root} on 127.0.0.1:{port}", flush=True)
    s.serve()
