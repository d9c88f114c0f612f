"""A DDP training job that makes DDP warn "Grad strides do not match bucket view strides".

The seed's case: the batches are channels_last, the model's weights NCHW (the model was never
converted with model.to(memory_format=torch.channels_last)). Each convolution's backward gives
its weight's gradient in the input's layout, channels_last:
- conv.weight [16, 3, 3, 3]: that layout differs from NCHW on dims of size > 1, so AccumulateGrad
  copies the gradient back into NCHW every step (slower, and DDP sees a match);
- dw.weight [16, 1, 3, 3], depthwise: strides [9, 1, 3, 1] against NCHW [9, 9, 3, 1] differ on
  the size-1 dim only; AccumulateGrad keeps the gradient as it is, DDP compares every stride
  with the bucket view (the parameter's) and warns once per rank.

Run (CPU, gloo, loopback): torchrun --standalone --nproc-per-node 2 samples/train/ddp_warns.py
With layoutprof: torchrun --standalone --nproc-per-node 2 -m layoutprof --json r.json samples/train/ddp_warns.py
Without torchrun (python samples/train/ddp_warns.py) it is a job of one process.
Options: --steps N (default 3), --batch N (default 4).
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, 3, padding=1)
        self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)  # depthwise
        self.pw = nn.Conv2d(16, 32, 1)  # pointwise 1x1
        self.bn = nn.BatchNorm2d(32)
        self.fc = nn.Linear(32, classes)

    def forward(self, x):
        x = F.relu(self.conv(x))
        x = F.relu(self.dw(x))
        x = F.relu(self.bn(self.pw(x)))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def batch(size, channels_last):
    x = torch.randn(size, 3, 16, 16)
    return x.to(memory_format=torch.channels_last) if channels_last else x, torch.randint(0, 10, (size,))


def train(channels_last):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch", type=int, default=4)
    args = parser.parse_args()

    if "RANK" not in os.environ:  # not started by torchrun: a job of one process
        os.environ.update(RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1", MASTER_PORT="29512")
    dist.init_process_group("gloo")  # RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT from torchrun
    rank = dist.get_rank()
    torch.manual_seed(rank)
    ddp = nn.parallel.DistributedDataParallel(Net())
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    for _ in range(args.steps):
        x, y = batch(args.batch, channels_last)
        loss = F.cross_entropy(ddp(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"rank {rank}: {args.steps} steps, loss {loss.item():.2f}", flush=True)
    # torch 2.14 + gloo: the last allreduce's work holds a Python object that gloo's worker
    # thread frees afterwards, under the GIL; if Python is already shutting down, the process
    # aborts ("terminate called without an active exception", about 1 run in 10 here). A short
    # wait lets the worker finish first (0 aborts in 110 runs).
    time.sleep(0.1)
    dist.destroy_process_group()


if __name__ == "__main__":
    train(channels_last=True)
