// The mode a .pt2 was exported in, derived from its ops' training flags (pt2/export_mode.h).
#include <gtest/gtest.h>

#include <memory>

#include "pt2/export_mode.h"

namespace layoutprof::pt2 {
namespace {

Node op(const std::string& target, const std::string& flag = "", int value = 0) {
  Node node;
  node.target = target;
  node.inputs.push_back({"input", Argument{ArgKind::Tensor, {"x"}, {}, {}, {}, nullptr}});
  if (!flag.empty()) node.inputs.push_back({flag, Argument{ArgKind::Bool, {}, {value}, {}, {}, nullptr}});
  return node;
}

TEST(ExportMode, EvalFromBatchNormsTrainingFlagAndTheNoTrainingOp) {
  Graph g;
  g.nodes = {op("torch.ops.aten.conv2d.default"), op("torch.ops.aten.batch_norm.default", "training", 0),
             op("torch.ops.aten._native_batch_norm_legit_no_training.default")};
  const ExportMode mode = export_mode(g);
  EXPECT_EQ(mode.value(), "eval");
  EXPECT_EQ(mode.eval_ops, 2);
  EXPECT_EQ(mode.evidence(), "2 ops in eval mode (their training flags)");
}

TEST(ExportMode, TrainFromDropoutsTrainFlag) {
  Graph g;
  g.nodes = {op("torch.ops.aten.dropout.default", "train", 1)};
  EXPECT_EQ(export_mode(g).value(), "train");
  EXPECT_EQ(export_mode(g).evidence(), "1 op in train mode (their training flags)");
}

TEST(ExportMode, OpsInASubgraphCountAndBothModesAreMixed) {
  auto branch = std::make_shared<Graph>();
  branch->nodes = {op("torch.ops.aten.dropout.default", "train", 0)};
  Node cond = op("torch.ops.higher_order.cond");
  cond.inputs.push_back({"true_fn", Argument{ArgKind::Graph, {"true_graph_0"}, {}, {}, {}, branch}});
  Graph g;
  g.nodes = {op("torch.ops.aten.batch_norm.default", "training", 1), cond};
  const ExportMode mode = export_mode(g);
  EXPECT_EQ(mode.value(), "mixed");
  EXPECT_EQ(mode.train_ops, 1);
  EXPECT_EQ(mode.eval_ops, 1);
}

TEST(ExportMode, NoneWhereNoOpDependsOnTheMode) {
  Graph g;
  g.nodes = {op("torch.ops.aten.linear.default"), op("torch.ops.aten.relu.default")};
  EXPECT_EQ(export_mode(g).value(), "none");
  EXPECT_EQ(export_mode(g).evidence(), "no op of the graph depends on the mode");
}

TEST(ExportMode, AFlagGivenAsAValueIsNotCounted) {
  // A training flag computed in the graph (a SymBool) says nothing fixed.
  Graph g;
  Node n = op("torch.ops.aten.batch_norm.default");
  n.inputs.push_back({"training", Argument{ArgKind::SymBool, {"b"}, {0}, {}, {}, nullptr}});
  g.nodes = {n};
  EXPECT_EQ(export_mode(g).value(), "none");
}

}  // namespace
}  // namespace layoutprof::pt2
