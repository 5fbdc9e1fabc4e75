#!/bin/bash
# GPU machine side: unpacks the Fashion-MNIST IDX files that `pack.sh --fmnist DIR` carried as xz into
# $1 (default /tmp/fashion-mnist) as plain IDX files, which the IDX reader and the PyTorch script both read.
# Python's lzma module does the decoding (the machine may lack the xz tool).
set -euo pipefail
cd "$(dirname "$0")/../.."
dst="${1:-/tmp/fashion-mnist}"
mkdir -p "$dst"
python3 - "$dst" .device/data/fashion-mnist/*.xz <<'PY'
import lzma, os, shutil, sys
for src in sys.argv[2:]:
    with lzma.open(src) as i, open(os.path.join(sys.argv[1], os.path.basename(src)[:-3]), "wb") as o:
        shutil.copyfileobj(i, o)
PY
ls -l "$dst"
