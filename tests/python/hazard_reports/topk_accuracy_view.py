"""Top-k accuracy: view(-1) on a slice of a comparison whose layout a transpose made.

Report:   https://github.com/pytorch/examples/issues/836
Title:    imagenet fails with view size is not compatible with input tensor's size and stride
Pattern:  The ImageNet example's accuracy():
              _, pred = output.topk(maxk, 1, True, True)
              pred = pred.t()
              correct = pred.eq(target.view(1, -1).expand_as(pred))
              correct_k = correct[:k].view(-1).float().sum(0, keepdim=True)
          Since torch 1.7, eq's output keeps the layout of its transposed input (strides 1,maxk),
          so a slice of k > 1 rows of it cannot be flattened by a view, three ops after the
          transpose. The fix in the example and its copies (mmcls, gluon-cv, ...): reshape(-1).
Here:     A linear classifier whose forward returns its logits and top-1/top-5 accuracy. The
          first call, on a single sample (a smoke test), runs: with a batch of 1 the slice is
          k x 1 and a dim of size 1 never blocks a view. The second, on a batch of 8, raises.
Torch:    1.13 and 2.14 behave the same (RuntimeError at the view for k=5). Before 1.7 the code
          ran (eq returned a contiguous tensor), as the report says; not checked here.
Runs:     2 model calls: call 1 (batch 1) runs, call 2 (batch 8) raises, so the run fails.

EXPECT: failed_view correct_k = correct[:k].view(-1)
RAISES: RuntimeError: view size is not compatible with input tensor's size and stride
"""
import sys

import torch
from torch import nn


class TopKClassifier(nn.Module):
    def __init__(self, dim=16, classes=10, topk=(1, 5)):
        super().__init__()
        self.topk = topk
        self.fc = nn.Linear(dim, classes)

    def forward(self, x, target):
        output = self.fc(x)
        _, pred = output.topk(max(self.topk), 1, True, True)
        pred = pred.t()
        correct = pred.eq(target.view(1, -1).expand_as(pred))
        res = []
        for k in self.topk:
            correct_k = correct[:k].view(-1).float().sum(0, keepdim=True)
            res.append(correct_k * (100.0 / x.size(0)))
        return output, res


def main():
    torch.manual_seed(0)
    model = TopKClassifier().eval()
    with torch.no_grad():
        model(torch.randn(1, 16), torch.randint(0, 10, (1,)))
        print("topk_accuracy_view: batch of 1 ran; now a batch of 8")
        model(torch.randn(8, 16), torch.randint(0, 10, (8,)))
    sys.exit("topk_accuracy_view: not reproduced (the batch of 8 ran)")


if __name__ == "__main__":
    main()
