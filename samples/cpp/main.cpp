// layoutprof-sample: a LibTorch program that serves a TorchScript model and records its own
// calls with layoutprof's C++ API (include/layoutprof/README.md).
//
//   layoutprof-sample MODEL.pt DIMxDIMx... [--warmup N] [--steps N] [--json F] [--text F]
//                     [--html F] [--no-stop]
//
// Each step preprocesses a batch (a plain function under layoutprof::Scope: its copy is the
// report's "preprocess" row) and runs the model's forward(). --no-stop leaves the session
// running as the program exits: the reports are written all the same, status "interrupted".
#include <torch/script.h>

#include <cstdlib>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "layoutprof/layoutprof.h"

namespace {

// "2x16x8x8" as sizes.
std::vector<int64_t> sizes_of(const std::string& spec) {
  std::vector<int64_t> sizes;
  std::stringstream in(spec);
  for (std::string dim; std::getline(in, dim, 'x');) sizes.push_back(std::stoll(dim));
  return sizes;
}

// The batch as a data pipeline hands it over, its last two dimensions swapped in memory; the
// model wants it dense: the copy the report shows in the "preprocess" row, at this scope's line.
at::Tensor preprocess(const at::Tensor& batch) {
  layoutprof::Scope scope("preprocess");
  return batch.contiguous();
}

struct Args {
  std::string model;
  std::vector<int64_t> sizes;
  layoutprof::SessionOptions options;
  bool stop = true;
};

Args parse(int argc, char** argv) {
  if (argc < 3) throw std::runtime_error("usage: layoutprof-sample MODEL.pt DIMxDIM... [--warmup N] [--steps N] "
                                         "[--json F] [--text F] [--html F] [--no-stop]");
  Args a;
  a.model = argv[1];
  a.sizes = sizes_of(argv[2]);
  a.options.warmup = 3;  // the TorchScript profiling executor specialises the graph in its first calls
  a.options.steps = 3;
  for (int i = 3; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--no-stop") {
      a.stop = false;
      continue;
    }
    if (i + 1 >= argc) throw std::runtime_error("layoutprof-sample: " + flag + " needs a value");
    const std::string value = argv[++i];
    if (flag == "--warmup") a.options.warmup = std::stoi(value);
    else if (flag == "--steps") a.options.steps = std::stoi(value);
    else if (flag == "--json") a.options.json = value;
    else if (flag == "--text") a.options.text = value;
    else if (flag == "--html") a.options.html = value;
    else throw std::runtime_error("layoutprof-sample: unknown option " + flag);
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) try {
  Args args = parse(argc, argv);
  torch::jit::Module model = torch::jit::load(args.model);
  model.eval();
  torch::NoGradGuard no_grad;
  std::vector<int64_t> swapped = args.sizes;
  if (swapped.size() < 2) throw std::runtime_error("layoutprof-sample: the input needs two dimensions or more");
  std::swap(swapped[swapped.size() - 1], swapped[swapped.size() - 2]);
  const at::Tensor batch = torch::randn(swapped).transpose(-1, -2);

  layoutprof::Session session(args.options);
  layoutprof::describe_model(session, model);
  for (int i = 0; i < args.options.warmup + args.options.steps; ++i) {
    std::vector<torch::jit::IValue> inputs{preprocess(batch)};
    model.forward(inputs);
    session.step();
  }
  if (!args.stop) std::exit(0);  // the session is never stopped
  const layoutprof::SessionReport report = session.stop();
  std::cout << report.text() << std::flush;
  return 0;
} catch (const std::exception& e) {
  std::cerr << e.what() << "\n";
  return 1;
}
