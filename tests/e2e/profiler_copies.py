#!/usr/bin/env python3
"""The copies torch.profiler sees in one call of a TorchScript model, per class, with the
torch matching the LibTorch under test, at each of the given intra-op thread counts:
an independent reference for layoutprof's counts (samples/make_samples.py classifies them).

usage: profiler_copies.py [--warmup=N] MODEL THREADS[,THREADS...] INPUT_SPEC...
(N warm-up calls before the profiled one; default make_samples.WARMUP_CALLS)
prints {"THREADS": {"implicit_layout": N, ...}, ...} as JSON
"""
import collections
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "samples"))
import torch  # noqa: E402
import make_samples  # noqa: E402


def main() -> int:
    args = sys.argv[1:]
    warmup = make_samples.WARMUP_CALLS
    if args and args[0].startswith("--warmup="):
        warmup = int(args.pop(0).split("=", 1)[1])
    model, threads, specs = args[0], [int(t) for t in args[1].split(",")], args[2:]
    module = torch.jit.load(model)
    module.eval()
    out = {}
    for t in threads:
        torch.set_num_threads(t)
        torch.manual_seed(0)
        inputs = [make_samples.make_input(s) for s in specs]
        with torch.no_grad():
            for _ in range(warmup):
                try:
                    module(*inputs)
                except RuntimeError:
                    break
            found, _ = make_samples.profile_copies(module, inputs)
        counts = collections.Counter(c.cls for c in found)
        out[str(t)] = {k: counts.get(k, 0) for k in make_samples.copies()}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
