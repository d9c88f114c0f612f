"""Cases of TensorIterator's output layout, from the torch that runs this: elementwise adds of
two operands in many layouts (contiguous, channels_last, permuted, transposed, sliced, partly
broadcast), each written as one JSON line {"a": [sizes, strides], "b": [...], "out": strides}.
tests/unit/elementwise_order_test.cpp predicts every output with layoutprof's model of the rule
(analysis/elementwise_order.h) and compares, on Debian's 1.13 and on a 2.x wheel alike."""
import itertools
import json
import random
import sys

import torch


def operand(shape, kind, rng):
    """A tensor of `shape` laid out as `kind` says."""
    n = len(shape)
    if kind == "contiguous":
        return torch.empty(shape)
    if kind == "channels_last" and n == 4:
        return torch.empty(shape).contiguous(memory_format=torch.channels_last)
    if kind == "permuted":
        order = list(range(n))
        rng.shuffle(order)
        physical = torch.empty([shape[d] for d in order])
        back = [order.index(d) for d in range(n)]
        return physical.permute(back)
    if kind == "sliced":
        bigger = list(shape)
        bigger[-1] *= 2
        return torch.empty(bigger)[..., ::2]
    if kind == "broadcast":  # some dims of size 1, expanded by the add
        small = [1 if rng.random() < 0.5 else s for s in shape]
        return operand(small, rng.choice(["contiguous", "permuted"]), rng)
    if kind == "lower_rank":
        return operand(shape[rng.randrange(1, n):], "contiguous", rng)
    return torch.empty(shape)


def main():
    rng = random.Random(0)
    kinds = ["contiguous", "channels_last", "permuted", "sliced", "broadcast", "lower_rank"]
    shapes = [[2, 3, 4, 5], [2, 8, 4, 4], [3, 5, 7], [4, 6]]
    for shape, ka, kb in itertools.product(shapes, kinds, kinds):
        for _ in range(3):
            a, b = operand(shape, ka, rng), operand(shape, kb, rng)
            if list(torch.broadcast_shapes(a.shape, b.shape)) != shape:
                continue
            out = a + b
            print(json.dumps({"a": [list(a.shape), list(a.stride())], "b": [list(b.shape), list(b.stride())],
                              "out": [list(out.shape), list(out.stride())]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
