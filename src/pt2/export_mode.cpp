#include "pt2/export_mode.h"

namespace layoutprof::pt2 {

namespace {

bool is_mode_flag(const NamedArgument& in) {
  return (in.name == "training" || in.name == "train") && in.arg.kind == ArgKind::Bool && in.arg.ints.size() == 1;
}

void count(const Graph& graph, ExportMode& mode) {
  for (const Node& node : graph.nodes) {
    if (node.target.find("_no_training") != std::string::npos) ++mode.eval_ops;
    for (const NamedArgument& in : node.inputs) {
      if (is_mode_flag(in)) ++(in.arg.ints[0] != 0 ? mode.train_ops : mode.eval_ops);
      if (in.arg.kind == ArgKind::Graph && in.arg.graph) count(*in.arg.graph, mode);
    }
  }
}

std::string ops(int64_t n) { return std::to_string(n) + (n == 1 ? " op" : " ops"); }

}  // namespace

std::string ExportMode::value() const {
  if (train_ops > 0 && eval_ops > 0) return "mixed";
  if (train_ops > 0) return "train";
  return eval_ops > 0 ? "eval" : "none";
}

std::string ExportMode::evidence() const {
  if (train_ops == 0 && eval_ops == 0) return "no op of the graph depends on the mode";
  std::string text;
  if (train_ops > 0) text = ops(train_ops) + " in train mode";
  if (eval_ops > 0) text += (text.empty() ? "" : ", ") + ops(eval_ops) + " in eval mode";
  return text + " (their training flags)";
}

ExportMode export_mode(const Graph& graph) {
  ExportMode mode;
  count(graph, mode);
  return mode;
}

}  // namespace layoutprof::pt2
