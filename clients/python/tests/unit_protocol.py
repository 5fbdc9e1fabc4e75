#!/usr/bin/env python3
"""Unit checks of the client's pure parts (no server, no pyarrow, no GPU): request building, metadata parsing,
DType / shape mapping, environment ranks, transient-failure classification, resume position and state_dict.

Run: python3 clients/python/tests/unit_protocol.py   (exit status 1 if any check failed)
"""

import base64
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

from gdsloader_client import protocol as P  # noqa: E402
from gdsloader_client.protocol import ProtocolError  # noqa: E402

RESULTS = []


def check(name):
    def wrap(fn):
        try:
            fn()
            RESULTS.append((name, None))
            print(f"PASS {name}")
        except Exception as e:  # report every failure, keep going
            RESULTS.append((name, e))
            print(f"FAIL {name}: {type(e).__name__}: {e}")
        return fn
    return wrap


def raises(exc, fn, *args, match=None, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc as e:
        if match is not None and match not in str(e):
            raise AssertionError(f"{exc.__name__} raised but message {str(e)!r} lacks {match!r}")
        return e
    raise AssertionError(f"{exc.__name__} not raised by {getattr(fn, '__name__', fn)}")


H64 = bytes(range(64))
H64B = base64.b64encode(H64).decode()


@check("request JSON matches the contract (version 4, options, delivery, epoch, state)")
def _():
    opts = P.loader_options(256, shuffle=True, seed=7, rank=1, world_size=4, partition="pad", drop_last=True,
                            columns=["images", "labels"], extra={"prefetchDepth": 8, "sampler": {"blockRecords": 3}})
    req = P.build_request("train", opts, delivery="cuda_ipc", epoch=2, state={"version": 2, "epoch": 2})
    got = json.loads(P.encode_request(req))
    assert got == {"version": 4, "dataset": "train",
                   "options": {"batchSize": 256,
                               "sampler": {"shuffle": "GLOBAL", "seed": 7, "rank": 1, "worldSize": 4,
                                           "partition": "PAD", "dropLast": True, "blockRecords": 3},
                               "columns": ["images", "labels"], "prefetchDepth": 8},
                   "delivery": "CUDA_IPC", "epoch": 2, "state": {"version": 2, "epoch": 2}}, got
    assert "state" not in P.build_request("t", opts)


@check("bad request arguments are refused naming the argument")
def _():
    raises(ValueError, P.loader_options, 0, match="batch_size")
    raises(ValueError, P.loader_options, 4, rank=2, world_size=2, match="rank")
    raises(ValueError, P.loader_options, 4, world_size=0, match="world_size")
    raises(ValueError, P.loader_options, 4, shuffle="RANDOM", match="shuffle")
    raises(ValueError, P.loader_options, 4, partition="SOME", match="partition")
    raises(ValueError, P.loader_options, 4, columns="images", match="columns")
    raises(ValueError, P.build_request, "", {}, match="dataset")
    raises(ValueError, P.build_request, "t", {}, delivery="GPU", match="delivery")
    raises(ValueError, P.build_request, "t", {}, epoch=-1, match="epoch")


@check("ticket_with_state keeps server-added fields and sets epoch/state")
def _():
    t = P.encode_request({"version": 4, "dataset": "d", "serverShard": 5, "epoch": 0})
    out = json.loads(P.ticket_with_state(t, {"batchesConsumed": 3}, 1))
    assert out == {"version": 4, "dataset": "d", "serverShard": 5, "epoch": 1, "state": {"batchesConsumed": 3}}
    assert "state" not in json.loads(P.ticket_with_state(P.encode_request(out), None, 1))
    raises(ProtocolError, P.ticket_with_state, b"\x00opaque", {}, 0, match="not UTF-8 JSON")
    raises(ProtocolError, P.ticket_with_state, b"[1]", {}, 0, match="not a JSON object")


@check("DType table: every contract name, its numpy view and size")
def _():
    expect = {"BOOL": ("|b1", 1), "INT8": ("|i1", 1), "UINT8": ("|u1", 1), "INT16": ("<i2", 2), "UINT16": ("<u2", 2),
              "INT32": ("<i4", 4), "UINT32": ("<u4", 4), "INT64": ("<i8", 8), "UINT64": ("<u8", 8),
              "FLOAT16": ("<f2", 2), "FLOAT32": ("<f4", 4), "FLOAT64": ("<f8", 8), "BFLOAT16": ("<u2", 2)}
    for name, (descr, size) in expect.items():
        dt = P.dtype_of(name)
        assert P.numpy_dtype(dt) == np.dtype(descr) and dt.itemsize == size == P.numpy_dtype(dt).itemsize, name
    assert P.dtype_of("u8").name == "UINT8" and P.dtype_of(b"F32").name == "FLOAT32"
    assert P.dtype_of("BF16").torch == "bfloat16" and not P.dtype_of("BF16").native_in_numpy
    raises(ProtocolError, P.dtype_of, "COMPLEX64", "column 'x'", match="column 'x'")


@check("column specs from field metadata: shape, element count, mismatch refused")
def _():
    s = P.column_spec("images", {b"gdsloader.dtype": b"UINT8", b"gdsloader.shape": b"[28,28]"}, 784)
    assert s.shape == (28, 28) and s.elements == 784 and s.record_bytes == 784
    s = P.column_spec("labels", {"gdsloader.dtype": "INT64", "gdsloader.shape": "[]"}, None)
    assert s.shape == () and s.elements == 1 and s.record_bytes == 8
    s = P.column_spec("f", {b"gdsloader.dtype": b"FLOAT32"}, 5)  # no shape: the list size
    assert s.shape == (5,)
    raises(ProtocolError, P.column_spec, "images", {b"gdsloader.dtype": b"UINT8", b"gdsloader.shape": b"[28,27]"},
           784, "fixed_size_list<item: uint8>[784]", match="756 elements")
    raises(ProtocolError, P.column_spec, "x", {}, None, match="gdsloader.dtype")
    raises(ProtocolError, P.column_spec, "x", {b"gdsloader.dtype": b"UINT8", b"gdsloader.shape": b"[2,-1]"}, 2,
           match="non-negative")
    raises(ProtocolError, P.parse_shape, "28x28", match="not a JSON array")


def host_meta(**kw):
    m = {"epoch": 1, "index": 4, "padding": 0, "state": {"version": 2, "epoch": 1, "batchesConsumed": 5}}
    m.update(kw)
    return json.dumps(m).encode()


def ipc_meta(**kw):
    m = json.loads(host_meta())
    m.update({"id": 9, "columns": [{"name": "x", "dtype": "UINT8", "shape": [3, 28, 28], "bytes": 2352,
                                    "offset": 4096, "ipcHandle": H64B, "device": 0}], "event": H64B})
    m.update(kw)
    return json.dumps(m).encode()


@check("HOST batch metadata parsed; missing or bad fields named")
def _():
    m = P.parse_batch_metadata(memoryview(host_meta()), "HOST")
    assert (m.epoch, m.index, m.padding, m.state["batchesConsumed"]) == (1, 4, 0, 5)
    raises(ProtocolError, P.parse_batch_metadata, None, match="without app_metadata")
    raises(ProtocolError, P.parse_batch_metadata, b"{", match="not UTF-8 JSON")
    raises(ProtocolError, P.parse_batch_metadata, host_meta(index=1.5), match="'index'")
    raises(ProtocolError, P.parse_batch_metadata, host_meta(padding=-1), match="'padding'")
    raises(ProtocolError, P.parse_batch_metadata, host_meta(epoch=True), match="'epoch'")
    raises(ProtocolError, P.parse_batch_metadata, host_meta(state=[1]), match="'state'")


@check("CUDA_IPC batch metadata: id, columns, 64-byte handles, event or null")
def _():
    m = P.parse_batch_metadata(ipc_meta(), "CUDA_IPC")
    c = m.columns[0]
    assert (m.id, c.name, c.dtype.name, c.shape, c.nbytes, c.offset, c.handle, c.device) == \
        (9, "x", "UINT8", (3, 28, 28), 2352, 4096, H64, 0)
    assert m.event == H64
    assert P.parse_batch_metadata(ipc_meta(event=None), "CUDA_IPC").event is None
    short = base64.b64encode(b"x" * 63).decode()
    raises(ProtocolError, P.parse_batch_metadata, ipc_meta(event=short), "CUDA_IPC", match="64 bytes")
    bad = json.loads(ipc_meta())
    bad["columns"][0]["bytes"] = 100
    raises(ProtocolError, P.parse_batch_metadata, json.dumps(bad).encode(), "CUDA_IPC", match="'bytes' says only 100")
    bad["columns"][0].update(bytes=2352, ipcHandle="@@not-base64@@")
    raises(ProtocolError, P.parse_batch_metadata, json.dumps(bad).encode(), "CUDA_IPC", match="base64")
    raises(ProtocolError, P.parse_batch_metadata, ipc_meta(columns=[]), "CUDA_IPC", match="columns")
    raises(ProtocolError, P.parse_batch_metadata, host_meta(), "CUDA_IPC", match="'id'")
    assert json.loads(P.release_message(9)) == {"release": 9}
    assert json.loads(P.release_message(9, b"\x01" * 64)) == {"release": 9, "event": base64.b64encode(b"\x01" * 64).decode()}
    assert P.is_end_message(b'{"end": true, "batches": 13}')
    assert not P.is_end_message(b'{"end": false}') and not P.is_end_message(b'{"release": 1}')
    assert not P.is_end_message(None) and not P.is_end_message(b"\xff not json") and not P.is_end_message(b"[1]")


@check("RANK / WORLD_SIZE / LOCAL_RANK from the environment")
def _():
    assert P.ranks_from_env({}) == (0, 1, 0)
    assert P.ranks_from_env({"RANK": "3", "WORLD_SIZE": "8", "LOCAL_RANK": "1"}) == (3, 8, 1)
    raises(ValueError, P.ranks_from_env, {"RANK": "x"}, match="RANK='x'")
    raises(ValueError, P.ranks_from_env, {"RANK": "2", "WORLD_SIZE": "2"}, match="RANK=2")
    raises(ValueError, P.ranks_from_env, {"WORLD_SIZE": "0"}, match="WORLD_SIZE=0")


@check("transient failures (reconnect) vs refusals (raise)")
def _():
    def mk(name, base=Exception):
        return type(name, (base,), {})
    assert P.is_transient(mk("FlightUnavailableError")("Flight returned unavailable error, with message: "
                                                       "server shutting down"))
    assert P.is_transient(mk("FlightInternalError")("Received RST_STREAM"))
    assert P.is_transient(mk("FlightServerError")("Flight RPC failed with message: Stream removed"))
    assert P.is_transient(ConnectionResetError("reset"))
    assert not P.is_transient(mk("FlightUnauthenticatedError")("no token"))
    assert not P.is_transient(mk("ArrowInvalid")("Flight returned invalid argument error: unknown option 'x'"))
    assert not P.is_transient(mk("ArrowKeyError")("not found: dataset 'nope'"))
    assert not P.is_transient(ProtocolError("batch index 3 repeats"))
    assert not P.is_transient(ValueError("shape"))
    # a connection refused at the server's connection limits is retried; its other RESOURCE_EXHAUSTED refusals are not
    assert P.is_transient(mk("ArrowInvalid")("gRPC returned resource exhausted error, with message: connection limit "
                                             "reached: 16 authenticated connections at once from 127.0.0.1 "
                                             "(ServerLimits.connectionsPerAddress, serve --max-connections-per-address)"))
    assert not P.is_transient(mk("ArrowInvalid")("gRPC returned resource exhausted error, with message: session limit "
                                                 "reached: 16 streams at once from one client (127.0.0.1)"))
    assert not P.is_transient(mk("ArrowInvalid")("gRPC returned resource exhausted error, with message: memory budget "
                                                 "of 1073741824 B exceeded"))


@check("backoff doubles to its cap; bad settings refused")
def _():
    g = P.backoff_delays(0.1, 1.0)
    got = [round(next(g), 3) for _ in range(7)]
    assert got == [0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0], got
    raises(ValueError, lambda: next(P.backoff_delays(0, 1)))
    raises(ValueError, lambda: next(P.backoff_delays(2, 1)))


def meta(epoch, index, state=True):
    return P.BatchMeta(epoch, index, 0, {"epoch": epoch, "batchesConsumed": index + 1} if state else None)


@check("position accepts only the next batch of its epoch (no gap, no repeat)")
def _():
    pos = P.Position(2)
    pos.accept(meta(2, 0))
    pos.accept(meta(2, 1))
    assert (pos.last_index, pos.batches, pos.state["batchesConsumed"]) == (1, 2, 2)
    raises(ProtocolError, pos.accept, meta(2, 1), match="repeats")
    raises(ProtocolError, pos.accept, meta(2, 3), match="skips")
    raises(ProtocolError, pos.accept, meta(3, 2), match="epoch 3")
    raises(ProtocolError, pos.accept, meta(2, 2, state=False), match="no 'state'")
    assert pos.last_index == 1  # refusals leave it unchanged
    pos.check(meta(2, 2))  # checking the next batch does not record it (resume stays before it)
    assert (pos.last_index, pos.batches, pos.state["batchesConsumed"]) == (1, 2, 2)
    assert not pos.endpoint_complete
    pos.accept(P.BatchMeta(2, 2, 0, {"epoch": 3, "batchesConsumed": 0}))  # the state after an epoch's last batch
    assert pos.endpoint_complete
    pos.next_endpoint()
    assert (pos.endpoint, pos.last_index, pos.state, pos.batches) == (1, -1, None, 3)
    assert not pos.endpoint_complete


FP = {"dataset": "train", "batchSize": 4, "sampler": {"shuffle": "GLOBAL", "seed": 1, "rank": 0, "worldSize": 2},
      "columns": None}


@check("state_dict round trip: mid-epoch, epoch boundary, JSON-serialisable")
def _():
    pos = P.Position(3)
    for i in range(5):
        pos.accept(meta(3, i))
    d = json.loads(json.dumps(P.make_state_dict(FP, 3, pos)))
    back = P.position_from_state_dict(d, FP)
    assert (back.epoch, back.endpoint, back.last_index, back.batches, back.state) == \
        (3, 0, 4, 5, {"epoch": 3, "batchesConsumed": 5})
    d0 = P.make_state_dict(FP, 4, None)
    assert (d0["epoch"], d0["state"], d0["last_index"]) == (4, None, -1)
    p0 = P.position_from_state_dict(d0, FP)
    assert (p0.epoch, p0.batches, p0.state) == (4, 0, None)
    d1 = P.make_state_dict(FP, 4, P.Position(4))  # started, nothing received yet: the epoch's start
    assert d1 == d0


@check("state_dict from another loader or malformed is refused naming the field")
def _():
    pos = P.Position(0)
    pos.accept(meta(0, 0))
    d = P.make_state_dict(FP, 0, pos)
    other = dict(FP, batchSize=8)
    raises(ValueError, P.position_from_state_dict, d, other, match="batchSize=4")
    other = dict(FP, sampler=dict(FP["sampler"], rank=1))
    raises(ValueError, P.position_from_state_dict, d, other, match="sampler")
    raises(ValueError, P.position_from_state_dict, dict(d, version=7), FP, match="version 7")
    raises(ValueError, P.position_from_state_dict, dict(d, epoch="1"), FP, match="'epoch'")
    raises(ValueError, P.position_from_state_dict, dict(d, state=None), FP, match="disagree")
    raises(ValueError, P.position_from_state_dict, [], FP, match="mapping")


if __name__ == "__main__":
    failed = [n for n, e in RESULTS if e is not None]
    print(f"\nunit_protocol: {len(RESULTS) - len(failed)} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)
