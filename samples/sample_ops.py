"""Copies that ops make without a strided view to blame: clones, dtype casts, Python scalars,
cat, slice assignment, and a fresh tensor next to a view (for the page-fault counter)."""

from typing import Tuple

import torch
from torch import nn

from sample_table import Expect, Sample, copies


class DefensiveClone(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = x.clone()
        b = x.t().clone()
        return a + b.t()


class DtypeCast(nn.Module):
    # uint8 image to float.
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.to(torch.float32)


class ScalarArith(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 0.5 + 1.0


class CatTransposed(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x.t(), x.t()], 0)


class SliceAssign(nn.Module):
    # Slice assignment compiles to aten::copy_ called by the interpreter itself.
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.zeros(x.size(1), x.size(0) + 4)
        out[:, :x.size(0)] = x.t()
        out[:, x.size(0):] = 1.0
        return out


class FreshTensor(nn.Module):
    # A view (no memory touched) next to an op that writes a large fresh tensor: the
    # page-fault counter must see the second and not the first.
    def forward(self, x: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        return x.t(), x * x


SAMPLES = [
    Sample("defensive_clone", DefensiveClone, ["8x16"],
           copies(same_layout=2),
           "clone() keeps the source's strides (preserve_format), so both the plain clone and "
           "the clone of a transposed view copy without changing layout."),
    Sample("dtype_cast", DtypeCast, ["2x3x8x8:u8"],
           copies(dtype_device=1),
           "to(torch.float32) on a uint8 image copies with conversion."),
    Sample("scalar_arith", ScalarArith, ["4x8"],
           copies(dtype_device=2),
           "A tensor-scalar op wraps the Python number in a 0-dim double tensor, and "
           "TensorIterator casts it to float with a 0-dim copy_: one per op."),
    Sample("cat_transposed", CatTransposed, ["8x16"],
           copies(),
           "cat writes each (transposed) input into a narrow() of the output with "
           "TensorIterator's copy_stub, never through aten::copy_, so its real copies are not "
           "counted: a blind spot of copy_-based counting."),
    Sample("slice_assign", SliceAssign, ["8x16"],
           copies(explicit_layout=1, broadcast=1),
           "Slice assignment is an aten::copy_ issued by the model: writing the transposed x "
           "into a column block is an explicit layout copy, and assigning 1.0 copies a 0-dim "
           "tensor into the slice (broadcast).",
           pt2=Expect(copies(explicit_layout=1, broadcast=1, same_layout=1),
                      "As the TorchScript archive, plus one: export lifts the Python float 1.0 of "
                      "the second assignment into a tensor constant, and aten::lift_fresh_copy copies "
                      "it into a fresh 0-dim tensor each call (same_layout) before fill_ reads it."),
           pt2_by_torch=(("2.15", Expect(copies(explicit_layout=1),
                                         "PyTorch 2.15 exports the second assignment as fill_.Scalar with the "
                                         "float 1.0: no tensor constant is lifted, so neither "
                                         "lift_fresh_copy's copy nor a 0-dim tensor's broadcast into the "
                                         "slice; the first assignment's explicit copy stays.")),)),
    Sample("fresh_tensor", FreshTensor, ["4096x4096"],
           copies(),
           "No copy: t() is a view and x * x writes a new 64 MB tensor; the e2e tests use it "
           "to check that page faults are counted on the write and not on the view."),
]
