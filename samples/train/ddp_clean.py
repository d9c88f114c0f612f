"""The same DDP training job as ddp_warns.py, fed NCHW batches: no DDP warning.

Every gradient comes in its parameter's own layout, so AccumulateGrad copies none and DDP's
bucket views match every gradient's strides.

Run (CPU, gloo, loopback): torchrun --standalone --nproc-per-node 2 samples/train/ddp_clean.py
(or python samples/train/ddp_clean.py: a job of one process).
Options: --steps N (default 3), --batch N (default 4).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ddp_warns import train  # noqa: E402

if __name__ == "__main__":
    train(channels_last=False)
