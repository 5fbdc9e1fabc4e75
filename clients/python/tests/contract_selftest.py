#!/usr/bin/env python3
"""The client against contract_server.py (a pure-Python implementation of the contract's HOST half) on loopback:
runs where pyarrow is installed but the Java build or a GPU is not. It checks the client's own logic (zero-copy
arrays, exactly once, ranks, checkpoint resume, reconnect after kill -9, refusals not retried, bearer token); the
Java server itself is tested by flight_tests.py.

Run: python3 clients/python/tests/contract_selftest.py   (exit status 1 if any check failed)
"""

import atexit
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

from harness import EpochCheck, free_port, main, read_npy_dataset, test, write_npy_dataset

from gdsloader_client import FlightLoader, ReconnectError

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = tempfile.mkdtemp(prefix="gdsloader-contract-")
ROOT = os.path.join(WORK, "root")
# the servers' slot files (a killed server leaves its own behind) go with the rest of WORK at exit
os.environ["CONTRACT_SLOT_DIR"] = os.path.join(WORK, "slots")
os.makedirs(os.environ["CONTRACT_SLOT_DIR"])
atexit.register(shutil.rmtree, WORK, True)
N = 3001
write_npy_dataset(os.path.join(ROOT, "m"), N, [1200, 801, 1000],
                  {"images": ("u1", (12, 10)), "labels": ("<i8", ()), "feats": ("<f4", (5,)), "b": ("|b1", (3,)),
                   "h": ("<f2", ())}, seed=1)
REF = read_npy_dataset(os.path.join(ROOT, "m"))


class ContractServer:
    def __init__(self, *extra):
        self.port = free_port()
        self.extra = list(extra)
        self.proc = None

    @property
    def location(self):
        return f"grpc://127.0.0.1:{self.port}"

    def start(self):
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "contract_server.py"), ROOT, str(self.port)]
                                     + self.extra, start_new_session=True, stdout=subprocess.DEVNULL)
        for _ in range(300):
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise AssertionError("contract server did not start")

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def __enter__(self):
        return self.start()

    def __exit__(self, *a):
        self.kill9()


def ld(server, batch, **kw):
    kw.setdefault("environ", {})
    kw.setdefault("output", "numpy")
    return FlightLoader(server.location, "m", batch, **kw)


@test("contract: HOST epoch exactly once, in order, zero-copy numpy views, len() = batchesPerEpoch")
def _():
    with ContractServer() as s, ld(s, 64) as loader:
        chk = EpochCheck(REF, "host")
        for b in loader:
            chk.add(b, 0)
            assert not b["images"].flags.owndata and not b["images"].flags.writeable, "images were copied"
        assert np.array_equal(chk.finish(), np.arange(N))
        assert len(loader) == chk.batches == 47 and loader.epoch == 1


@test("contract: torch output shares the Arrow memory and keeps dtypes (float16, bool)")
def _():
    try:
        import torch
    except ImportError as e:
        from harness import Skip
        raise Skip(f"no torch: {e}")
    with ContractServer() as s, ld(s, 500, output="torch") as loader:
        chk = EpochCheck(REF, "torch")
        for b in loader:
            assert b["h"].dtype == torch.float16 and b["b"].dtype == torch.bool and b["b"].shape[1:] == (3,)
            chk.add(b, 0)
        chk.finish()


@test("contract: 2 ranks x 2 shuffled epochs, exactly once per epoch")
def _():
    with ContractServer() as s:
        for epoch in range(2):
            union = EpochCheck(REF, f"epoch {epoch}")
            for r in range(2):
                with ld(s, 50, shuffle=True, seed=3, environ={"RANK": str(r), "WORLD_SIZE": "2"}) as loader:
                    loader.set_epoch(epoch)
                    for b in loader:
                        union.add(b, epoch)
            union.finish()


@test("contract: checkpoint mid-epoch (state_dict through JSON) resumes exactly once in a new loader")
def _():
    with ContractServer() as s:
        chk = EpochCheck(REF, "checkpoint")
        with ld(s, 64, shuffle=True, seed=9) as a:
            for i, b in enumerate(a):
                chk.add(b, 0)
                if i == 9:
                    break
            sd = json.loads(json.dumps(a.state_dict()))
        with ld(s, 64, shuffle=True, seed=9) as b_loader:
            b_loader.load_state_dict(sd)
            for b in b_loader:
                chk.add(b, 0)
        chk.finish()


@test("contract: kill -9 mid-epoch and restart on the same port: reconnects, exactly once")
def _():
    s = ContractServer("--delay-ms", "10").start()
    try:
        chk = EpochCheck(REF, "kill")
        with ld(s, 32, shuffle=True, seed=4, reconnect_deadline=30) as loader:
            for i, b in enumerate(loader):
                chk.add(b, 0)
                if i == 20:
                    s.kill9()
                    threading.Timer(1.0, s.start).start()
            assert loader.reconnects >= 1
        chk.finish()
    finally:
        time.sleep(1.5)
        s.kill9()


@test("contract: no server within reconnect_deadline -> ReconnectError (bounded)")
def _():
    s = ContractServer()  # never started
    t0 = time.monotonic()
    try:
        with ld(s, 8, reconnect_deadline=2.0, backoff_initial=0.05, backoff_max=0.5) as loader:
            list(iter(loader))
    except ReconnectError as e:
        assert "unreachable" in str(e), e
    else:
        raise AssertionError("no error without a server")
    assert 2.0 <= time.monotonic() - t0 < 10, time.monotonic() - t0


@test("contract: refusals are raised at once (unknown dataset, unknown option, missing token)")
def _():
    with ContractServer() as s:
        for kwargs, word in (({"dataset": "nope"}, "nope"), ({"options": {"noSuch": 1}}, "noSuch")):
            t0 = time.monotonic()
            try:
                name = kwargs.pop("dataset", "m")
                with FlightLoader(s.location, name, 8, environ={}, **kwargs) as loader:
                    list(iter(loader))
            except Exception as e:
                assert word in str(e), e
            else:
                raise AssertionError(f"{word} accepted")
            assert time.monotonic() - t0 < 5, "retried"
    with ContractServer("--token", "tok") as s:
        try:
            with ld(s, 500) as loader:
                list(iter(loader))
        except Exception as e:
            assert type(e).__name__ == "FlightUnauthenticatedError", type(e)
        else:
            raise AssertionError("no token accepted")
        with ld(s, 500, token="tok") as loader:
            assert sum(1 for _ in loader) == 7


class FileSlotsContext:
    """Stands in for cuda_ipc.IpcStreamContext against the contract server's CUDA_IPC flow: a "handle" names a
    slot file in CONTRACT_SLOT_DIR, mapped once per handle (np.memmap) and viewed at the column's offset. Lets the
    DoExchange flow (metadata, one mapping per slot, release after use, half-close, resume) run without a GPU;
    the real CuPy / DLPack path runs in flight_tests.py on the GPU machine."""

    opened = 0

    def __init__(self, device, output):
        self.maps = {}
        self.waits = 0

    def columns(self, meta):
        out = {}
        for c in meta.columns:
            m = self.maps.get(c.handle)
            if m is None:
                path = os.path.join(os.environ.get("CONTRACT_SLOT_DIR", "/dev/shm"), c.handle.rstrip(b"\0").decode())
                m = self.maps[c.handle] = np.memmap(path, mode="r")
                FileSlotsContext.opened += 1
            n = int(np.prod(c.shape))
            out[c.name] = np.frombuffer(m, dtype=np.dtype(c.dtype.numpy), count=n, offset=c.offset).reshape(c.shape)
        return out

    def wait_for_consumer(self):
        self.waits += 1

    def release_after_consumer(self):
        self.waits += 1
        return None  # file slots have no stream to order the release on: the release goes out at once

    def close_release_event(self):
        pass

    def close(self):
        self.maps.clear()


def with_file_slots(fn):
    from gdsloader_client import cuda_ipc
    real = cuda_ipc.IpcStreamContext
    cuda_ipc.IpcStreamContext = FileSlotsContext
    FileSlotsContext.opened = 0
    try:
        fn()
    finally:
        cuda_ipc.IpcStreamContext = real


@test("contract CUDA_IPC flow (file slots for GPU slots): exactly once, slots mapped once, released after use")
def _():
    def body():
        with ContractServer() as s, ld(s, 64, delivery="CUDA_IPC", options={"prefetchDepth": 3}) as loader:
            chk = EpochCheck(REF, "ipc flow")
            prev = None
            for b in loader:
                assert prev is None or prev.released, "the previous batch was not released when the next came"
                assert not b.released
                chk.add(b, 0)
                prev = b
            assert prev.released, "the last batch was not released at the end of the loop"
            chk.finish()
            assert FileSlotsContext.opened == 3, f"{FileSlotsContext.opened} mappings for 3 slots"
    with_file_slots(body)


@test("contract CUDA_IPC flow: explicit release, break and continue, kill -9 resume: exactly once")
def _():
    def body():
        s = ContractServer("--delay-ms", "10").start()
        try:
            chk = EpochCheck(REF, "ipc resume")
            with ld(s, 32, delivery="CUDA_IPC", shuffle=True, seed=2, reconnect_deadline=30,
                    options={"prefetchDepth": 2}) as loader:
                for i, b in enumerate(loader):
                    chk.add(b, 0)
                    b.release()
                    if i == 5:
                        break
                for i, b in enumerate(loader):
                    chk.add(b, 0)
                    if i == 20:
                        s.kill9()
                        threading.Timer(1.0, s.start).start()
                assert loader.reconnects >= 1
            chk.finish()
        finally:
            time.sleep(1.5)
            s.kill9()
    with_file_slots(body)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
