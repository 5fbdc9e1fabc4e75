#!/usr/bin/env python3
"""The PyTorch twin of FashionMnistGpuTraining: the same 784-256-128-10 MLP (ReLU, softmax cross-entropy,
SGD lr 0.01 momentum 0.9, He-normal weights, zero biases, batch 64, shuffled every epoch), fed by PyTorch's
DataLoader (pinned memory, non_blocking copies), trained on the GPU. Prints per epoch the same line as the
Java sample: loss, test accuracy, samples/s, and the share of the epoch the loop waited for data.

    python3 samples/python/fashion_mnist_mlp.py IDX_DIR [EPOCHS] [WORKERS]

IDX_DIR holds the four Fashion-MNIST IDX files (plain or .gz). Format: http://yann.lecun.com/exdb/mnist/
(big-endian header: magic 0x00000803/0x00000801, dimensions, then uint8 data).
"""
import gzip
import os
import struct
import sys
import time

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def read_idx(directory, stem):
    for name, opener in ((stem, open), (stem + ".gz", gzip.open)):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            with opener(path, "rb") as f:
                data = f.read()
            magic, = struct.unpack(">I", data[:4])
            dims = magic & 0xFF
            shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
            return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)
    raise FileNotFoundError(os.path.join(directory, stem))


def main():
    idx = sys.argv[1]
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    workers = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    torch.manual_seed(7)
    dev = torch.device("cuda")
    train = TensorDataset(torch.from_numpy(read_idx(idx, "train-images-idx3-ubyte").reshape(-1, 784).copy()),
                          torch.from_numpy(read_idx(idx, "train-labels-idx1-ubyte").astype(np.int64)))
    test_x = torch.from_numpy(read_idx(idx, "t10k-images-idx3-ubyte").reshape(-1, 784).copy()).to(dev)
    test_y = torch.from_numpy(read_idx(idx, "t10k-labels-idx1-ubyte").astype(np.int64)).to(dev)
    loader = DataLoader(train, batch_size=64, shuffle=True, num_workers=workers, pin_memory=True,
                        persistent_workers=workers > 0)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128), nn.ReLU(), nn.Linear(128, 10)).to(dev)
    for m in model:
        if isinstance(m, nn.Linear):
            nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            nn.init.zeros_(m.bias)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    lossf = nn.CrossEntropyLoss()
    print("torch", torch.__version__, "device", torch.cuda.get_device_name(0), "workers", workers)
    for epoch in range(epochs):
        model.train()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        waited = 0.0
        seen = 0
        total_loss = torch.zeros((), device=dev)
        steps = 0
        it = iter(loader)
        while True:
            w0 = time.perf_counter()
            try:
                x, y = next(it)
            except StopIteration:
                break
            waited += time.perf_counter() - w0
            x = x.to(dev, non_blocking=True).float().div_(255.0)
            y = y.to(dev, non_blocking=True)
            loss = lossf(model(x), y)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total_loss += loss.detach()
            steps += 1
            seen += y.shape[0]
        torch.cuda.synchronize()
        seconds = time.perf_counter() - t0
        model.eval()
        with torch.no_grad():
            acc = (model(test_x.float().div(255.0)).argmax(1) == test_y).float().mean().item()
        print("epoch %d: loss %.4f, test accuracy %.4f, %.0f samples/s, waited for data %.1f%% of the epoch"
              % (epoch, (total_loss / steps).item(), acc, seen / seconds, 100 * waited / seconds), flush=True)


if __name__ == "__main__":
    main()
