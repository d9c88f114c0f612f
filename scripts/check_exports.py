#!/usr/bin/env python3
"""Profile the .pt2 samples that another PyTorch exported, and compare with the manifest.

usage: scripts/check_exports.py --layoutprof BUILD/layoutprof --samples DIR

DIR is what `samples/make_samples.py --out DIR [--large]` wrote when run by the Python of the
PyTorch whose exports are checked (2.9 to 2.14: torch.export's schema 8). Each NAME.pt2 listed
in DIR/manifest.json runs through layoutprof (its stored inputs' specs, two calls, one thread);
its exit status and its copies, class by class, must be the manifest's expectation for the
PyTorch that exported it (a release may write a different program for the same module: the
manifest says where). A manual check, not part of the test command: each
PyTorch release is a download of several GB (scripts/BENCHMARKS.md says which were checked).

Exit status: 0 every program as expected; 1 any differs (each listed); 2 bad arguments.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import zipfile


def libtorch_version(layoutprof: str) -> str:
    out = subprocess.run([layoutprof, "--version"], capture_output=True, text=True, check=True).stdout
    match = re.search(r"LibTorch ([0-9][^)\s]*)", out)
    if not match:
        sys.exit(f"check_exports: {layoutprof} --version names no LibTorch: {out.strip()}")
    return match.group(1)


def exported_by(path: str) -> str:
    """The torch_version the program's model.json records."""
    with zipfile.ZipFile(path) as z:
        name = next(n for n in z.namelist() if n.endswith("/models/model.json"))
        return json.loads(z.read(name))["torch_version"]


def expectation(pt2: dict, version: str) -> dict:
    """The first entry whose version prefix ("2", "2.15") matches `version`."""
    parts = version.split("+")[0].split(".")
    for e in pt2["expect"]:
        if any(p.split(".") == parts[:len(p.split("."))] for p in e["torch"]):
            return e
    raise LookupError(f"no expectation for programs of torch {version}")


def check(layoutprof: str, samples: str, entry: dict, work: str) -> str:
    """'' when the program runs as the manifest expects, else what differs."""
    pt2 = entry["pt2"]
    path = os.path.join(samples, pt2["file"])
    if not os.path.exists(path):
        return "not made (see the make_samples output)"
    report = os.path.join(work, entry["name"] + ".json")
    args = [layoutprof, path, "--json", report, "--iters", "2", "--threads", "1", "--no-counters"]
    for spec in pt2["inputs"]:
        args += ["--input", spec]
    run = subprocess.run(args, capture_output=True, text=True)
    want = expectation(pt2, exported_by(path))
    want_code = 0 if want["status"] == "ok" else 4
    if run.returncode != want_code:
        return f"exit {run.returncode}, expected {want_code}: {run.stderr.strip().splitlines()[-1:]}"
    with open(report, encoding="utf-8") as f:
        copies = json.load(f)["summary"]["copies"]
    if copies != want["copies"]:
        return f"copies {copies}, expected {want['copies']}"
    return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layoutprof", required=True)
    parser.add_argument("--samples", required=True)
    args = parser.parse_args()
    manifest_path = os.path.join(args.samples, "manifest.json")
    if not os.path.exists(manifest_path):
        parser.error(f"{manifest_path}: no manifest (run samples/make_samples.py --out {args.samples})")
    with open(manifest_path, encoding="utf-8") as f:
        manifest = json.load(f)
    unmade_path = os.path.join(args.samples, "unmade.json")
    unmade = {}
    if os.path.exists(unmade_path):  # samples whose model library that Python lacks
        with open(unmade_path, encoding="utf-8") as f:
            unmade = json.load(f)
    version = libtorch_version(args.layoutprof)
    entries = [e for key in ("samples", "pt2_samples") for e in manifest[key]
               if "pt2" in e and e["name"] not in unmade]
    failed = 0
    with tempfile.TemporaryDirectory() as work:
        for entry in entries:
            problem = check(args.layoutprof, args.samples, entry, work)
            print(f"{entry['name']}.pt2: {problem or 'as expected'}")
            failed += bool(problem)
    print(f"{len(entries) - failed} of {len(entries)} programs as expected (layoutprof on LibTorch {version}); "
          f"{len(unmade)} not made: {', '.join(sorted(unmade)) or 'none'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
