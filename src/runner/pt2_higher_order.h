// The higher-order ops a torch.export graph may hold (torch.cond, while_loop, map,
// set_grad_enabled and autocast blocks): how each runs its subgraphs on its operands.
#pragma once

#include <ATen/core/ivalue.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace layoutprof {

class Pt2Executor;

// A higher-order op's subgraphs, in its order, each planned by its own executor.
using Subgraphs = std::vector<std::unique_ptr<Pt2Executor>>;
// Runs the op: `values` are its arguments that are not graphs, in the node's order.
using HopFn = std::vector<c10::IValue> (*)(const Subgraphs& graphs, const std::vector<c10::IValue>& values);

struct HopKind {
  HopFn fn;
  std::vector<std::string> graphs;  // the subgraphs it takes, as op sites name them
};

// By the node's target ("torch.ops.higher_order.cond").
const std::map<std::string, HopKind>& higher_order_ops();

}  // namespace layoutprof
