#!/usr/bin/env python3
"""Compares the layout copies of two layoutprof reports of the same model: each copy's module
path, class and bytes, as multisets. Used by scripts/packaging.sh: the C++ API's sample program
(samples/cpp) against the command, on the same TorchScript model.

    compare_copies.py COMMAND.json SAMPLE.json [--skip-module M]... [--interrupted R.json]

--skip-module: a row of the second report's own (the sample's "preprocess" scope), left out.
--interrupted: a report that must say status interrupted (a session never stopped).
Exit 0 when they match, 1 with the differences otherwise.
"""
import argparse
import collections
import json
import sys


def copies(path, skip=()):
    with open(path) as f:
        report = json.load(f)
    ops = report["ops"]
    rows = (ops["modules"][ops["rows"][c["op"]][2]] for c in report["copies"])
    found = collections.Counter((module, c["class"], c["bytes"]) for module, c in zip(rows, report["copies"]))
    return collections.Counter({k: n for k, n in found.items() if k[0] not in skip}), report


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("expected")
    parser.add_argument("actual")
    parser.add_argument("--skip-module", action="append", default=[])
    parser.add_argument("--interrupted")
    args = parser.parse_args()
    expected, _ = copies(args.expected)
    actual, report = copies(args.actual, args.skip_module)
    ok = True
    if not expected:
        print(f"{args.expected}: no copies to compare")
        ok = False
    if expected != actual:
        print(f"copies differ: only in {args.expected}: {dict(expected - actual)}; only in {args.actual}: "
              f"{dict(actual - expected)}")
        ok = False
    if not any(k[0] in args.skip_module for k in copies(args.actual)[0]) and args.skip_module:
        print(f"{args.actual}: no copy in {args.skip_module}")
        ok = False
    if args.interrupted:
        with open(args.interrupted) as f:
            status = json.load(f)["run"]["status"]
        if status != "interrupted":
            print(f"{args.interrupted}: status {status}, not interrupted")
            ok = False
    if ok:
        print(f"same copies ({sum(expected.values())}: {sorted(expected)}); {report['run']['model']} in process, "
              f"status {report['run']['status']}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
