#include "runner/pt2_higher_order.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <c10/core/GradMode.h>

#include "runner/pt2_executor.h"

namespace layoutprof {
namespace {

// A higher-order op's operands: its list arguments spread, as its subgraph takes them.
std::vector<c10::IValue> spread(const std::vector<c10::IValue>& values, size_t from, size_t to) {
  std::vector<c10::IValue> out;
  for (size_t i = from; i < to && i < values.size(); ++i) {
    if (values[i].isList())
      for (const c10::IValue& v : values[i].toListRef()) out.push_back(v);
    else out.push_back(values[i]);
  }
  return out;
}

bool truthy(const c10::IValue& v) {
  if (v.isTensor()) return v.toTensor().item<bool>();
  return v.isBool() ? v.toBool() : v.toInt() != 0;
}

std::vector<c10::IValue> run_cond(const Subgraphs& graphs, const std::vector<c10::IValue>& v) {
  return graphs.at(truthy(v.at(0)) ? 0 : 1)->run(spread(v, 1, v.size()));
}

std::vector<c10::IValue> run_while_loop(const Subgraphs& graphs, const std::vector<c10::IValue>& v) {
  std::vector<c10::IValue> carried = spread(v, 0, 1), extra = spread(v, 1, 2);
  auto with_extra = [&] {
    std::vector<c10::IValue> all = carried;
    all.insert(all.end(), extra.begin(), extra.end());
    return all;
  };
  while (truthy(graphs.at(0)->run(with_extra()).at(0))) carried = graphs.at(1)->run(with_extra());
  return carried;
}

// map_impl(f, xs, pos_args): f on each slice of xs along dimension 0, the results stacked.
std::vector<c10::IValue> run_map(const Subgraphs& graphs, const std::vector<c10::IValue>& v) {
  const std::vector<c10::IValue> xs = spread(v, 0, 1), pos = spread(v, 1, 2);
  const int64_t n = xs.empty() ? 0 : xs[0].toTensor().size(0);
  std::vector<std::vector<at::Tensor>> per_output;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<c10::IValue> in;
    for (const auto& x : xs) in.push_back(x.toTensor().select(0, i));
    in.insert(in.end(), pos.begin(), pos.end());
    std::vector<c10::IValue> out = graphs.at(0)->run(in);
    per_output.resize(out.size());
    for (size_t k = 0; k < out.size(); ++k) per_output[k].push_back(out[k].toTensor());
  }
  std::vector<c10::IValue> results;
  for (const auto& slices : per_output) results.push_back(at::stack(slices));
  return results;
}

std::vector<c10::IValue> run_set_grad(const Subgraphs& graphs, const std::vector<c10::IValue>& v) {
  c10::AutoGradMode mode(truthy(v.at(0)));
  return graphs.at(0)->run(spread(v, 1, v.size()));
}

// wrap_with_autocast(device_type, dtype, enabled, cache_enabled, graph, *args)
std::vector<c10::IValue> run_autocast(const Subgraphs& graphs, const std::vector<c10::IValue>& v) {
  const c10::DeviceType type = c10::Device(v.at(0).toStringRef()).type();
  const bool was_enabled = at::autocast::is_autocast_enabled(type);
  const at::ScalarType was_dtype = at::autocast::get_autocast_dtype(type);
  at::autocast::set_autocast_enabled(type, truthy(v.at(2)));
  if (!v.at(1).isNone()) at::autocast::set_autocast_dtype(type, static_cast<at::ScalarType>(v.at(1).toInt()));
  struct Restore {
    c10::DeviceType type;
    bool enabled;
    at::ScalarType dtype;
    ~Restore() {
      at::autocast::set_autocast_enabled(type, enabled);
      at::autocast::set_autocast_dtype(type, dtype);
    }
  } restore{type, was_enabled, was_dtype};
  return graphs.at(0)->run(spread(v, 4, v.size()));
}

}  // namespace

const std::map<std::string, HopKind>& higher_order_ops() {
  static const std::map<std::string, HopKind> kinds = {
      {"torch.ops.higher_order.cond", {run_cond, {"torch.cond's true branch", "torch.cond's false branch"}}},
      {"torch.ops.higher_order.while_loop", {run_while_loop, {"while_loop's condition", "while_loop's body"}}},
      {"torch.ops.higher_order.map_impl", {run_map, {"map's body"}}},
      {"torch.ops.higher_order.wrap_with_set_grad_enabled", {run_set_grad, {"a set_grad_enabled block"}}},
      {"torch.ops.higher_order.wrap_with_autocast", {run_autocast, {"an autocast block"}}},
  };
  return kinds;
}

}  // namespace layoutprof
