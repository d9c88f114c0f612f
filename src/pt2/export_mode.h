// The mode (train or eval) a torch.export program was exported in. A .pt2 stores no such flag
// and has no switch: the mode is baked into the ops whose result depends on it, which take a
// `training` or `train` flag (batch_norm, dropout, instance_norm, ...) or name it
// (_native_batch_norm_legit_no_training). Derived here from those ops' arguments.
#pragma once

#include <cstdint>
#include <string>

#include "pt2/program.h"

namespace layoutprof::pt2 {

struct ExportMode {
  int64_t train_ops = 0;  // ops of the graph (subgraphs included) in train mode
  int64_t eval_ops = 0;   // ops in eval mode
  // "train", "eval", "mixed" (ops of both) or "none" (no op depends on the mode).
  std::string value() const;
  // How it was derived, for the report: "20 ops take training=False".
  std::string evidence() const;
};

ExportMode export_mode(const Graph& graph);

}  // namespace layoutprof::pt2
