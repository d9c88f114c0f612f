// The .pt2 model on the programs make_samples.py made under LibTorch 2.x: what a decomposed
// program's functional graph returns is written back as eager PyTorch mutates in place, the
// mode fixed at export is the one reported, and the archives torch's other writers make
// (sample_packages.py) are run or refused as they hold a program or not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/script.h>
#include <torch/version.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "runner/model.h"
#include "runner/runner.h"
#include "support/errors.h"

namespace layoutprof {
namespace {

namespace fs = std::filesystem;

bool libtorch_reads_pt2() { return TORCH_VERSION_MAJOR >= 2; }

// make_samples.py's NAME.pt2.buffers.json: the mutated buffers after `calls` eager calls.
std::vector<fs::path> mutation_expectations() {
  const std::string suffix = ".pt2.buffers.json";
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(MADE_SAMPLES_DIR)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      found.push_back(entry.path());
  }
  return found;
}

at::Tensor buffer_named(const Model& model, const std::string& name) {
  for (const NamedTensor& b : model.named_buffers())
    if (b.name == name) return b.tensor;
  ADD_FAILURE() << "the program has no buffer " << name;
  return at::Tensor();
}

TEST(Pt2Model, MutatedBuffersAfterNCallsEqualEagerPyTorchs) {
  if (!libtorch_reads_pt2()) GTEST_SKIP() << "LibTorch 1.x refuses .pt2 programs (the e2e tests check how)";
  const std::vector<fs::path> expectations = mutation_expectations();
  ASSERT_FALSE(expectations.empty()) << "make_samples.py wrote no .pt2.buffers.json in " << MADE_SAMPLES_DIR;
  for (const fs::path& path : expectations) {
    const nlohmann::json doc = nlohmann::json::parse(std::ifstream(path));
    std::string program = path.string();
    program.resize(program.size() - std::string(".buffers.json").size());
    std::unique_ptr<Model> model = load_model(program);
    std::vector<c10::IValue> inputs = model->sample_inputs();
    torch::NoGradGuard no_grad;
    const int calls = doc.at("calls").get<int>();
    for (int i = 0; i < calls; ++i) model->forward(inputs);
    for (const auto& [name, want] : doc.at("buffers").items()) {
      at::Tensor got = buffer_named(*model, name);
      ASSERT_TRUE(got.defined());
      const auto sizes = want.at("sizes").get<std::vector<int64_t>>();
      at::Tensor expected = torch::tensor(want.at("values").get<std::vector<double>>(), torch::kDouble).reshape(sizes);
      EXPECT_TRUE(torch::allclose(got.to(torch::kDouble), expected, 1e-5, 1e-6))
          << program << ": buffer " << name << " after " << calls << " calls\n got " << got << "\n eager " << expected;
      // The calls changed it: a write-back that did nothing would leave the stored value.
      at::Tensor stored = buffer_named(*load_model(program), name);
      if (!torch::allclose(stored.to(torch::kDouble), expected)) {
        EXPECT_FALSE(torch::allclose(got, stored));
      }
    }
  }
}

TEST(Pt2Model, TheModeIsTheOneFixedAtExportWhateverTheRunAsks) {
  if (!libtorch_reads_pt2()) GTEST_SKIP() << "LibTorch 1.x refuses .pt2 programs (the e2e tests check how)";
  std::unique_ptr<Model> model = load_model(std::string(MADE_SAMPLES_DIR) + "/resnet18.pt2");
  model->set_training(true);  // --backward: a .pt2 has no switch
  const ModelMode mode = model->mode();
  EXPECT_EQ(mode.value, "eval");
  EXPECT_EQ(mode.chosen_by, "export");
  EXPECT_EQ(mode.evidence, "20 ops in eval mode (their training flags)") << "resnet18's 20 batch norms";
}

// make_samples.py's packages/: channels_last_convnet's program as package_pt2 and AOTInductor
// write it.
std::string package(const std::string& name) { return std::string(MADE_SAMPLES_DIR) + "/packages/" + name + ".pt2"; }

std::string load_refusal(const std::string& path) {
  try {
    load_model(path);
  } catch (const ModelLoadError& e) {
    return e.what();
  }
  ADD_FAILURE() << path << " loaded";
  return "";
}

TEST(Pt2Model, AProgramNamedOtherThanModelRunsAsTorchExportSaveWroteIt) {
  if (!libtorch_reads_pt2()) GTEST_SKIP() << "LibTorch 1.x refuses .pt2 programs (the e2e tests check how)";
  std::unique_ptr<Model> saved = load_model(std::string(MADE_SAMPLES_DIR) + "/channels_last_convnet.pt2");
  std::unique_ptr<Model> renamed = load_model(package("renamed"));  // models/channels_last_convnet.json
  const std::vector<NamedTensor> want = saved->named_parameters(), got = renamed->named_parameters();
  ASSERT_FALSE(want.empty());
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].name, want[i].name);
    EXPECT_TRUE(torch::equal(got[i].tensor, want[i].tensor)) << got[i].name;
  }
  std::vector<c10::IValue> inputs = renamed->sample_inputs(), saved_inputs = saved->sample_inputs();
  ASSERT_EQ(inputs.size(), 1u) << "its stored inputs, data/sample_inputs/channels_last_convnet.pt";
  EXPECT_TRUE(inputs[0].toTensor().is_contiguous(at::MemoryFormat::ChannelsLast));
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::allclose(renamed->forward(inputs).toTensor(), saved->forward(saved_inputs).toTensor()));
  EXPECT_TRUE(renamed->not_run().empty());
}

TEST(Pt2Model, AOTInductorCodeAloneOrTwoProgramsAreRefusedInOneLine) {
  if (!libtorch_reads_pt2()) GTEST_SKIP() << "LibTorch 1.x refuses .pt2 programs (the e2e tests check how)";
  const std::string aoti = package("aoti_only");
  EXPECT_EQ(load_refusal(aoti), aoti + ": an AOTInductor package (compiled code for model, no exported program): "
                                "layoutprof profiles the exported program it was compiled from: save it with "
                                "torch.export.save(ep, 'model.pt2') and profile that");
  const std::string two = load_refusal(package("two_programs"));
  EXPECT_THAT(two, ::testing::HasSubstr(": 2 exported programs (models/first.json, models/second.json): layoutprof "
                                        "profiles one program per archive"));
  EXPECT_EQ(two.find('\n'), std::string::npos);
}

// package_pt2(f, exported_programs=ep, aoti_files=...): the program runs, and the run's notes
// say that the compiled code did not.
TEST(Pt2Model, AProgramPackagedWithAOTInductorCodeRunsAndItsNotesSayTheCodeDidNot) {
  if (!libtorch_reads_pt2()) GTEST_SKIP() << "LibTorch 1.x refuses .pt2 programs (the e2e tests check how)";
  ProfileConfig config;
  config.model = package("aoti_and_program");
  config.warmup = 0;
  config.iters = 1;
  config.counters = false;
  const Trace trace = run_profile(config, [](const std::string&) {});
  EXPECT_EQ(trace.run.status, RunStatus::ok) << trace.run.error;
  EXPECT_EQ(trace.run.model_format, "pt2");
  ASSERT_EQ(trace.calls.size(), 1u);
  EXPECT_GT(trace.calls[0].events.size(), 0u);
  EXPECT_THAT(trace.run.not_measured,
              ::testing::Contains("AOTInductor code in the archive (data/aotinductor/model/): not run; layoutprof ran "
                                  "its exported program (models/model.json) op by op through LibTorch's dispatcher"));
}

TEST(Model, TorchScriptsModeIsTheOneLayoutprofSets) {
  std::unique_ptr<Model> model = load_model(std::string(SAMPLES_DIR) + "/transpose_reshape.pt");
  model->set_training(true);
  EXPECT_EQ(model->mode().value, "train");
  model->set_training(false);
  EXPECT_EQ(model->mode().value, "eval");
  EXPECT_EQ(model->mode().chosen_by, "layoutprof");
}

}  // namespace
}  // namespace layoutprof
