"""A user's script for `python -m layoutprof block_script.py` (scripts/package-check.sh): three
calls of the Block model, each of which copies once (a reshape after a transpose).

    python block_script.py                   runs the script
    python block_script.py --check r.json    checks the report python -m layoutprof wrote of it
                                             (the defaults: 1 warm-up call, 1 recorded); exits 1
                                             naming what is wrong. Needs no torch.
"""
import json
import os
import sys


def run():
    import torch

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from block_model import Block

    model = Block().eval()
    with torch.no_grad():
        for _ in range(3):
            model(torch.randn(2, 8, 16))
    print("block_script: 3 calls")


def check(path):
    r = json.load(open(path))
    run_info, copies = r["run"], r["summary"]["copies"]
    modules = {row["module"] for row in r["modules"]}
    got = (run_info["status"], run_info["model_format"], run_info["model"], run_info["calls_recorded"],
           copies["implicit_layout"], "proj" in modules)
    want = ("ok", "eager", "Block", 1, 1, True)
    if got != want:
        print(f"block_script: report (status, format, model, calls, implicit copies, proj row) {got}, want {want}")
        return 1
    print(f"block_script: report of torch {run_info['torch_version']}: {copies['implicit_layout']} implicit copy, as expected")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--check"]:
        sys.exit(check(sys.argv[2]))
    run()
