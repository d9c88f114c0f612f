// The C++ API (include/layoutprof) as a program uses it: a TorchScript model and a plain
// function under a Scope recorded by steps, the report read back as JSON; the misuses a program
// can make (two sessions, a session never stopped).
#include <gtest/gtest.h>
#include <torch/script.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unistd.h>

#include "core/pools.h"
#include "eager/module_sites.h"
#include "layoutprof/layoutprof.h"

namespace {

using nlohmann::json;

const std::string kModel = std::string(SAMPLES_DIR) + "/layernorm_drift.pt";  // its copies lie in submodules

constexpr int kScopeLine = __LINE__ + 4;  // the Scope's line below

// A plain function with a layout copy of its own: the program's preprocessing.
at::Tensor preprocess(const at::Tensor& raw) {
  layoutprof::Scope scope("preprocess");  // kScopeLine
  return raw.transpose(-1, -2).contiguous();  // the line the report must name
}

layoutprof::SessionOptions quiet() {
  layoutprof::SessionOptions o;
  o.counters = false;
  return o;
}

// The module path of each copy in `report`, with its class and bytes.
std::multiset<std::string> copies_by_module(const json& report) {
  std::multiset<std::string> out;
  const json& ops = report["ops"];
  for (const json& c : report["copies"]) {
    const json& row = ops["rows"][c["op"].get<size_t>()];
    out.insert(ops["modules"][row[2].get<size_t>()].get<std::string>() + " " + c["class"].get<std::string>() + " " +
               std::to_string(c["bytes"].get<int64_t>()));
  }
  return out;
}

TEST(Api, RecordsATorchScriptModelAndAPlainFunctionByStepsAndScopes) {
  torch::jit::Module model = torch::jit::load(kModel);
  model.eval();
  torch::NoGradGuard no_grad;
  const at::Tensor raw = torch::randn({2, 16, 8, 8});
  layoutprof::SessionOptions options = quiet();
  options.warmup = 2;
  options.steps = 2;
  layoutprof::Session session(options);
  layoutprof::describe_model(session, model);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(session.recording(), i == 2 || i == 3) << "step " << i;
    std::vector<torch::jit::IValue> inputs{preprocess(raw)};
    model.forward(inputs);
    session.step();
  }
  const layoutprof::SessionReport report = session.stop();
  EXPECT_EQ(report.status(), "ok");
  EXPECT_EQ(report.steps(), 2);
  const json r = json::parse(report.json());
  EXPECT_EQ(r["run"]["model"], "LayerNormDrift");
  EXPECT_EQ(r["run"]["model_format"], "eager");
  EXPECT_EQ(r["run"]["warmup"], 2);
  const std::multiset<std::string> copies = copies_by_module(r);
  EXPECT_EQ(copies.count("preprocess explicit_layout 8192"), 1u) << r["copies"].dump();
  // The model's layout copies (LibTorch 1.13 and 2.x alike; their broadcast copies differ) in
  // the submodules that make them, every copy of the model in a submodule.
  for (const char* copy : {"block1.norm implicit_layout 8192", "down implicit_layout 8192"})
    EXPECT_EQ(copies.count(copy), 1u) << copy << " in " << r["copies"].dump();
  for (const std::string& c : copies)
    EXPECT_TRUE(c.rfind("preprocess ", 0) == 0 || c.rfind("block", 0) == 0 || c.rfind("down ", 0) == 0) << c;
  // The plain function's copy carries the scope's line; the model's ops their TorchScript lines.
  std::set<std::string> lines;
  for (const json& s : r["ops"]["sources"]) lines.insert(s[0].get<std::string>() + " " + s[1].get<std::string>());
  bool scope_line = false, model_line = false;
  for (const std::string& l : lines) {
    scope_line |= l.find("api_test.cpp:" + std::to_string(kScopeLine) + " ") != std::string::npos &&
                  l.find("Scope") != std::string::npos && l.find("\"preprocess\"") != std::string::npos;
    model_line |= l.find(".py:") != std::string::npos;
  }
  EXPECT_TRUE(scope_line) << r["ops"]["sources"].dump();
  EXPECT_TRUE(model_line) << r["ops"]["sources"].dump();
  EXPECT_NE(report.text().find("preprocess"), std::string::npos);
}

TEST(Api, AModelRunInsideAScopeHasItsPathsUnderTheScope) {
  torch::jit::Module model = torch::jit::load(kModel);
  model.eval();
  torch::NoGradGuard no_grad;
  std::vector<torch::jit::IValue> inputs{torch::randn({2, 16, 8, 8})};
  layoutprof::Session session(quiet());
  {
    layoutprof::Scope outer("backbone");
    model.forward(inputs);
  }
  const json r = json::parse(session.stop().json());
  const std::multiset<std::string> copies = copies_by_module(r);
  EXPECT_EQ(std::count_if(copies.begin(), copies.end(),
                          [](const std::string& c) { return c.rfind("backbone.block1.norm ", 0) == 0; }),
            1)
      << r["copies"].dump();
}

// One session over the model inside a scope of a name no other session used; its report.
layoutprof::SessionReport record_fresh(torch::jit::Module& model, int i) {
  std::vector<torch::jit::IValue> inputs{torch::randn({2, 16, 8, 8})};
  layoutprof::Session session(quiet());
  {
    layoutprof::Scope outer(("fresh_scope_" + std::to_string(i)).c_str());
    model.forward(inputs);
  }
  return session.stop();
}

TEST(Api, WhatASessionInternedIsFreedWithItAndItsReport) {
  torch::jit::Module model = torch::jit::load(kModel);
  model.eval();
  torch::NoGradGuard no_grad;
  (void)record_fresh(model, 0);  // the process's first session makes what any would keep
  const layoutprof::PoolCounts start = layoutprof::pool_counts();
  const size_t site_names = layoutprof::module_sites().names();
  for (int i = 1; i <= 3; ++i) {
    {
      const layoutprof::SessionReport report = record_fresh(model, i);
      EXPECT_GT(layoutprof::pool_counts().strings, start.strings) << "the report holds its names";
      // Its names are still there after the session is gone.
      EXPECT_NE(report.text().find("fresh_scope_" + std::to_string(i) + ".block1.norm"), std::string::npos);
    }
    EXPECT_EQ(layoutprof::pool_counts(), start) << "after session " << i << ": strings "
        << layoutprof::pool_counts().strings << " (" << start.strings << " at the start), shapes "
        << layoutprof::pool_counts().shapes << " (" << start.shapes << ")";
    EXPECT_EQ(layoutprof::module_sites().names(), site_names) << "after session " << i;
    EXPECT_EQ(layoutprof::pool_leases(), 0);
  }
}

TEST(Api, TheLibrarysVersionIsTheHeadersAndTheProjects) {
  EXPECT_STREQ(layoutprof::library_version(), LAYOUTPROF_VERSION_STRING);
  EXPECT_EQ(std::string(LAYOUTPROF_VERSION_STRING),
            std::to_string(LAYOUTPROF_VERSION_MAJOR) + "." + std::to_string(LAYOUTPROF_VERSION_MINOR) + "." +
                std::to_string(LAYOUTPROF_VERSION_PATCH));
  EXPECT_STREQ(layoutprof::library_version(), LAYOUTPROF_VERSION);  // the command's (support's)
}

TEST(Api, TwoSessionsAtOnceAreRefusedInOneLine) {
  layoutprof::Session first(quiet());
  try {
    layoutprof::Session second(quiet());
    FAIL() << "a second session began";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("layoutprof: another session is recording in this process", 0), 0u) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
  preprocess(torch::randn({2, 4, 8}));
  const json r = json::parse(first.stop().json());
  EXPECT_EQ(copies_by_module(r).count("preprocess explicit_layout 256"), 1u)
      << "the refused session disturbed the first one: " << r["copies"].dump();
  layoutprof::Session after(quiet());  // the first one stopped: a new one may begin
  EXPECT_THROW(first.step(), std::logic_error);
}

// This test binary's own file: the suites of one CI run share the temporary folder, and a
// death test's child (the same binary, run again) must find the file its parent names.
std::string temp_path(const char* name) {
  char exe[4096] = {};
  const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  const std::string binary = n > 0 ? std::string(exe, static_cast<size_t>(n)) : std::string();
  return ::testing::TempDir() + std::to_string(std::hash<std::string>{}(binary)) + "_" + name;
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

TEST(Api, ASessionNeverStoppedWritesItsReportsInterruptedAsItIsDestroyed) {
  const std::string path = temp_path("api_destroyed.json");
  std::remove(path.c_str());
  {
    layoutprof::SessionOptions options = quiet();
    options.json = path;
    layoutprof::Session session(options);
    preprocess(torch::randn({2, 4, 8}));
    session.step();
    preprocess(torch::randn({2, 4, 8}));
  }
  const json r = read_json(path);
  EXPECT_EQ(r["run"]["status"], "interrupted");
  EXPECT_NE(r["run"]["error"].get<std::string>().find("never stopped"), std::string::npos) << r["run"]["error"];
  EXPECT_EQ(r["run"]["calls_recorded"], 1) << "the step cut short is dropped: a whole one was recorded";
}

TEST(Api, ASessionNeverStoppedWritesItsReportsInterruptedAsTheProgramExits) {
  const std::string path = temp_path("api_exit.json");
  std::remove(path.c_str());
  // A fresh process (fork and exec): a process forked from a recording one records nothing.
  ::testing::GTEST_FLAG(death_test_style) = "threadsafe";
  EXPECT_EXIT(
      {
        layoutprof::SessionOptions options = quiet();
        options.json = path;
        auto* session = new layoutprof::Session(options);  // never stopped, never destroyed
        preprocess(torch::randn({2, 4, 8}));
        session->step();
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
  const json r = read_json(path);
  EXPECT_EQ(r["run"]["status"], "interrupted");
  EXPECT_NE(r["run"]["error"].get<std::string>().find("as the program exited"), std::string::npos) << r["run"]["error"];
  EXPECT_EQ(copies_by_module(r).count("preprocess explicit_layout 256"), 1u) << r["copies"].dump();
}

TEST(Api, AFailedStepIsTheReportsLast) {
  layoutprof::Session session(quiet());
  preprocess(torch::randn({2, 4, 8}));
  session.step();
  try {
    torch::randn({2, 3}).view({4});
  } catch (const std::exception&) {
    session.fail("view size is not compatible");
  }
  session.step();  // not recorded: the run failed
  preprocess(torch::randn({2, 4, 8}));
  const layoutprof::SessionReport report = session.stop();
  EXPECT_EQ(report.status(), "failed");
  EXPECT_EQ(report.steps(), 2);
}

}  // namespace
