// The output strides PyTorch's TensorIterator gives an elementwise op whose output it allocates
// (aten/src/ATen/TensorIterator.cpp: compute_fast_setup_type, then reorder_dimensions and
// allocate_or_resize_outputs), so that a birthplace at such an op can say which operand decided
// its layout, and whether swapping the operands would keep another.
//
// - Fast path: operands of one shape that are all contiguous give a contiguous output, all
//   channels_last a channels_last one, all dense with equal strides those strides.
// - Otherwise the dims are sorted innermost first by an insertion sort whose comparison asks
//   the operands in order: the first whose strides differ on the pair decides, an operand with
//   stride 0 on either dim (broadcast there) is skipped for that pair, and equal strides put
//   the smaller dim inside. So two full-size operands give the first one's layout, and a partly
//   broadcast operand can yield a permutation neither input has.
#pragma once

#include <cstdint>
#include <vector>

#include "core/layout.h"

namespace layoutprof {

struct ElementwiseOrder {
  std::vector<int64_t> strides;  // the output's strides (elements), for `out_sizes`
  bool fast_path = false;        // decided by the fast path (all operands laid out alike)
  int decided_by = -1;           // the first operand whose strides decided a pair of dims; -1 none
};

// `inputs`: the operands in argument order, each broadcast to `out_sizes` (trailing dims
// aligned, a missing or size-1 dim read with stride 0).
ElementwiseOrder elementwise_output_order(const std::vector<const TensorInfo*>& inputs,
                                          const std::vector<int64_t>& out_sizes);

// True when every input broadcasts to `out_sizes` (the shape of an elementwise op's output).
bool broadcasts_to(const TensorInfo& t, const std::vector<int64_t>& out_sizes);

}  // namespace layoutprof
