// One options struct, one setup_x and one run_x per subcommand; main.cpp wires them.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace layoutprof {

struct ViewOptions {
  std::string group_by = "module";
  int depth = 0;
  int top = 10;
};

struct RunOptions {
  std::string model;
  std::vector<std::string> inputs;
  int warmup = 3;
  int iters = 3;
  int threads = 0;
  std::string device = "cpu";
  std::string json_path;
  std::string format = "text";
  ViewOptions view;
  std::string events;  // comma-separated libpfm4 event names
  bool list_events = false;
  bool no_counters = false;
  std::string tlb;
};

struct RenderOptions {
  std::string report;
  ViewOptions view;
};

void setup_run(CLI::App& app, RunOptions& options);
int run_run(const RunOptions& options);

CLI::App* setup_render(CLI::App& app, RenderOptions& options);
int run_render(const RenderOptions& options);

// Shared by every command that prints a heatmap.
void add_view_options(CLI::App& app, ViewOptions& view);
bool stdout_wants_color();

}  // namespace layoutprof
