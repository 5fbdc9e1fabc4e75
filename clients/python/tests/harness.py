"""Test harness for the Python client against the real Java server: datasets written with numpy (and by
``gdsloader generate``), ``./gdsloader serve`` started, killed (-9) and restarted on loopback, and byte-exact
checks of every batch against the files on disk.

No test framework: :func:`test` registers a function, :func:`main` runs the selected ones, prints PASS / FAIL /
SKIP per test with the reason, and exits 1 if any failed (or was skipped while ``REQUIRE_GPU=1`` and it needed
the GPU).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
# The checkout whose ./gdsloader the tests run (default: the one these tests are in).
REPO = os.path.abspath(os.environ.get("GDSLOADER_REPO") or os.path.join(HERE, "..", "..", ".."))


def gdsloader_command() -> List[str]:
    """How to run the gds-loader CLI here: ``GDSLOADER_CMD`` (split on spaces) if set; else ``./gdsloader`` when the
    repository is built (``cli/target``); else, on the GPU machine, the jars ``benchmarks/device/pack.sh`` carried
    in ``.device/`` (``java @.device/jvm-flags -cp '.device/lib/*' dev.gdsloader.cli.GdsLoaderMain``, with the java
    that ``source .device/env.sh`` put on PATH)."""
    if os.environ.get("GDSLOADER_CMD"):
        return os.environ["GDSLOADER_CMD"].split()
    built = [f for f in glob.glob(os.path.join(REPO, "cli", "target", "gds-loader-cli-*.jar"))
             if not re.search(r"-(sources|javadoc|tests|test-sources)\.jar$", f)]
    device = os.path.join(REPO, ".device")
    if not built and os.path.isdir(os.path.join(device, "lib")) and os.path.isfile(os.path.join(device, "jvm-flags")):
        java = shutil.which("java") or os.path.join(os.environ.get("JAVA_HOME", "/usr"), "bin", "java")
        return [java, "@" + os.path.join(device, "jvm-flags"), "-cp", os.path.join(device, "lib", "*"),
                "dev.gdsloader.cli.GdsLoaderMain"]
    return [os.path.join(REPO, "gdsloader")]


GDSLOADER = gdsloader_command()


class Skip(Exception):
    """A test that cannot run here (reason in the message)."""


# ---------------------------------------------------------------------------------------------------------------
# Datasets


def write_npy_dataset(path: str, n_records: int, shard_sizes: Sequence[int], columns: Dict[str, Tuple[str, tuple]],
                      seed: int = 0) -> Dict[str, np.ndarray]:
    """Writes ``<column>-<NNNNN>.npy`` shards (record i of every column = sample i) and returns the full columns.

    :param columns: name -> (numpy dtype string, per-record shape)
    """
    assert sum(shard_sizes) == n_records, (shard_sizes, n_records)
    os.makedirs(path, exist_ok=True)
    rng = np.random.default_rng(seed)
    full = {}
    for name, (dtype, shape) in columns.items():
        dt = np.dtype(dtype)
        if dt.kind == "b":
            arr = rng.integers(0, 2, size=(n_records,) + tuple(shape)).astype(dt)
        elif dt.kind in "iu":
            info = np.iinfo(dt)
            arr = rng.integers(info.min, info.max, size=(n_records,) + tuple(shape), dtype=dt, endpoint=True)
        else:
            arr = (rng.standard_normal(size=(n_records,) + tuple(shape)) * 100).astype(dt)
        if name == "labels":  # a recognisable column: the record index itself
            arr = np.arange(n_records, dtype=dt).reshape((n_records,) + tuple(shape))
        full[name] = arr
        start = 0
        for i, k in enumerate(shard_sizes):
            np.save(os.path.join(path, f"{name}-{i:05d}.npy"), arr[start:start + k])
            start += k
    return full


def read_npy_dataset(path: str) -> Dict[str, np.ndarray]:
    """Every column of a directory of ``<column>-<NNNNN>.npy`` shards, shards concatenated in order (the files
    on disk are the reference the checks compare with)."""
    cols: Dict[str, List[str]] = {}
    for f in sorted(glob.glob(os.path.join(path, "*.npy"))):
        m = re.match(r"(.+)-(\d{5})\.npy$", os.path.basename(f))
        if m:
            cols.setdefault(m.group(1), []).append(f)
    if not cols:
        raise AssertionError(f"no <column>-<NNNNN>.npy shards in {path}")
    return {name: np.concatenate([np.load(f) for f in files]) for name, files in cols.items()}


def generate_dataset(path: str, size: str, record_bytes: str, shards: int) -> None:
    """``gdsloader generate --format npy`` (the project's own generator)."""
    run(GDSLOADER + ["generate", "--out", path, "--size", size, "--record-bytes", record_bytes, "--shards",
         str(shards), "--format", "npy", "--overwrite"])


def run(cmd: Sequence[str], timeout: float = 600) -> str:
    p = subprocess.run(list(cmd), cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout)
    if p.returncode != 0:
        raise AssertionError(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-3000:]}")
    return p.stdout


# ---------------------------------------------------------------------------------------------------------------
# Server


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve_help() -> str:
    return subprocess.run(GDSLOADER + ["serve", "--help"], cwd=REPO, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=120).stdout


class Server:
    """``./gdsloader serve ROOT --port PORT [extra]`` in its own process group (so ``kill -9`` takes the JVM, not
    just the launch script). Output is kept for failure reports."""

    def __init__(self, root: str, port: Optional[int] = None, extra: Sequence[str] = ()):
        self.root = root
        self.port = port or free_port()
        self.extra = list(extra) + os.environ.get("GDSLOADER_SERVE_EXTRA", "").split()
        self.proc: Optional[subprocess.Popen] = None
        self.output: List[str] = []
        self.starts = 0

    @property
    def location(self) -> str:
        return f"grpc+tcp://127.0.0.1:{self.port}"

    def start(self, timeout: float = 90) -> "Server":
        cmd = GDSLOADER + ["serve", self.root, "--port", str(self.port)] + self.extra
        self.proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     start_new_session=True)
        self.starts += 1
        proc = self.proc
        threading.Thread(target=self._pump, args=(proc,), daemon=True).start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                time.sleep(0.2)
                raise AssertionError(f"server exited {proc.returncode} while starting: {' '.join(cmd)}\n"
                                     + self.tail())
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.1)
        self.kill9()
        raise AssertionError(f"server not listening on port {self.port} after {timeout} s\n" + self.tail())

    def _pump(self, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            self.output.append(line.rstrip("\n"))
            if os.environ.get("GDSLOADER_TEST_VERBOSE"):
                print(f"    [server:{self.port}] {line.rstrip()}")

    def tail(self, n: int = 40) -> str:
        return "\n".join("    | " + line for line in self.output[-n:])

    def kill9(self) -> None:
        """SIGKILL to the server's process group (the JVM dies without any shutdown hook)."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill9()

    def __enter__(self) -> "Server":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


# ---------------------------------------------------------------------------------------------------------------
# Checks


def to_numpy(x: Any) -> np.ndarray:
    """A host numpy copy/view of a tensor or array from any delivery (torch CPU/CUDA, CuPy, numpy)."""
    if hasattr(x, "detach"):
        return x.detach().cpu().numpy()
    if type(x).__module__.startswith("cupy"):
        import cupy
        return cupy.asnumpy(x)
    return np.asarray(x)


class EpochCheck:
    """Collects one epoch's batches (possibly from several ranks) and checks them against the reference columns:
    each row's bytes equal the record its ``_record`` names, padding rows are flagged, and (``finish``) the
    non-padding records are exactly 0..N-1, each once."""

    def __init__(self, ref: Dict[str, np.ndarray], name: str = "", columns: Optional[Sequence[str]] = None):
        self.ref = ref
        self.name = name
        self.columns = list(columns) if columns is not None else list(ref)
        self.records: List[np.ndarray] = []
        self.batches = 0
        self.rows = 0
        self.bytes = 0

    def add(self, batch: Any, epoch: Optional[int] = None) -> None:
        recs = to_numpy(batch.records).astype(np.int64)
        pad = to_numpy(batch.is_padding).astype(bool)
        if epoch is not None and batch.epoch != epoch:
            raise AssertionError(f"{self.name}: batch {batch.index} is of epoch {batch.epoch}, expected {epoch}")
        if len(recs) != batch.rows or len(pad) != batch.rows:
            raise AssertionError(f"{self.name}: batch {batch.index}: {len(recs)} records / {len(pad)} padding flags "
                                 f"for {batch.rows} rows")
        if int(pad.sum()) != batch.padding:
            raise AssertionError(f"{self.name}: batch {batch.index}: padding {batch.padding} but {int(pad.sum())} "
                                 f"rows flagged")
        if set(batch.keys()) != set(self.columns):
            raise AssertionError(f"{self.name}: batch columns {sorted(batch.keys())}, expected {sorted(self.columns)}")
        for name in self.columns:
            got = to_numpy(batch[name])
            exp = self.ref[name][recs]
            if got.dtype != exp.dtype or got.shape != exp.shape:
                raise AssertionError(f"{self.name}: batch {batch.index} column '{name}': {got.dtype}{list(got.shape)}, "
                                     f"expected {exp.dtype}{list(exp.shape)}")
            if got.tobytes() != exp.tobytes():
                bad = [int(r) for i, r in enumerate(recs) if got[i].tobytes() != exp[i].tobytes()]
                raise AssertionError(f"{self.name}: batch {batch.index} column '{name}': bytes differ from the files "
                                     f"on disk for records {bad[:10]} ({len(bad)} of {len(recs)} rows)")
            self.bytes += got.nbytes
        self.records.append(recs[~pad])
        self.batches += 1
        self.rows += batch.rows

    def all_records(self) -> np.ndarray:
        return np.concatenate(self.records) if self.records else np.zeros(0, np.int64)

    def finish(self, n_records: Optional[int] = None) -> np.ndarray:
        n = len(next(iter(self.ref.values()))) if n_records is None else n_records
        got = self.all_records()
        counts = np.bincount(got, minlength=n) if got.size else np.zeros(n, np.int64)
        missing = np.flatnonzero(counts[:n] == 0)
        dup = np.flatnonzero(counts > 1)
        if got.size and (got.min() < 0 or got.max() >= n):
            raise AssertionError(f"{self.name}: record indices outside [0, {n}): {got.min()}..{got.max()}")
        if missing.size or dup.size:
            raise AssertionError(f"{self.name}: not every record exactly once: {missing.size} missing (e.g. "
                                 f"{missing[:8].tolist()}), {dup.size} more than once (e.g. {dup[:8].tolist()}); "
                                 f"{got.size} records in {self.batches} batches")
        return got


def cuda_ready() -> Optional[str]:
    """None if CUDA_IPC can run here (torch with CUDA and CuPy), else why not."""
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "CuPy sees no GPU"
    except Exception as e:
        return f"CuPy unavailable: {e}"
    try:
        import torch
        if not torch.cuda.is_available():
            return "torch.cuda.is_available() is False"
    except Exception as e:
        return f"torch unavailable: {e}"
    return None


# ---------------------------------------------------------------------------------------------------------------
# Runner

_TESTS: List[Tuple[str, Callable[[], None], bool]] = []


def test(name: str, gpu: bool = False):
    def wrap(fn):
        _TESTS.append((name, fn, gpu))
        return fn
    return wrap


def main(argv: Sequence[str]) -> int:
    only = [a for a in argv if not a.startswith("-")]
    require_gpu = os.environ.get("REQUIRE_GPU", "0") == "1"
    results = []
    for name, fn, gpu in _TESTS:
        if only and not any(o in name for o in only):
            continue
        t0 = time.monotonic()
        print(f"---- {name}", flush=True)
        try:
            if gpu:
                why = cuda_ready()
                if why:
                    raise Skip(why)
            fn()
            status, detail = "PASS", ""
        except Skip as e:
            status, detail = ("FAIL" if gpu and require_gpu else "SKIP"), f"skipped: {e}"
        except BaseException as e:  # a failing test must not stop the others
            if isinstance(e, KeyboardInterrupt):
                raise
            status, detail = "FAIL", f"{type(e).__name__}: {e}"
            traceback.print_exc()
        dt = time.monotonic() - t0
        print(f"{status} {name} ({dt:.1f} s){': ' + detail if detail else ''}", flush=True)
        results.append((status, name, detail))
    print("\n==== summary")
    for status, name, detail in results:
        print(f"{status} {name}{'  -- ' + detail.splitlines()[0] if detail else ''}")
    n_fail = sum(1 for s, _, _ in results if s == "FAIL")
    n_pass = sum(1 for s, _, _ in results if s == "PASS")
    n_skip = sum(1 for s, _, _ in results if s == "SKIP")
    print(f"==== {n_pass} passed, {n_fail} failed, {n_skip} skipped")
    return 1 if n_fail or not results else 0
