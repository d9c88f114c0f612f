#!/usr/bin/python3
"""Build the TorchScript sample models that layoutprof is tested and demonstrated on.

Runs under Debian's torch 1.13 (/usr/bin/python3) and under a PyTorch 2.x wheel:

    /usr/bin/python3 samples/make_samples.py --out samples
    PY2 samples/make_samples.py --out samples --only sdpa_head_split,mha_batch_first
    PY samples/make_samples.py --out /tmp/samples_large --large --check

Every sample is a small nn.Module scripted with torch.jit.script (so the archive keeps
source ranges that layoutprof reports as file:line) and saved as NAME.pt. The small ones
are committed to git, scripted by 1.13 except those that need 2.x ops (min_torch 2), which a
2.x torch (PY2 above) scripts; --large adds resnet18, small_transformer and vit_b_16, which
are not committed. A sample this torch cannot make is skipped with its reason (in
unmade.json when a package it needs does not import). manifest.json (written next to the
models) is generated from the SAMPLES table: each family of samples is a module of its own,
samples/sample_*.py (its models and its SAMPLES list of Sample entries, sample_table.py's), and
FAMILIES below joins them.

The expected copy counts in that table were derived by hand from how ATen (CPU, 1.13, and
2.x where a sample's torch2 entry says it differs)
implements each op, following layoutprof's counting rules:

  * one copy = one aten::copy_ event during one forward() call, after 3 warm-up calls,
    under torch.no_grad() (the tool runs under a NoGradGuard);
  * the culprit is the outermost op on the RecordFunction stack with scope FUNCTION,
    i.e. the op the TorchScript interpreter called (the TorchScript "forward" range has
    scope TORCHSCRIPT_FUNCTION and is not an op);
  * the class is the first that matches:
      dtype_device     src dtype or device differs from dst
      broadcast        src has fewer elements than dst, or a zero stride on a dim of size > 1
      same_layout      src and dst strides equal once size-1 dims are dropped
      explicit_layout  culprit is contiguous, clone, copy_, to, _to_copy or type_as
      implicit_layout  any other culprit (reshape, matmul, conv2d, layer_norm, ...)

--check re-derives all of this from the profiler (independently of the C++ tool, in
sample_check.py): it walks torch.profiler's event tree, which, unlike function_events, records
strides and dtypes, classifies every aten::copy_ by the rules above and fails when the
hand-written expectations and the profiler disagree (total, class split or ok/failed status).
"""

import argparse
import importlib.abc
import importlib.machinery
import json
import os
import subprocess
import sys
from typing import List, Optional

import torch
from torch import nn

HERE = os.path.dirname(__file__)  # as this file was run: "samples" in the reproducible child
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.relpath(os.path.abspath(__file__), REPO_ROOT)  # samples/make_samples.py
CHILD_ENV = "LAYOUTPROF_MAKE_SAMPLES_CHILD"
SMALL_LIMIT_BYTES = 200 * 1024  # committed samples must stay small


class SampleModules(importlib.abc.MetaPathFinder):
    """Imports samples/sample_*.py by the path this file was run as, from wherever it was
    loaded (a script, or a test's spec_from_file_location). TorchScript and torch.export record
    each model's source file as Python compiled it: found on sys.path (or by
    spec_from_file_location), a module is compiled under its absolute path, machine-specific;
    found here, under "samples/NAME.py" in the child that writes the archives (run_reproducibly)."""

    def find_spec(self, name, path=None, target=None):
        file = os.path.join(HERE, name + ".py")
        if path is not None or not name.startswith("sample_") or not os.path.isfile(file):
            return None
        spec = importlib.machinery.ModuleSpec(name, importlib.machinery.SourceFileLoader(name, file), origin=file)
        spec.has_location = True  # __file__ = file, as given
        return spec


if not any(type(f).__name__ == "SampleModules" for f in sys.meta_path):  # once, if loaded again
    sys.meta_path.insert(0, SampleModules())

# The machinery (scripts and tests use it as make_samples.NAME: __all__ below).
from sample_table import COPY_CLASSES, DTYPES, Expect, Sample, copies, for_version, make_input  # noqa: E402
from sample_check import (WARMUP_CALLS, check, check_pt2, classify, profile_copies,  # noqa: E402
                          python_grad_verdicts, warmed_profile)
import sample_attention  # noqa: E402
import sample_causes  # noqa: E402
import sample_convs  # noqa: E402
import sample_export  # noqa: E402
import sample_gates  # noqa: E402
import sample_hazards  # noqa: E402
import sample_libraries  # noqa: E402
import sample_packages  # noqa: E402
import sample_ops  # noqa: E402
import sample_scripting  # noqa: E402
import sample_training  # noqa: E402
import sample_views  # noqa: E402
import sample_what_if  # noqa: E402


# ---------------------------------------------------------------------------------------
# The sample table: one entry per model, and the source of manifest.json.
# ---------------------------------------------------------------------------------------

# One module per family of samples (a new family: a sample_NAME.py here, imported above).
FAMILIES = (sample_views, sample_convs, sample_attention, sample_ops, sample_gates, sample_scripting,
            sample_training, sample_libraries, sample_export, sample_causes, sample_hazards, sample_what_if)

# The manifest's order of the samples that were in it when the families were split out (it
# keeps manifest.json's bytes); a sample not listed comes after them, in FAMILIES' order.
MANIFEST_ORDER = (
    "transpose_matmul", "transpose_bmm_free", "broadcast_matmul", "transpose_reshape",
    "permute_conv2d", "narrow_after_transpose", "explicit_contiguous", "expand_contiguous",
    "channel_shuffle", "attention", "channels_last_convnet", "view_fails", "defensive_clone",
    "dtype_cast", "scalar_arith", "noncontig_input", "cat_transposed", "slice_assign",
    "fresh_tensor", "gate_base", "gate_regressed", "sdpa_head_split", "mha_batch_first", "op_loop",
    "fork_wait", "grad_channels_last_input", "grad_channels_last_model", "grad_zoo", "resnet18",
    "small_transformer", "vit_b_16", "dynamic_batch", "cond_branch", "while_loop", "map_slices",
    "no_grad_block", "running_total", "batchnorm_train", "bert_encoder", "llama_decoder",
    "t5_encoder_decoder", "convnext_atto",
)


def joined_samples(families) -> List[Sample]:
    """The families' samples in the manifest's order; a name given twice is an error."""
    table = [s for family in families for s in family.SAMPLES]
    names = [s.name for s in table]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise SystemExit(f"make_samples: samples named twice: {', '.join(twice)}")
    rank = {name: i for i, name in enumerate(MANIFEST_ORDER)}
    return sorted(table, key=lambda s: rank.get(s.name, len(rank)))  # stable: the rest in order


SAMPLES = joined_samples(FAMILIES)

# What scripts and tests use as make_samples.NAME. Every family's models are make_samples.NAME
# too, as before the split (SmallTransformer for scripts/bench_in_process.py, ...).
__all__ = ["SAMPLES", "FAMILIES", "Sample", "Expect", "copies", "for_version", "make_input", "DTYPES",
           "COPY_CLASSES", "WARMUP_CALLS", "classify", "profile_copies", "warmed_profile",
           "python_grad_verdicts", "check", "check_pt2", "manifest", "built_module", "build", "build_pt2",
           "main"]
for _family in FAMILIES:
    globals().update({k: v for k, v in vars(_family).items()
                      if getattr(v, "__module__", None) == _family.__name__ and not k.startswith("_")})


def manifest() -> dict:
    """The manifest in a fixed key order, so regenerating it gives identical bytes. Each
    sample's `expect` lists what each LibTorch version does with it: the e2e tests take the
    first entry one of whose `torch` prefixes matches the LibTorch under test."""
    entries, pt2_only = [], []
    for s in SAMPLES:
        if s.pt2_only:
            pt2_only.append({"name": s.name, "large": s.large, "min_torch": s.min_torch,
                             "pt2": pt2_entry(s)})
            continue
        entries.append({
            "name": s.name,
            "file": s.name + ".pt",
            "large": s.large,
            "min_torch": s.min_torch,
            "inputs": list(s.inputs),
            "expect": [{"torch": prefixes, "status": e.status,
                        "copies": {k: e.copies[k] for k in COPY_CLASSES}, "why": e.why}
                       for prefixes, e in s.expectations()],
        })
        if s.grads is not None:
            entries[-1]["grads"] = [{"torch": prefixes, "verdicts": dict(v), "why": why}
                                    for prefixes, v, why in s.grad_expectations()]
        if s.causes is not None:
            entries[-1]["causes"] = list(s.causes)
        if s.hazards is not None:
            entries[-1]["hazards"] = list(s.hazards)
        if s.what_if is not None:
            entries[-1]["what_if"] = list(s.what_if)
        if s.exports:
            entries[-1]["pt2"] = pt2_entry(s)
    return {"schema": 2, "samples": entries, "pt2_samples": pt2_only}


def pt2_entry(s: Sample) -> dict:
    """A sample's torch.export program: its file, the inputs it was exported with (and is
    profiled on), and what LibTorch 2.x does with it (1.x refuses every .pt2)."""
    def entry(prefix: str, e: Expect) -> dict:
        return {"torch": [prefix], "status": e.status, "copies": {k: e.copies[k] for k in COPY_CLASSES},
                "why": e.why}
    return {"file": s.name + ".pt2", "inputs": s.pt2_specs(),
            "expect": [entry(prefix, e) for prefix, e in s.pt2_by_torch] + [entry("2", s.pt2_expected("2"))]}


# ---------------------------------------------------------------------------------------
# Generation
# ---------------------------------------------------------------------------------------

def built_module(sample: Sample) -> nn.Module:
    torch.manual_seed(0)
    model = sample.build().train(sample.train)
    # Inference samples: with frozen parameters no op sees a tensor that requires grad, so
    # the executed graph cannot depend on the caller's grad mode (--check verifies this).
    # Training samples keep requires_grad: their gradients are what they are for.
    if sample.grads is None:
        for p in model.parameters():
            p.requires_grad_(False)
    return model


def build_pt2(sample: Sample, out_dir: str) -> str:
    """NAME.pt2: torch.export.export on the sample's example inputs (seeded, in their layouts),
    saved with them, checked to load and to match the module."""
    model = built_module(sample)
    torch.manual_seed(0)
    inputs = tuple(make_input(spec) for spec in sample.pt2_specs())
    dynamic = None
    if sample.dynamic_batch:
        batch = torch.export.Dim("batch", min=1, max=1024)
        dynamic = tuple({0: batch} for _ in inputs)
    program = torch.export.export(model, inputs, dynamic_shapes=dynamic)
    if sample.decompose:
        program = program.run_decompositions()
    path = os.path.join(out_dir, sample.name + ".pt2")
    torch.export.save(program, path)
    loaded = torch.export.load(path).module()
    with torch.no_grad():
        got, want = loaded(*inputs), model(*inputs)
    for a, b in zip(torch.utils._pytree.tree_leaves(got), torch.utils._pytree.tree_leaves(want)):
        if isinstance(a, torch.Tensor) and not torch.allclose(a, b, rtol=1e-4, atol=1e-5):
            raise SystemExit(f"{path}: the saved program does not match the module "
                             f"(largest difference {(a - b).abs().max().item():.3g})")
    write_mutated_buffers(sample, program, path)
    return path


MUTATION_CALLS = 3


def write_mutated_buffers(sample: Sample, program, path: str) -> None:
    """NAME.pt2.buffers.json, for a program that mutates buffers: each one as eager PyTorch
    leaves it after MUTATION_CALLS calls of a fresh module on the inputs the archive stores.
    The runner's tests make layoutprof's executor do the same and compare."""
    mutated = sorted(set(program.graph_signature.buffers_to_mutate.values()))
    if not mutated:
        return
    model = built_module(sample)
    torch.manual_seed(0)
    inputs = tuple(make_input(spec) for spec in sample.pt2_specs())  # as build_pt2 made them
    with torch.no_grad():
        for _ in range(MUTATION_CALLS):
            model(*inputs)
    buffers = dict(model.named_buffers())
    doc = {"calls": MUTATION_CALLS,
           "buffers": {name: {"sizes": list(buffers[name].shape),
                              "values": buffers[name].detach().double().flatten().tolist()}
                       for name in mutated}}
    with open(path + ".buffers.json", "w") as f:
        json.dump(doc, f, indent=1)


def build(sample: Sample, out_dir: str) -> str:
    model = built_module(sample)
    scripted = torch.jit.script(model)
    path = os.path.join(out_dir, sample.name + ".pt")
    torch.jit.save(scripted, path)
    size = os.path.getsize(path)
    if not sample.large and size > SMALL_LIMIT_BYTES:
        raise SystemExit(f"{path}: {size} bytes, too large to commit")
    return path


def write_state_dict(out_dir: str) -> str:
    """A torch.save'd state_dict: a zip archive that is not TorchScript, for the bad-input
    tests (users hand those to a profiler more often than random bytes)."""
    torch.manual_seed(0)
    os.makedirs(os.path.join(out_dir, "not_torchscript"), exist_ok=True)
    path = os.path.join(out_dir, "not_torchscript", "state_dict.pt")
    torch.save(torch.nn.Linear(4, 4).state_dict(), path)
    return path


def write_refused_programs(out_dir: str) -> List[str]:
    """.pt2 programs layoutprof must refuse in one line (exit 3), for the bad-input tests: one
    calling a custom op whose library is not loaded (torch.library, defined here only), and
    transpose_reshape's program with its node's target rewritten to a higher-order op no
    executor knows."""
    import zipfile

    folder = os.path.join(out_dir, "not_torchscript")
    os.makedirs(folder, exist_ok=True)

    @torch.library.custom_op("layoutprof_test::scale", mutates_args=())
    def scale(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @scale.register_fake
    def _(x):
        return torch.empty_like(x)

    class CallsCustomOp(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.ops.layoutprof_test.scale(x)

    custom = os.path.join(folder, "custom_op.pt2")
    torch.export.save(torch.export.export(CallsCustomOp(), (torch.randn(2, 3),)), custom)

    source, unknown = os.path.join(out_dir, "transpose_reshape.pt2"), os.path.join(folder, "unknown_node.pt2")
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(unknown, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename.endswith("models/model.json"):
                data = data.replace(b'"torch.ops.aten.reshape.default"', b'"torch.ops.higher_order.layoutprof_unknown"')
            zout.writestr(item, data)
    return [custom, unknown]


def run_reproducibly(args) -> int:
    """Re-run this script in a child process whose archives are byte-for-byte reproducible.

    Two things would otherwise leak into the .pt files: TorchScript orders a module's
    Final constants by iterating a Python set, which follows the per-process string hash
    seed; and the debug info records the source file path as Python compiled it, which
    for a script is absolute (machine-specific). The child runs with a fixed hash seed,
    from the repository root, with this file compiled as samples/make_samples.py and the
    modules it imports as samples/sample_*.py (SampleModules).
    """
    env = dict(os.environ, PYTHONHASHSEED="0", **{CHILD_ENV: "1"})
    argv = ["--out", os.path.abspath(args.out)]
    argv += ["--large"] if args.large else []
    argv += ["--check"] if args.check else []
    argv += ["--only", args.only] if args.only else []
    code = (f"import runpy, sys; sys.argv[0] = {SCRIPT!r}; "
            f"runpy.run_path({SCRIPT!r}, run_name='__main__')")
    return subprocess.call([sys.executable, "-c", code] + argv, cwd=REPO_ROOT, env=env)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="directory for NAME.pt and manifest.json")
    parser.add_argument("--large", action="store_true",
                        help="also build the large samples (resnet18, small_transformer, "
                             "vit_b_16; not committed)")
    parser.add_argument("--only", metavar="NAME[,NAME...]",
                        help="build just these samples (e.g. the 2.x-only ones, with a 2.x torch)")
    parser.add_argument("--check", action="store_true",
                        help="profile every built sample and compare with the expectations")
    args = parser.parse_args(argv)
    if os.environ.get(CHILD_ENV) != "1":
        return run_reproducibly(args)

    os.makedirs(args.out, exist_ok=True)
    only = set(args.only.split(",")) if args.only else None
    unknown = (only or set()) - {s.name for s in SAMPLES}
    if unknown:
        parser.error(f"--only: no sample named {', '.join(sorted(unknown))}")
    major = int(torch.__version__.split(".")[0])
    chosen = []
    unmade = {}  # name -> why, for the samples this torch cannot make; the tests skip them
    for s in SAMPLES:
        if (only is not None and s.name not in only) or (only is None and s.large and not args.large):
            continue
        if s.min_torch > major:
            # Its archive calls ops this torch lacks: the committed file was made by a 2.x torch.
            print(f"skipped {s.name}: needs PyTorch {s.min_torch}.x to script, this is "
                  f"{torch.__version__}")
            continue
        if s.needs is not None:
            try:
                __import__(s.needs)
            except Exception as e:  # not installed, or built for another torch
                unmade[s.name] = (f"{s.needs} does not import beside torch {torch.__version__}: "
                                  f"{str(e).strip().splitlines()[-1] if str(e).strip() else type(e).__name__}")
                print(f"skipped {s.name}: {unmade[s.name]}")
                continue
        chosen.append(s)
    unmade_path = os.path.join(args.out, "unmade.json")
    if unmade:
        with open(unmade_path, "w", encoding="utf-8") as f:
            json.dump(unmade, f, indent=2, sort_keys=True)
            f.write("\n")
    elif only is None and os.path.exists(unmade_path):
        os.remove(unmade_path)  # a sample made now is not still listed
    paths = {}
    pt2_paths = {}
    for s in chosen:
        if not s.pt2_only:
            paths[s.name] = build(s, args.out)
            print(f"wrote {paths[s.name]} ({os.path.getsize(paths[s.name])} bytes)")
        if major >= 2 and s.exports:
            pt2_paths[s.name] = build_pt2(s, args.out)
            print(f"wrote {pt2_paths[s.name]} ({os.path.getsize(pt2_paths[s.name])} bytes)")
    if only is None:
        print(f"wrote {write_state_dict(args.out)}")
        if major >= 2 and "transpose_reshape" in pt2_paths:
            print(f"wrote {', '.join(write_refused_programs(args.out))}")
        if major >= 2 and "channels_last_convnet" in pt2_paths:
            packages = sample_packages.write_packages(args.out, pt2_paths["channels_last_convnet"])
            print(f"wrote {', '.join(packages)}")
    with open(os.path.join(args.out, "manifest.json"), "w", encoding="utf-8") as f:
        json.dump(manifest(), f, indent=2)
        f.write("\n")
    print(f"wrote {os.path.join(args.out, 'manifest.json')}")

    if args.check:
        ok = check([s for s in chosen if s.name in paths], paths)
        ok = check_pt2([s for s in chosen if s.name in pt2_paths], pt2_paths) and ok
        if not ok:
            print("check FAILED", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
