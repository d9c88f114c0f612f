#include "runner/output_match.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <utility>
#include <vector>

namespace layoutprof {

namespace {

// The tensors of a call's result: itself, or those in its tuples, lists and dicts, in order.
void tensors_of(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTuple()) {
    for (const c10::IValue& e : v.toTupleRef().elements()) tensors_of(e, out);
  } else if (v.isList()) {
    const c10::List<c10::IValue> list = v.toList();
    for (size_t i = 0; i < list.size(); ++i) tensors_of(list.get(i), out);
  } else if (v.isGenericDict()) {
    for (const auto& e : v.toGenericDict()) tensors_of(e.value(), out);
  }
}

// torch.testing.assert_close's default (rtol, atol) for a dtype; exact for the others.
std::pair<double, double> tolerances(at::ScalarType t) {
  switch (t) {
    case at::kHalf: return {1e-3, 1e-5};
    case at::kBFloat16: return {1.6e-2, 1e-5};
    case at::kFloat: return {1.3e-6, 1e-5};
    case at::kDouble: return {1e-7, 1e-7};
    default: return {0, 0};
  }
}

}  // namespace

OutputComparison compare_outputs(const c10::IValue& baseline, const c10::IValue& variant, double spread) {
  std::vector<at::Tensor> a, b;
  tensors_of(baseline, a);
  tensors_of(variant, b);
  OutputComparison out;
  out.match = OutputMatch::differs;
  bool same_shapes = a.size() == b.size();
  for (size_t i = 0; same_shapes && i < a.size(); ++i)
    same_shapes = a[i].sizes() == b[i].sizes() && a[i].scalar_type() == b[i].scalar_type();
  if (!same_shapes) {
    out.why = "other shapes or dtypes";
    return out;
  }
  bool equal = true, close = true;
  for (size_t i = 0; i < a.size(); ++i) {
    const at::Tensor x = a[i].detach().cpu(), y = b[i].detach().cpu();
    if (at::equal(x, y)) continue;
    equal = false;
    if (x.numel() == 0) continue;
    const at::Tensor diff = (x.to(at::kDouble) - y.to(at::kDouble)).abs();
    out.max_abs = std::max(out.max_abs, diff.max().item<double>());
    out.max_rel = std::max(out.max_rel, (diff / x.to(at::kDouble).abs().clamp_min(1e-12)).max().item<double>());
    const auto [rtol, atol] = tolerances(x.scalar_type());
    close = close && at::allclose(y.to(at::kDouble), x.to(at::kDouble), rtol, atol + spread);
  }
  out.match = equal ? OutputMatch::equal : close ? OutputMatch::close : OutputMatch::differs;
  return out;
}

double largest_difference(const c10::IValue& a, const c10::IValue& b) {
  const OutputComparison c = compare_outputs(a, b);
  return c.match == OutputMatch::equal || !c.why.empty() ? 0 : c.max_abs;
}

}  // namespace layoutprof
