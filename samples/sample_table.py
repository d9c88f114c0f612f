"""The sample table's machinery, shared by make_samples.py and every sample family
(samples/sample_*.py): a Sample entry and what each LibTorch version does with it (Expect),
copies() for the counts per class, and the --input syntax of the manifest's inputs.

A family module defines its models and a SAMPLES list of Sample entries; make_samples.py joins
the lists into the table manifest.json is generated from."""

from typing import Callable, Dict, List, NamedTuple, Optional, Tuple

import torch
from torch import nn

COPY_CLASSES = ("implicit_layout", "explicit_layout", "broadcast", "dtype_device", "same_layout")


class Expect(NamedTuple):
    """What one LibTorch version does with a sample: ok (exit 0), failed (the model raises:
    exit 4) or too_new (the archive needs an op that version lacks: exit 3)."""
    copies: Dict[str, int]
    why: str
    status: str = "ok"


class Sample(NamedTuple):
    name: str
    build: Callable[[], nn.Module]
    inputs: List[str]
    copies: Dict[str, int]  # with why and status: what LibTorch 1.13 does (and 2.x, unless
    why: str                # torch2 says otherwise)
    status: str = "ok"
    large: bool = False
    torch2: Optional[Expect] = None  # where LibTorch 2.x executes the sample differently
    min_torch: int = 1  # the major version that can script it (2: its archive needs 2.x ops)
    needs: Optional[str] = None  # a package besides torch that builds the model
    # Training samples (--backward): each parameter's gradient verdict, and why. Their
    # parameters keep requires_grad; `copies` is still what a forward-only run copies.
    grads: Optional[Dict[str, str]] = None
    grads_why: str = ""
    grads2: Optional[Tuple[Dict[str, str], str]] = None  # (verdicts, why) where 2.x differs
    # torch.export: under 2.x the sample is also exported (torch.export.export on `pt2_inputs`,
    # or `inputs`) and saved as NAME.pt2, unless `exports` is False. `pt2` is what the program
    # does where it runs differently from the 2.x TorchScript archive (why derived by hand);
    # `pt2_only` samples have no TorchScript archive at all (cond, while_loop, map, ...).
    exports: bool = True
    pt2: Optional[Expect] = None
    pt2_inputs: Optional[List[str]] = None
    pt2_only: bool = False
    # Where a PyTorch release (a version prefix, "2.15") exports a different program: what that
    # program does, tried before `pt2` (the program a 2.x export writes otherwise).
    pt2_by_torch: Tuple[Tuple[str, Expect], ...] = ()
    dynamic_batch: bool = False  # dimension 0 of every input exported as dynamic
    decompose: bool = False      # the program after ep.run_decompositions()
    train: bool = False          # exported in train mode (every other sample: eval)
    # Causes (layoutprof's birthplaces): each cause the report must hold (sample_causes.cause),
    # in every front end the sample runs in; [] says the report holds none.
    causes: Optional[List[Dict]] = None
    # Hazards (layouts that change results): each the report must hold (sample_hazards.hazard:
    # its kind and a piece of the code on its line), in every front end the sample runs in.
    # None, like [], says the report holds none.
    hazards: Optional[List[Dict]] = None
    # What-if (a fix applied and measured): what each fix of the sample's causes must give when
    # applied (sample_table.measured), in every front end that applies it.
    what_if: Optional[List[Dict]] = None

    def pt2_expected(self, exported_by: str = "2") -> Expect:
        """What the program that torch `exported_by` writes does (this torch's, by default)."""
        general = self.pt2 if self.pt2 is not None else self.expected("2")
        return for_version([([p], e) for p, e in self.pt2_by_torch] + [(["2"], general)], exported_by, self.name)

    def pt2_specs(self) -> List[str]:
        return list(self.pt2_inputs or self.inputs)

    def grad_expectations(self) -> List[Tuple[List[str], Dict[str, str], str]]:
        """(LibTorch version prefixes, verdicts, why); the first that matches applies."""
        if self.grads is None:
            return []
        if self.grads2 is None:
            return [(["1", "2"], self.grads, self.grads_why)]
        return [(["1"], self.grads, self.grads_why), (["2"], self.grads2[0], self.grads2[1])]

    def expectations(self) -> List[Tuple[List[str], Expect]]:
        """(LibTorch version prefixes, expectation) pairs; the first that matches applies."""
        first = Expect(self.copies, self.why, self.status)
        if self.torch2 is None:
            return [(["1", "2"], first)]
        return [(["1"], first), (["2"], self.torch2)]

    def expected(self, version: str) -> Expect:
        return for_version([(p, e) for p, e in self.expectations()], version, self.name)


def for_version(pairs, version: str, name: str):
    """The value of the first (LibTorch version prefixes, value) pair that matches `version`."""
    parts = version.split("+")[0].split(".")
    for prefixes, value in pairs:
        if any(p.split(".") == parts[:len(p.split("."))] for p in prefixes):
            return value
    raise SystemExit(f"{name}: no expectation for torch {version}")


def copies(implicit_layout=0, explicit_layout=0, broadcast=0, dtype_device=0, same_layout=0):
    return {"implicit_layout": implicit_layout, "explicit_layout": explicit_layout,
            "broadcast": broadcast, "dtype_device": dtype_device, "same_layout": same_layout}


# ---------------------------------------------------------------------------------------
# Inputs: the same --input syntax and semantics as layoutprof.
# ---------------------------------------------------------------------------------------

DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
          "bf16": torch.bfloat16, "i64": torch.int64, "i32": torch.int32, "i8": torch.int8,
          "u8": torch.uint8, "bool": torch.bool}


def make_input(spec: str) -> torch.Tensor:
    parts = spec.split(":")
    sizes = [int(d) for d in parts[0].split("x")]
    dtype, fmt = "f32", "contiguous"
    for part in parts[1:]:
        if part in DTYPES:
            dtype = part
        else:
            fmt = part

    def random(shape):
        t = DTYPES[dtype]
        if t.is_floating_point:
            return torch.randn(shape, dtype=t)
        return torch.randint(0, 2 if t == torch.bool else 10, shape, dtype=t)

    if fmt == "contiguous":
        return random(sizes)
    if fmt == "channels_last":
        return random(sizes).contiguous(memory_format=torch.channels_last)
    if fmt == "channels_last_3d":
        return random(sizes).contiguous(memory_format=torch.channels_last_3d)
    if fmt.startswith("perm="):
        perm = [int(p) for p in fmt[len("perm="):].split(",")]
        physical = random([sizes[p] for p in perm])
        back = [perm.index(d) for d in range(len(perm))]
        return physical.permute(back)
    raise ValueError(f"unknown input format '{fmt}' in '{spec}'")


def measured(cause: int, kind: str, gone: bool = True, explicit: Optional[int] = None, implicit: Optional[int] = None,
             fewer_mixed: bool = False, refused: str = "", outputs=("equal", "close")) -> Dict:
    """What the what-if must measure for the fix of kind `kind` of the sample's cause `cause` (an
    index into its `causes`): applied (or `refused`, with these words in the reason), the cause
    `gone` from the variant's call (no copy and no mixed-format op left at its birthplace), the
    variant's explicit and implicit layout copies (None: not checked), fewer mixed-format ops than the
    baseline's, and outputs that compare as one of `outputs`."""
    return {"cause": cause, "kind": kind, "gone": gone and not refused, "explicit": explicit, "implicit": implicit,
            "fewer_mixed": fewer_mixed, "refused": refused, "outputs": list(outputs)}
