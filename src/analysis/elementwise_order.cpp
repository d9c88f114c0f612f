#include "analysis/saturating.h"
#include "analysis/elementwise_order.h"

#include <algorithm>
#include <utility>

#include "analysis/mixed_formats.h"

namespace layoutprof {

namespace {

// The operand's strides over the output's dims: trailing dims aligned, a missing dim or a
// size-1 dim broadcast to a larger one read with stride 0 (TensorIterator's compute_strides).
std::vector<int64_t> broadcast_strides(const TensorInfo& t, const std::vector<int64_t>& out) {
  std::vector<int64_t> strides(out.size(), 0);
  const size_t rank = t.sizes().size(), offset = out.size() - rank;
  for (size_t i = 0; i < rank; ++i) {
    const bool broadcast = t.sizes()[i] == 1 && out[offset + i] != 1;
    strides[offset + i] = broadcast || i >= t.strides().size() ? 0 : t.strides()[i];
  }
  return strides;
}

bool all_same_shape(const std::vector<const TensorInfo*>& inputs, const std::vector<int64_t>& out) {
  return std::all_of(inputs.begin(), inputs.end(), [&](const TensorInfo* t) { return t->sizes() == out; });
}

std::vector<int64_t> row_major(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t step = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = step;
    step = saturating_mul(step, std::max<int64_t>(sizes[i], 1));
  }
  return strides;
}

bool is_contiguous_tensor(const TensorInfo& t) { return is_dense_in_order(t.sizes(), t.strides(), [&] {
  std::vector<int> order(t.sizes().size());
  for (size_t d = 0; d < order.size(); ++d) order[d] = static_cast<int>(d);
  return order;
}()); }

// compute_fast_setup_type: the output when every operand is laid out alike; false otherwise.
bool fast_path(const std::vector<const TensorInfo*>& inputs, const std::vector<int64_t>& out, ElementwiseOrder& o) {
  if (inputs.empty() || !all_same_shape(inputs, out)) return false;
  const bool contiguous = std::all_of(inputs.begin(), inputs.end(), [](const TensorInfo* t) { return is_contiguous_tensor(*t); });
  if (contiguous) {
    o.strides = row_major(out);
    return o.fast_path = true;
  }
  const bool channels_last = (out.size() == 4 || out.size() == 5) &&
      std::all_of(inputs.begin(), inputs.end(), [](const TensorInfo* t) {
        const MemoryFormat f = memory_format_of(*t);
        return f == MemoryFormat::nhwc || f == MemoryFormat::either;
      });
  const bool dense_alike = std::all_of(inputs.begin(), inputs.end(), [&](const TensorInfo* t) {
    const LayoutClass c = t->layout().cls;
    return (c == LayoutClass::contiguous || c == LayoutClass::channels_last || c == LayoutClass::channels_last_3d ||
            c == LayoutClass::permuted) && t->strides() == inputs.front()->strides();
  });
  if (channels_last && !dense_alike) {
    std::vector<int> order = out.size() == 4 ? std::vector<int>{0, 2, 3, 1} : std::vector<int>{0, 2, 3, 4, 1};
    o.strides.assign(out.size(), 0);
    int64_t step = 1;
    for (size_t i = order.size(); i-- > 0;) {
      o.strides[order[i]] = step;
      step = saturating_mul(step, std::max<int64_t>(out[order[i]], 1));
    }
    return o.fast_path = true;
  }
  if (!dense_alike) return false;
  o.strides = inputs.front()->strides();
  return o.fast_path = true;
}

}  // namespace

bool broadcasts_to(const TensorInfo& t, const std::vector<int64_t>& out_sizes) {
  if (t.sizes().size() > out_sizes.size()) return false;
  const size_t offset = out_sizes.size() - t.sizes().size();
  for (size_t i = 0; i < t.sizes().size(); ++i)
    if (t.sizes()[i] != out_sizes[offset + i] && t.sizes()[i] != 1) return false;
  return true;
}

ElementwiseOrder elementwise_output_order(const std::vector<const TensorInfo*>& inputs,
                                          const std::vector<int64_t>& out_sizes) {
  ElementwiseOrder o;
  if (fast_path(inputs, out_sizes, o)) return o;
  const size_t rank = out_sizes.size();
  std::vector<std::vector<int64_t>> strides;
  for (const TensorInfo* t : inputs) strides.push_back(broadcast_strides(*t, out_sizes));
  // perm[0] is the innermost dim; it starts as the reversed identity (row-major).
  std::vector<int> perm(rank);
  for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int>(rank - 1 - i);
  int decided_by = -1;
  auto should_swap = [&](int dim0, int dim1) {
    for (size_t arg = 0; arg < strides.size(); ++arg) {
      const int64_t s0 = strides[arg][dim0], s1 = strides[arg][dim1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 != s1 && (decided_by < 0 || static_cast<int>(arg) < decided_by)) decided_by = static_cast<int>(arg);
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (out_sizes[dim0] > out_sizes[dim1]) return 1;
    }
    return 0;
  };
  for (size_t i = 1; i < rank; ++i) {
    size_t dim1 = i;
    for (size_t dim0 = i; dim0-- > 0;) {
      const int comparison = should_swap(perm[dim0], perm[dim1]);
      if (comparison > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (comparison < 0) {
        break;
      }
    }
  }
  o.strides.assign(rank, 0);
  int64_t step = 1;
  for (int dim : perm) {
    o.strides[dim] = step;
    step = saturating_mul(step, std::max<int64_t>(out_sizes[dim], 1));
  }
  o.decided_by = decided_by;
  return o;
}

}  // namespace layoutprof
