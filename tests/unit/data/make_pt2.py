# How tests/unit/data/*.pt2 were made (torch 2.14.1): run by hand, never by the tests.
#   dynamic_linear.pt2: a Linear, a buffer mutated in place, transpose + reshape, dynamic batch.
#   tensor_constant.pt2: a tensor attribute that is not a buffer (a lifted tensor constant).
import torch


class T(torch.nn.Module):
    def __init__(s):
        super().__init__(); s.l = torch.nn.Linear(6, 4); s.register_buffer("cnt", torch.zeros(1))

    def forward(s, x):
        s.cnt.add_(1)
        y = x.transpose(1, 2).reshape(x.shape[0], -1, 6)
        return s.l(y), y.sum()


class C(torch.nn.Module):
    def __init__(s):
        super().__init__(); s.k = torch.tensor([1., 2.])

    def forward(s, x):
        return x * s.k


batch = {0: torch.export.Dim("b", max=64)}
torch.export.save(torch.export.export(T(), (torch.randn(2, 6, 3),), dynamic_shapes=(batch,)), "dynamic_linear.pt2")
torch.export.save(torch.export.export(C(), (torch.randn(3, 2),), dynamic_shapes=({0: torch.export.Dim("b")},)),
                  "tensor_constant.pt2")
