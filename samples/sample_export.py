"""torch.export-only samples: the graph language a real export writes (a dynamic batch, the
higher-order ops, a no_grad block, a decomposed graph's buffer mutation). No TorchScript twin:
each is pt2_only, made by a 2.x torch."""

import torch
from torch import nn

from sample_table import Sample, copies


class DynamicBatch(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [B, 8, 16], B dynamic
        return x.transpose(1, 2).reshape(x.shape[0], -1)


class CondBranch(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [2, 8, 16]
        return torch.cond(x.abs().sum() >= 0,  # always true, but only known at run time
                          lambda x: x.transpose(1, 2).reshape(2, -1),
                          lambda x: x.reshape(2, -1) + 0, (x,))  # a new tensor: no aliasing


class WhileLoop(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [8, 8]
        from torch._higher_order_ops.while_loop import while_loop

        def keep_going(i, y):
            return i < 3

        def body(i, y):
            return i + 1, y.t().contiguous()

        return while_loop(keep_going, body, (torch.zeros((), dtype=torch.int64), x))[1]


class MapSlices(nn.Module):
    def forward(self, xs: torch.Tensor) -> torch.Tensor:  # [5, 3, 4]
        from torch._higher_order_ops.map import map as map_slices

        return map_slices(lambda x: x.t().reshape(-1), xs)


class NoGradBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(16, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [2, 8, 16]
        with torch.no_grad():
            y = x.transpose(0, 1).reshape(8, -1)
        return self.proj(y.reshape(-1, 16))


class TrainingBatchNorm(nn.Module):
    """Exported in train mode, then decomposed: batch norm's new running statistics are outputs
    the program writes back into its buffers after the forward."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [2, 3, 8, 8]
        return torch.relu(self.bn(self.conv(x)))


class RunningTotal(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [4, 16]
        self.total.add_(x.sum(0))
        return x * 2


SAMPLES = [
    Sample("dynamic_batch", DynamicBatch, ["4x8x16"], copies(implicit_layout=1), pt2_only=True,
           min_torch=2, dynamic_batch=True,
           why="Exported with a dynamic batch (its size a SymInt bound from the input): the "
               "reshape of the transposed [B, 16, 8] view into [B, 128] cannot be a view (implicit), "
               "at whatever batch it runs."),
    Sample("cond_branch", CondBranch, ["2x8x16"], copies(implicit_layout=1, dtype_device=1), pt2_only=True,
           min_torch=2,
           why="The predicate's aten::ge compares the float 0-dim sum with the int 0, which it takes "
               "as an int64 wrapped-number tensor and casts to float (dtype_device). torch.cond on "
               "that predicate, known only at run time (always true): the true branch's "
               "reshape of the transposed [2, 16, 8] view into [2, 128] copies (implicit); the false "
               "branch, not taken, would copy nothing (reshape of the contiguous input is a view)."),
    Sample("while_loop", WhileLoop, ["8x8"], copies(explicit_layout=3), pt2_only=True, min_torch=2,
           why="while_loop runs its body three times (i = 0, 1, 2): each y.t().contiguous() copies the "
               "transposed 8x8 (explicit); the counter's i + 1 and i < 3 copy nothing."),
    Sample("map_slices", MapSlices, ["5x3x4"], copies(implicit_layout=5), pt2_only=True, min_torch=2,
           why="map runs its body on each of the 5 slices [3, 4] of dimension 0: the reshape of each "
               "transposed slice into [12] cannot be a view (implicit, 5 in all); the results are "
               "stacked by aten::stack, which writes them without a copy_."),
    Sample("no_grad_block", NoGradBlock, ["2x8x16"], copies(implicit_layout=1, broadcast=1),
           pt2_only=True, min_torch=2,
           why="The torch.no_grad() block is wrap_with_set_grad_enabled(False, ...) around its "
               "ops: the reshape of the transposed [8, 2, 16] view into [8, 32] copies (implicit); "
               "proj on the 2-D [16, 16] input copies its bias into addmm's output (broadcast)."),
    Sample("running_total", RunningTotal, ["4x16"], copies(dtype_device=1, same_layout=1), pt2_only=True,
           min_torch=2, decompose=True,
           why="x * 2 multiplies by the int 2, an int64 wrapped-number tensor cast to float "
               "(dtype_device). After run_decompositions() the buffer's add_ is a functional add whose result is an "
               "output the program writes back into the buffer: that write-back is one aten::copy_ "
               "of a [16] tensor into the [16] buffer, same strides (same_layout)."),
    Sample("batchnorm_train", TrainingBatchNorm, ["2x3x8x8"], copies(same_layout=5), pt2_only=True,
           min_torch=2, decompose=True, train=True, grads={},
           why="Exported in train mode, then decomposed: batch norm is "
               "_native_batch_norm_legit_functional, which clones running_mean and running_var [8] "
               "to return their new values (2 same_layout, nested in it); after the forward the "
               "program writes its three mutated buffers back, running_mean, running_var [8] and "
               "num_batches_tracked [] (int64, incremented by an add) (3 same_layout aten::copy_). "
               "The 3x3 convolution at one thread runs oneDNN, which adds its bias in the kernel. "
               "With --backward it fails (exit 4), as ep.module() does: the write-back changes "
               "running statistics autograd saved."),
]
