"""A DDP training job whose parameters change layout before or after DDP is built.

DDP builds its gradient buckets from the parameters' strides when it is constructed, and once
more as a later forward begins (the second; later with --static-graph). A parameter laid out
otherwise since gives DDP a .grad in its new layout, and DDP warns "Grad strides do not match
bucket view strides"; a .grad kept across steps (--keep-grads: zero_grad(set_to_none=False))
stays in its old layout, and AccumulateGrad warns "grad and param do not obey the gradient layout
contract". The changes (--change):
- regularised: each conv weight is normalised per output channel and written back as the
  normalising code leaves it, permuted (`lyr.weight.data = w.view(...).permute(3, 2, 0, 1)`);
- channels_last: the first conv's weight is made channels_last;
- sliced: the classifier's weight becomes a slice of a larger tensor (not dense);
- none.
--when: before (DDP is built after the change), built (right after DDP is built), step1 (after
the first optimizer step). --channels-last-input feeds channels_last batches (the depthwise
weight's gradient then differs on its size-1 dim).

Run (CPU, gloo): python samples/train/ddp_changed.py --change regularised --when step1
(a job of one process), or under torchrun --standalone --nproc-per-node 2.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, classes=6):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)  # depthwise: weight [8, 1, 3, 3]
        self.fc = nn.Linear(8, classes)

    def forward(self, x):
        x = F.relu(self.dw(F.relu(self.conv(x))))
        return self.fc(x.mean((2, 3)))


@torch.no_grad()
def regularise(model):
    """Each conv weight scaled to unit norm per output channel (kh, kw, in, out order)."""
    for lyr in (model.conv, model.dw):
        out, cin, kh, kw = lyr.weight.shape
        w = lyr.weight.permute(2, 3, 1, 0).reshape(-1, out)
        w = w / w.norm(dim=0, keepdim=True)
        lyr.weight.data = w.view(kh, kw, cin, out).permute(3, 2, 0, 1)


@torch.no_grad()
def change(model, how):
    if how == "regularised":
        regularise(model)
    elif how == "channels_last":
        model.conv.weight.data = model.conv.weight.contiguous(memory_format=torch.channels_last)
    elif how == "sliced":
        model.fc.weight.data = torch.randn(model.fc.out_features, 16)[:, :model.fc.in_features]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--change", choices=["regularised", "channels_last", "sliced", "none"], default="regularised")
    parser.add_argument("--when", choices=["before", "built", "step1"], default="step1")
    parser.add_argument("--static-graph", action="store_true")
    parser.add_argument("--keep-grads", action="store_true", help="zero_grad(set_to_none=False)")
    parser.add_argument("--channels-last-input", action="store_true")
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()

    if "RANK" not in os.environ:  # not started by torchrun: a job of one process
        os.environ.update(RANK="0", WORLD_SIZE="1", MASTER_ADDR="127.0.0.1",
                          MASTER_PORT=os.environ.get("MASTER_PORT", "29513"))
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = Net()
    if args.when == "before":
        change(model, args.change)
    ddp = nn.parallel.DistributedDataParallel(model, static_graph=args.static_graph)
    if args.when == "built":
        change(model, args.change)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01)
    for step in range(args.steps):
        x, y = torch.randn(4, 3, 8, 8), torch.randint(0, 6, (4,))
        if args.channels_last_input:
            x = x.contiguous(memory_format=torch.channels_last)
        loss = F.cross_entropy(ddp(x), y)
        optimizer.zero_grad(set_to_none=not args.keep_grads)
        loss.backward()
        optimizer.step()
        if step == 0 and args.when == "step1":
            change(model, args.change)
    print(f"{args.steps} steps, loss {loss.item():.2f}", flush=True)
    time.sleep(0.1)  # gloo's worker thread frees the last work first (see ddp_warns.py)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
