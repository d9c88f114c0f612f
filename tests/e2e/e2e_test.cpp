// Runs the layoutprof binary on the samples and checks what a user would see: copy counts
// against the manifest, exit codes, one-line errors, reports that validate and render.
#include <algorithm>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <tuple>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path work_dir() {
  static fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("layoutprof_e2e_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

// The work folder goes when the test program ends (each test runs in a process of its own under
// ctest: thousands of folders otherwise); a gtest environment's TearDown runs in that process
// only, after its tests, never in a child a test forks.
class RemoveWorkDir : public ::testing::Environment {
 public:
  // A run inside GitHub Actions would print annotations: the tests that want them set it.
  void SetUp() override { ::unsetenv("GITHUB_ACTIONS"); }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(fs::temp_directory_path() / ("layoutprof_e2e_" + std::to_string(::getpid())), ignored);
  }
};
const ::testing::Environment* const remove_work_dir = ::testing::AddGlobalTestEnvironment(new RemoveWorkDir);

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `binary` with NO_COLOR and no terminal, capturing stdout and stderr.
Result run_binary(const std::string& binary, const std::vector<std::string>& args) {
  static int n = 0;
  fs::path out = work_dir() / ("out" + std::to_string(n));
  fs::path err = work_dir() / ("err" + std::to_string(n++));
  std::string cmd = "NO_COLOR=1 " + quote(binary);
  for (const auto& a : args) cmd += " " + quote(a);
  cmd += " >" + quote(out.string()) + " 2>" + quote(err.string()) + " </dev/null";
  int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

Result run(const std::vector<std::string>& args) { return run_binary(LAYOUTPROF_BIN, args); }

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// The manifest is the same file wherever make_samples.py wrote it; the committed one is read.
// A report's op list as objects, decoded from its rows by the encoding the document states
// (ops.encoding), written here independently of the tool's reader.
json expand_ops(const json& report) {
  const json& ops = report["ops"];
  std::vector<std::string> counters;
  for (const json& c : report["run"]["counters"])
    if (c["measured"].get<bool>()) counters.push_back(c["event"]);
  auto tensors = [&](const json& flat) {
    json list = json::array();
    for (size_t i = 0; i + 1 < flat.size(); i += 2) {
      json t = ops["tensors"][flat[i].get<size_t>()];
      t["storage"] = flat[i + 1];
      list.push_back(t);
    }
    return list;
  };
  json out = json::array();
  for (const json& row : ops["rows"]) {
    json op = {{"id", out.size()},
               {"parent", row[0]},
               {"name", ops["names"][row[1].get<size_t>()]},
               {"module", ops["modules"][row[2].get<size_t>()]},
               {"source", ops["sources"][row[3].get<size_t>()][0]},
               {"source_text", ops["sources"][row[3].get<size_t>()][1]},
               {"start_ns", row[4]},
               {"duration_ns", row[5]},
               {"thread", row[6]},
               {"failed", row[7].get<int>() == 1},
               {"inputs", tensors(row[8])},
               {"outputs", tensors(row[9])},
               {"counters", json::object()}};
    if (row.size() > 10)
      for (size_t k = 0; k * 3 < row[10].size(); ++k)
        op["counters"][counters.at(k)] = {{"raw", row[10][3 * k]}, {"scaled", row[10][3 * k + 1]},
                                          {"multiplexed", row[10][3 * k + 2].get<int>() == 1}};
    out.push_back(op);
  }
  return out;
}

const json& manifest() {
  static const json m = json::parse(read_file(fs::path(COMMITTED_SAMPLES_DIR) / "manifest.json"));
  return m;
}

// The archive the tests run: the one the torch matching the LibTorch under test made at
// set-up (build/samples), else the committed one (made by 1.13; the 2.x-only ones by 2.x).
fs::path sample_path(const json& entry) {
  fs::path made = fs::path(MADE_SAMPLES_DIR) / entry.at("file").get<std::string>();
  if (fs::exists(made) || entry.value("large", false)) return made;
  return fs::path(COMMITTED_SAMPLES_DIR) / entry.at("file").get<std::string>();
}

// "2.14.1+cu130" matches the prefixes "2", "2.14" and "2.14.1".
bool version_matches(const std::string& prefix, const std::string& version) {
  return version.rfind(prefix, 0) == 0 &&
         (version.size() == prefix.size() || version[prefix.size()] == '.' ||
          version[prefix.size()] == '+');
}

// The first of a sample's `key` entries ("expect", "grads") one of whose `torch` prefixes
// matches the LibTorch under test.
const json& for_this_libtorch(const json& entry, const char* key) {
  for (const auto& e : entry.at(key))
    for (const auto& prefix : e.at("torch"))
      if (version_matches(prefix.get<std::string>(), LIBTORCH_VERSION)) return e;
  throw std::runtime_error(entry.at("name").get<std::string>() + ": no '" + key + "' entry for LibTorch " +
                           LIBTORCH_VERSION);
}

// What the LibTorch under test does with a sample.
const json& expected(const json& entry) { return for_this_libtorch(entry, "expect"); }

// The sample's model and its manifest inputs, then `extra`.
std::vector<std::string> model_args(const json& entry, const std::vector<std::string>& extra) {
  std::vector<std::string> args = {sample_path(entry).string()};
  for (const auto& in : entry.at("inputs")) {
    args.push_back("--input");
    args.push_back(in.get<std::string>());
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::vector<std::string> run_args(const json& entry, const fs::path& report) {
  return model_args(entry, {"--json", report.string(), "--iters", "2"});
}

const json& entry_named(const std::string& name) {
  for (const auto& e : manifest().at("samples"))
    if (e.at("name") == name) return e;
  throw std::runtime_error("no sample " + name);
}

std::vector<std::string> sample_args(const std::string& sample, const std::vector<std::string>& extra) {
  return model_args(entry_named(sample), extra);
}

// Samples the torch under test could not make (a package it needs does not import beside
// it, e.g. torchvision beside a CPU-only 2.x wheel), with make_samples.py's reason.
std::string unmade_reason(const std::string& name) {
  fs::path list = fs::path(MADE_SAMPLES_DIR) / "unmade.json";
  if (!fs::exists(list)) return "";
  json unmade = json::parse(read_file(list));
  return unmade.contains(name) ? unmade[name].get<std::string>() : "";
}

// The manifest's hazards of a sample (none named, or no `hazards`: the report holds none), each
// found, certain, by its kind and a piece of the code on its line; the text report shows each
// hazard's line before the verdict.
void expect_hazards(const json& entry, const json& report, const fs::path& report_path) {
  ASSERT_TRUE(report.contains("hazards")) << entry.at("name");
  const json& got = report.at("hazards");
  const json want = entry.value("hazards", json::array());
  if (want.empty()) {
    EXPECT_TRUE(got.empty()) << entry.at("name") << ": " << got.dump(1);
    return;
  }
  Result text = run({"render", report_path.string()});
  ASSERT_EQ(text.code, 0) << text.err;
  const size_t verdict = text.out.find("\nVerdict");
  for (const json& w : want) {
    bool found = false;
    for (const json& h : got)
      found = found || (h.at("kind") == w.at("kind") && h.at("certainty") == "yes" &&
                        h.at("code").get<std::string>().find(w.at("code").get<std::string>()) != std::string::npos);
    EXPECT_TRUE(found) << entry.at("name") << ": no hazard like " << w.dump() << " in " << got.dump(1);
    EXPECT_LT(text.out.find(w.at("code").get<std::string>()), verdict) << text.out;
  }
}

// The manifest's causes of a sample (its `causes`: [] says none), each found in the report:
// its layout, its birthplace (kind, op, the file of its line, the code on it) and the modules
// that pay. The text report's first screen, before the heatmap, holds the code and the fix.
void expect_causes(const json& entry, const json& report, const fs::path& report_path, bool pt2) {
  if (!entry.contains("causes")) return;
  const json& causes = report.at("causes");
  if (entry.at("causes").empty()) {
    EXPECT_TRUE(causes.empty()) << entry.at("name") << ": " << causes.dump();
    return;
  }
  Result text = run({"render", report_path.string()});
  ASSERT_EQ(text.code, 0) << text.err;
  const size_t heatmap = text.out.find("\nHeatmap");
  EXPECT_LT(text.out.find("→ fix: "), heatmap) << text.out;
  for (const json& want : entry.at("causes")) {
    const json& at = pt2 && want.contains("pt2") ? want.at("pt2") : want;
    const std::string file = at.at("file"), code = at.at("code");
    const json* found = nullptr;
    for (const json& c : causes) {
      const json& b = c.at("birthplace");
      auto payers = c.at("chain").at("payer_modules").get<std::vector<std::string>>();
      std::sort(payers.begin(), payers.end());
      if (c.at("layout") == want.at("layout") && b.at("kind") == want.at("kind") && b.at("name") == want.at("op") &&
          b.at("where").get<std::string>().find(file) != std::string::npos &&
          b.at("code").get<std::string>().find(code) != std::string::npos && payers == want.at("payers"))
        found = &c;
    }
    ASSERT_NE(found, nullptr) << entry.at("name") << ": no cause like " << want.dump() << " in " << causes.dump(1);
    if (want.at("all_copies").get<bool>()) {
      EXPECT_EQ(found->at("copies"), report["summary"]["copies"]["implicit_layout"]);
    }
    const std::string swap = want.at("swap");
    if (!swap.empty()) {
      EXPECT_THAT(found->at("fixes").dump(), HasSubstr("swap the operands of " + swap)) << found->dump(1);
    }
    if (!code.empty()) {
      EXPECT_LT(text.out.find(code), heatmap) << text.out;
    }
  }
}

// Runs one archive of a sample and checks it against the manifest's expectation for the
// LibTorch under test: the copies of each class exactly, and the report against the schema.
void expect_as_manifest_says(const json& entry, const fs::path& model, const std::string& tag) {
  if (!fs::exists(model)) {
    std::string why = unmade_reason(entry.at("name"));
    if (!why.empty()) GTEST_SKIP() << "not made with this torch: " << why;
  }
  ASSERT_TRUE(fs::exists(model)) << model << ": run scripts/setup.sh";
  const json& want = expected(entry);
  const std::string name = entry.at("name");
  fs::path report = work_dir() / (name + tag + ".json");
  // One intra-op thread, as the expectations were derived (and make_samples.py --check runs):
  // LibTorch picks some kernels by thread count (the Threads tests).
  std::vector<std::string> args = model_args(entry, {"--json", report.string(), "--iters", "2", "--threads", "1"});
  args[0] = model.string();
  Result r = run(args);
  const std::string status = want.at("status");
  if (status == "too_new") {
    // An archive that calls ops this LibTorch lacks: exit 3, one line saying what and how.
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr("needs an op this LibTorch " LIBTORCH_VERSION " lacks (aten::"));
    EXPECT_THAT(r.err, HasSubstr("TORCH_PYTHON=/path/to/python scripts/setup.sh"));
    EXPECT_FALSE(fs::exists(report)) << "nothing ran, so there is no report";
    return;
  }
  EXPECT_EQ(r.code, status == "ok" ? 0 : 4) << r.err;
  ASSERT_TRUE(fs::exists(report)) << r.err;
  json j = json::parse(read_file(report));
  EXPECT_EQ(j["run"]["status"], status);
  EXPECT_EQ(j["run"]["torch_version"], LIBTORCH_VERSION);
  EXPECT_EQ(j["summary"]["copies"], want.at("copies")) << name << ": " << want.value("why", "");
  EXPECT_TRUE(j["run"]["calls_identical"].get<bool>());
  EXPECT_GT(j["summary"]["ops"].get<int>(), 0);
  // Every copy listed adds up to the summary.
  std::map<std::string, int64_t> bytes;
  for (const auto& c : j["copies"]) bytes[c["class"]] += c["bytes"].get<int64_t>();
  for (auto& [cls, b] : j["summary"]["copy_bytes"].items()) EXPECT_EQ(bytes[cls], b.get<int64_t>()) << cls;
  std::string validate = "/usr/bin/python3 " + quote(VALIDATOR) + " " + quote(SCHEMA) + " " + quote(report.string());
  EXPECT_EQ(std::system(validate.c_str()), 0) << validate;
  expect_causes(entry, j, report, false);
  expect_hazards(entry, j, report);
}

// Each sample as the torch under test scripted it; the failing one's report included.
class Samples : public ::testing::TestWithParam<std::string> {};

TEST_P(Samples, CopyCountsMatchTheManifestAndTheSchema) {
  const json& entry = entry_named(GetParam());
  expect_as_manifest_says(entry, sample_path(entry), "");
}

std::vector<std::string> sample_names() {
  std::vector<std::string> names;
  for (const auto& e : manifest().at("samples")) names.push_back(e.at("name").get<std::string>());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Manifest, Samples, ::testing::ValuesIn(sample_names()),
                         [](const auto& info) { return info.param; });

// Intra-op parallelism changes which thread runs an op's chunks, and can change which kernel
// LibTorch picks (1.13's depthwise convolution takes its slow path, with a bias copy, on one
// thread only), never what layoutprof makes of the copies: at one thread and at two its counts
// are torch.profiler's at the same thread count (tests/e2e/profiler_copies.py, the torch
// matching this LibTorch), and where the profiler sees the same copies at both, layoutprof
// lists the same copies, class by class, byte for byte, op by op.
class Threads : public ::testing::TestWithParam<std::string> {};

// torch.profiler, the reference, sometimes dies by a signal on the model that forks (torch
// 2.14.1's profiler crashes in its own code, layoutprof not loaded): up to 3 tries while it dies
// so; any other failure is returned at once.
int run_reference(const std::string& cmd) {
  int status = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    status = std::system(cmd.c_str());
    const bool killed = WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) > 128);
    if (!killed) break;
    std::cerr << "the reference died by a signal (try " << attempt + 1 << " of 3): " << cmd << "\n";
  }
  return status;
}

TEST_P(Threads, OneThreadAndTwoMakeTheSameCopies) {
  const json& entry = entry_named(GetParam());
  if (!fs::exists(sample_path(entry)) && !unmade_reason(GetParam()).empty())
    GTEST_SKIP() << "not made with this torch: " << unmade_reason(GetParam());
  if (expected(entry).at("status") == "too_new") GTEST_SKIP() << "this LibTorch cannot load it";
  // A large sample (vit_b_16: 14 s a forward on Debian's LibTorch at one thread) warms up once.
  const std::string warmup = entry.value("large", false) ? "1" : "3";
  std::string reference = quote(TORCH_PYTHON) + " " + quote(PROFILER_COPIES) + " --warmup=" + warmup + " " +
                          quote(sample_path(entry).string()) + " 1,2";
  for (const auto& in : entry.at("inputs")) reference += " " + quote(in.get<std::string>());
  fs::path reference_out = work_dir() / (GetParam() + "_profiler_threads.json");
  ASSERT_EQ(run_reference(reference + " >" + quote(reference_out.string())), 0) << reference;
  const json profiler = json::parse(read_file(reference_out));
  std::map<int, json> copies;
  for (int threads : {1, 2}) {
    fs::path report = work_dir() / (GetParam() + "_threads" + std::to_string(threads) + ".json");
    Result r = run(model_args(entry, {"--json", report.string(), "--warmup", warmup, "--iters", "1", "--no-counters",
                                      "--threads", std::to_string(threads)}));
    ASSERT_TRUE(fs::exists(report)) << r.err;
    json j = json::parse(read_file(report));
    EXPECT_EQ(j["run"]["threads"], threads);
    EXPECT_EQ(j["summary"]["copies"], profiler[std::to_string(threads)]) << threads << " thread(s)";
    json list = json::array();
    const json ops = expand_ops(j);
    for (const json& c : j["copies"])
      list.push_back({c["class"], c["bytes"], ops[c["culprit"].get<size_t>()]["name"], c["src"]["layout"],
                      c["dst"]["layout"]});
    std::sort(list.begin(), list.end());  // the same copies, whichever thread's op came first
    copies[threads] = {{"summary", j["summary"]["copies"]}, {"bytes", j["summary"]["copy_bytes"]}, {"list", list}};
  }
  if (profiler["1"] == profiler["2"]) {
    EXPECT_EQ(copies[1], copies[2]);
  } else {  // LibTorch ran other kernels: say which, for the README's findings
    std::cout << GetParam() << ": torch.profiler sees other copies at 1 and 2 threads: " << profiler.dump() << "\n";
  }
}

INSTANTIATE_TEST_SUITE_P(Manifest, Threads, ::testing::ValuesIn(sample_names()),
                         [](const auto& info) { return info.param; });

// torch.jit.fork/wait: the branch's ops run on an inter-op pool thread; each op keeps its own
// module and source line on whatever thread ran it, the calls count as the same op sequence
// however the threads interleaved, and the text and trace say which thread ran what.
TEST(Threads, AForkedBranchKeepsItsModuleAndLineOnItsThread) {
  fs::path report = work_dir() / "fork_wait.json";
  fs::path trace = work_dir() / "fork_wait_trace.json";
  Result r = run(sample_args("fork_wait", {"--json", report.string(), "--trace", trace.string(), "--warmup", "1",
                                           "--iters", "7", "--no-counters"}));
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(read_file(report));
  EXPECT_TRUE(j["run"]["calls_identical"].get<bool>()) << "each thread ran the same ops in every call";
  const json ops = expand_ops(j);
  std::map<std::string, json> culprit;  // copy class -> its culprit op
  for (const json& c : j["copies"]) culprit[c["class"]] = ops[c["culprit"].get<size_t>()];
  ASSERT_EQ(culprit.size(), 3u) << j["copies"].dump();
  const json& branch = culprit["implicit_layout"];
  EXPECT_EQ(branch["name"], "aten::reshape");
  EXPECT_EQ(branch["module"], "branch");
  EXPECT_NE(branch["thread"], 0) << "the forked branch ran on a pool thread";
  EXPECT_TRUE(branch["parent"].is_null()) << "a task's op is top-level, not nested under a main-thread op";
  EXPECT_THAT(branch["source"].get<std::string>(), HasSubstr("sample_scripting.py:"));
  EXPECT_THAT(branch["source_text"].get<std::string>(), HasSubstr("reshape"));
  EXPECT_EQ(culprit["explicit_layout"]["name"], "aten::contiguous");
  EXPECT_EQ(culprit["explicit_layout"]["module"], "");
  EXPECT_EQ(culprit["explicit_layout"]["thread"], 0);
  EXPECT_EQ(culprit["broadcast"]["name"], "aten::linear");
  EXPECT_EQ(culprit["broadcast"]["module"], "head") << "after the wait, on whichever thread";
  for (const json& op : ops)
    if (op["parent"].is_null()) {
      EXPECT_FALSE(op["source"].get<std::string>().empty()) << op["name"];
    }
  EXPECT_THAT(r.out, HasSubstr("(thread ")) << "the text says which thread ran the branch's split point";
  EXPECT_THAT(read_file(trace), HasSubstr("\"inter-op thread ")) << "the trace names the branch's thread";
}

// A training sample's gradient verdicts for the LibTorch under test: {"verdicts", "why"}.
const json& expected_grads(const json& entry) { return for_this_libtorch(entry, "grads"); }

// Training samples: a --backward run gives each parameter the manifest's gradient verdict.
class TrainingSamples : public ::testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(TrainingSamples);

TEST_P(TrainingSamples, GradientVerdictsMatchTheManifest) {
  const json& entry = entry_named(GetParam());
  fs::path report = work_dir() / (GetParam() + "_backward.json");
  // One intra-op thread, as the verdicts were derived: a 1x1 convolution's backward, for one,
  // is another kernel's with more threads.
  Result r = run(model_args(entry, {"--backward", "--json", report.string(), "--iters", "2", "--no-counters",
                                    "--threads", "1"}));
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(read_file(report));
  EXPECT_TRUE(j["run"]["backward"].get<bool>());
  EXPECT_EQ(j["run"]["loss"], "randn");
  const json& want = expected_grads(entry).at("verdicts");
  std::map<std::string, std::string> got;
  std::map<std::string, int64_t> counts;
  for (const json& p : j["parameters"]) {
    got[p["name"]] = p["grad_verdict"].is_null() ? "frozen" : p["grad_verdict"].get<std::string>();
    counts[got[p["name"]]]++;
    // The lines DDP prints come with the one verdict DDP warns about, and name the parameter's sizes.
    EXPECT_EQ(!p["ddp_warning"].is_null(), got[p["name"]] == "size1_only") << p["name"];
    if (got[p["name"]] != "no_grad") {
      EXPECT_FALSE(p["grad_producer"].is_null()) << p["name"] << ": no backward op produced it";
    }
  }
  EXPECT_EQ(got.size(), want.size());
  for (auto& [name, verdict] : want.items()) EXPECT_EQ(got[name], verdict.get<std::string>()) << name << ": " << expected_grads(entry).at("why");
  for (const char* v : {"match", "size1_only", "layout_mismatch", "no_grad"})
    EXPECT_EQ(j["summary"]["grad_layout"][v].get<int64_t>(), counts[v]) << v;
  // The backward pass is recorded after the forward one, and its functions point back to
  // forward ops that came before it.
  const json& ops = j["ops"];
  ASSERT_TRUE(ops["backward_from"].is_number());
  const int64_t from = ops["backward_from"];
  EXPECT_GT(from, 0);
  EXPECT_LT(from, static_cast<int64_t>(ops["rows"].size()));
  ASSERT_GT(ops["forward_ops"].size(), 0u);
  for (size_t i = 0; i + 1 < ops["forward_ops"].size(); i += 2) {
    EXPECT_GE(ops["forward_ops"][i].get<int64_t>(), from);
    EXPECT_LT(ops["forward_ops"][i + 1].get<int64_t>(), from);
  }
  std::string validate = "/usr/bin/python3 " + quote(VALIDATOR) + " " + quote(SCHEMA) + " " + quote(report.string());
  EXPECT_EQ(std::system(validate.c_str()), 0) << validate;
  // The text report lists every parameter that is not a match, rendered from the file too.
  Result text = run({"render", report.string()});
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("Gradient layouts (what DDP will see)"));
  for (auto& [name, verdict] : want.items())
    if (verdict != "match") {
      EXPECT_THAT(text.out, HasSubstr(name + "  " + verdict.get<std::string>()));
    }
}

std::vector<std::string> training_sample_names() {
  std::vector<std::string> names;
  for (const auto& e : manifest().at("samples"))
    if (e.contains("grads")) names.push_back(e.at("name").get<std::string>());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Manifest, TrainingSamples, ::testing::ValuesIn(training_sample_names()),
                         [](const auto& info) { return info.param; });

TEST(Training, BadUseOfBackwardGetsOneLine) {
  Result loss = run(sample_args("grad_zoo", {"--loss", "sum"}));
  EXPECT_EQ(loss.code, 2);
  EXPECT_EQ(loss.err, "layoutprof: --loss needs --backward\n");
  // A model whose parameters are frozen has nothing to differentiate.
  Result frozen = run(sample_args("transpose_reshape", {"--backward"}));
  EXPECT_EQ(frozen.code, 2) << frozen.err;
  EXPECT_EQ(lines(frozen.err), 1) << frozen.err;
  EXPECT_THAT(frozen.err, HasSubstr("--backward: forward() returned no floating-point tensor that requires grad"));
}

TEST(Training, SumLossGivesTheSameVerdicts) {
  fs::path report = work_dir() / "grad_zoo_sum.json";
  Result r = run(sample_args("grad_zoo", {"--backward", "--loss", "sum", "--json", report.string(), "--no-counters"}));
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(read_file(report));
  EXPECT_EQ(j["run"]["loss"], "sum");
  for (const json& p : j["parameters"])
    EXPECT_EQ(p["grad_verdict"], expected_grads(entry_named("grad_zoo"))["verdicts"][p["name"].get<std::string>()])
        << p["name"];
}

// Under a newer LibTorch, the committed archives (scripted by 1.13, as old models are) as
// well: same code, executed by this LibTorch, so the same expectations.
class CommittedArchives : public ::testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CommittedArchives);

TEST_P(CommittedArchives, CopyCountsMatchTheManifest) {
  const json& entry = entry_named(GetParam());
  expect_as_manifest_says(entry, fs::path(COMMITTED_SAMPLES_DIR) / entry.at("file").get<std::string>(),
                          "_committed");
}

std::vector<std::string> committed_made_by_another_torch() {
  std::vector<std::string> names;
  if (version_matches("1", LIBTORCH_VERSION))
    return names;  // the committed archives are this torch's own
  for (const auto& e : manifest().at("samples"))
    if (!e.value("large", false) && e.value("min_torch", 1) == 1) names.push_back(e.at("name"));
  return names;
}

INSTANTIATE_TEST_SUITE_P(Manifest, CommittedArchives, ::testing::ValuesIn(committed_made_by_another_torch()),
                         [](const auto& info) { return info.param; });

// torch.export programs (.pt2): every sample that exports, and the export-only samples (the
// higher-order ops, a dynamic batch, a decomposed buffer mutation), made at set-up by a 2.x
// torch, run through layoutprof's executor with the copies the manifest's pt2 entry says.
std::vector<const json*> pt2_entries() {
  std::vector<const json*> entries;
  for (const char* list : {"samples", "pt2_samples"})
    for (const auto& e : manifest().at(list))
      if (e.contains("pt2")) entries.push_back(&e);
  return entries;
}

const json& pt2_entry_named(const std::string& name) {
  for (const json* e : pt2_entries())
    if (e->at("name") == name) return *e;
  throw std::runtime_error("no .pt2 sample " + name);
}

std::vector<std::string> pt2_args(const json& entry, const std::vector<std::string>& extra) {
  const json& pt2 = entry.at("pt2");
  std::vector<std::string> args = {(fs::path(MADE_SAMPLES_DIR) / pt2.at("file").get<std::string>()).string()};
  for (const auto& in : pt2.at("inputs")) {
    args.push_back("--input");
    args.push_back(in.get<std::string>());
  }
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

class Pt2Samples : public ::testing::TestWithParam<std::string> {};
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Pt2Samples);

TEST_P(Pt2Samples, CopyCountsMatchTheManifest) {
  const json& entry = pt2_entry_named(GetParam());
  fs::path report = work_dir() / (GetParam() + "_pt2.json");
  std::vector<std::string> args = pt2_args(entry, {"--json", report.string(), "--iters", "2", "--threads", "1"});
  if (!fs::exists(args[0])) {
    std::string why = unmade_reason(entry.at("name"));
    if (!why.empty()) GTEST_SKIP() << "not made with this torch: " << why;
  }
  ASSERT_TRUE(fs::exists(args[0])) << args[0] << ": run scripts/setup.sh with a 2.x torch";
  const json& want = for_this_libtorch(entry.at("pt2"), "expect");
  Result r = run(args);
  EXPECT_EQ(r.code, want.at("status") == "ok" ? 0 : 4) << r.err;
  ASSERT_TRUE(fs::exists(report)) << r.err;
  json j = json::parse(read_file(report));
  EXPECT_EQ(j["run"]["model_format"], "pt2");
  EXPECT_EQ(j["summary"]["copies"], want.at("copies")) << GetParam() << ": " << want.value("why", "");
  EXPECT_TRUE(j["run"]["calls_identical"].get<bool>());
  std::string validate = "/usr/bin/python3 " + quote(VALIDATOR) + " " + quote(SCHEMA) + " " + quote(report.string());
  EXPECT_EQ(std::system(validate.c_str()), 0) << validate;
  expect_causes(entry, j, report, true);
  expect_hazards(entry, j, report);
}

std::vector<std::string> pt2_sample_names() {
  std::vector<std::string> names;
  if (version_matches("1", LIBTORCH_VERSION)) return names;  // Pt2.RefusedByLibTorch1 instead
  for (const json* e : pt2_entries()) names.push_back(e->at("name"));
  return names;
}

INSTANTIATE_TEST_SUITE_P(Manifest, Pt2Samples, ::testing::ValuesIn(pt2_sample_names()),
                         [](const auto& info) { return info.param; });

// A LibTorch 1.x build meets a .pt2 (the committed one, made by 2.14): exit 3, one line saying
// what it needs and how to get it.
TEST(Pt2, RefusedByLibTorch1) {
  if (!version_matches("1", LIBTORCH_VERSION)) GTEST_SKIP() << "LibTorch " LIBTORCH_VERSION " runs .pt2 programs";
  fs::path model = fs::path(COMMITTED_SAMPLES_DIR) / "transpose_reshape.pt2";
  fs::path report = work_dir() / "refused_pt2.json";
  Result r = run({model.string(), "--input", "2x8x16", "--json", report.string()});
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("is a torch.export program (.pt2), which needs layoutprof built against a LibTorch 2.x"));
  EXPECT_THAT(r.err, HasSubstr("TORCH_PYTHON=/path/to/python scripts/setup.sh"));
  EXPECT_FALSE(fs::exists(report));
}

// An op of a higher-order op's subgraph names the user's line and which graph it ran in (the
// subgraph's nodes are top-level ops, as torch.profiler shows them under ep.module()).
TEST(Pt2, OpsOfASubgraphSayWhichHigherOrderOpTheyRanIn) {
  if (version_matches("1", LIBTORCH_VERSION)) GTEST_SKIP() << "LibTorch 1.x refuses .pt2 (Pt2.RefusedByLibTorch1)";
  const std::map<std::string, std::string> graph_of_copy = {
      {"cond_branch", "(inside torch.cond's true branch)"},
      {"while_loop", "(inside while_loop's body)"},
      {"map_slices", "(inside map's body)"},
      {"no_grad_block", "(inside a set_grad_enabled block)"}};
  for (const auto& [name, inside] : graph_of_copy) {
    fs::path report = work_dir() / (name + "_sites.json");
    Result r = run(pt2_args(pt2_entry_named(name), {"--json", report.string(), "--iters", "1"}));
    ASSERT_EQ(r.code, 0) << name << ": " << r.err;
    json j = json::parse(read_file(report));
    json ops = expand_ops(j);
    size_t inside_copies = 0;
    for (const json& c : j["copies"]) {
      if (c["class"] != "implicit_layout" && c["class"] != "explicit_layout") continue;
      const json& culprit = ops[c["culprit"].get<size_t>()];
      EXPECT_THAT(culprit["source"].get<std::string>(), HasSubstr("sample_export.py:")) << name << ": the user's line";
      const std::string text = culprit["source_text"].get<std::string>();
      EXPECT_THAT(text, Not(HasSubstr("<eval_with_key>"))) << name << ": fx's generated code is no source";
      inside_copies += text.find(inside) != std::string::npos;
    }
    EXPECT_GT(inside_copies, 0u) << name << " has no layout copy " << inside;
  }
}

// A training step on a decomposed train-mode program: its buffers' write-back after the forward
// changes running statistics autograd saved; PyTorch's ep.module() fails the same way. Exit 4,
// one line that says why and what to profile instead; the report says what failed.
TEST(Pt2, ATrainingStepOnADecomposedProgramThatWritesBackSaysWhyItFails) {
  if (version_matches("1", LIBTORCH_VERSION)) GTEST_SKIP() << "LibTorch 1.x refuses .pt2 (Pt2.RefusedByLibTorch1)";
  fs::path report = work_dir() / "batchnorm_train_backward.json";
  Result r = run(pt2_args(pt2_entry_named("batchnorm_train"), {"--backward", "--json", report.string(), "--iters", "1"}));
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("modified by an inplace operation"));
  EXPECT_THAT(r.err, HasSubstr("the program writes its mutated buffers back after the forward"));
  EXPECT_THAT(r.err, HasSubstr("before run_decompositions()"));
  json j = json::parse(read_file(report));
  EXPECT_EQ(j["run"]["status"], "failed");
  EXPECT_EQ(j["run"]["model_mode"]["value"], "train");
}

// What a 2.x build refuses in one line (exit 3), nothing run: a custom op whose library is not
// loaded (named, with the flag that loads it), a node kind the executor does not run, a library
// that does not load, a truncated archive, AOTInductor's code without its program, two programs.
TEST(Pt2, RefusedProgramsSayWhatInOneLine) {
  if (version_matches("1", LIBTORCH_VERSION)) GTEST_SKIP() << "LibTorch 1.x refuses every .pt2 (Pt2.RefusedByLibTorch1)";
  const fs::path dir = fs::path(MADE_SAMPLES_DIR) / "not_torchscript";
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  fs::path truncated = work_dir() / "truncated.pt2";
  {
    std::string bytes = read_file(fs::path(COMMITTED_SAMPLES_DIR) / "transpose_reshape.pt2");
    std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  }
  const std::vector<Case> cases = {
      {{(dir / "custom_op.pt2").string(), "--input", "2x3"},
       "this LibTorch has no op layoutprof_test::scale (a custom op: load its library with --load-library FILE.so)"},
      {{(dir / "unknown_node.pt2").string(), "--input", "2x8x16"},
       "node 'torch.ops.higher_order.layoutprof_unknown': a higher-order op layoutprof does not run"},
      {{(dir / "custom_op.pt2").string(), "--input", "2x3", "--load-library", "/nonexistent/libops.so"},
       "cannot load the op library '/nonexistent/libops.so'"},
      {{truncated.string(), "--input", "2x8x16"}, ""},
      {{(fs::path(MADE_SAMPLES_DIR) / "packages" / "aoti_only.pt2").string()},
       "an AOTInductor package (compiled code for model, no exported program): layoutprof profiles the exported program"},
      {{(fs::path(MADE_SAMPLES_DIR) / "packages" / "two_programs.pt2").string()},
       "2 exported programs (models/first.json, models/second.json): layoutprof profiles one program per archive"},
  };
  for (const Case& c : cases) {
    Result r = run(c.args);
    EXPECT_EQ(r.code, 3) << c.args[0] << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.says)) << c.args[0];
  }
}

// A program exported with a dynamic batch runs at another batch, and refuses one outside the
// range it was exported for, or a static dimension that differs (exit 2, one line).
TEST(Pt2, DynamicBatchWithinItsRange) {
  if (version_matches("1", LIBTORCH_VERSION)) GTEST_SKIP() << "LibTorch 1.x refuses every .pt2";
  const std::string model = (fs::path(MADE_SAMPLES_DIR) / "dynamic_batch.pt2").string();
  fs::path report = work_dir() / "dynamic_batch_7.json";
  Result ok = run({model, "--input", "7x8x16", "--json", report.string(), "--iters", "1"});
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(json::parse(read_file(report))["summary"]["copies"]["implicit_layout"], 1);
  Result big = run({model, "--input", "2000x8x16"});
  EXPECT_EQ(big.code, 2) << big.err;
  EXPECT_EQ(lines(big.err), 1) << big.err;
  EXPECT_THAT(big.err, HasSubstr("dimension 0 is 2000; the program was exported for 1 to 1024"));
  Result fixed = run({model, "--input", "4x9x16"});
  EXPECT_EQ(fixed.code, 2) << fixed.err;
  EXPECT_THAT(fixed.err, HasSubstr("dimension 1 is 9; the program was exported for 8 (a static dimension)"));
}

// The archive's own inputs where no --input is given (resnet18's channels_last batch of 8):
// the seed's 17 weight copies, each under its module path and at the user's line in
// torchvision's resnet.py; with no Python on PATH, since layoutprof runs the program itself.
TEST(Pt2, ResnetOnItsStoredInputsNamesModulesAndUserLines) {
  const json& entry = pt2_entry_named("resnet18");
  fs::path model = fs::path(MADE_SAMPLES_DIR) / entry.at("pt2").at("file").get<std::string>();
  if (version_matches("1", LIBTORCH_VERSION)) GTEST_SKIP() << "LibTorch 1.x refuses .pt2 (Pt2.RefusedByLibTorch1)";
  if (!fs::exists(model) && !unmade_reason("resnet18").empty()) GTEST_SKIP() << unmade_reason("resnet18");
  ASSERT_TRUE(fs::exists(model)) << model;
  fs::path report = work_dir() / "resnet18_stored.json";
  Result r = run_binary("/usr/bin/env", {"PATH=/nonexistent", LAYOUTPROF_BIN, model.string(), "--json", report.string(),
                                         "--iters", "1", "--threads", "1"});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(read_file(report));
  EXPECT_EQ(j["run"]["inputs"][0]["spec"], "8x3x224x224:channels_last");
  EXPECT_EQ(j["run"]["model_mode"]["value"], "eval") << "exported from a module in eval mode";
  EXPECT_EQ(j["run"]["model_mode"]["chosen_by"], "export");
  EXPECT_THAT(r.out, HasSubstr("  mode      eval, fixed at export: 20 ops in eval mode (their training flags)\n"));
  EXPECT_EQ(j["summary"]["copies"]["implicit_layout"], 17);
  EXPECT_NEAR(j["summary"]["copy_bytes"]["implicit_layout"].get<double>(), 43.98e6, 0.01e6);
  std::set<std::string> modules, sources;
  json ops = expand_ops(j);
  for (const json& c : j["copies"]) {
    if (c["class"] != "implicit_layout") continue;
    const json& culprit = ops[c["culprit"].get<size_t>()];
    modules.insert(culprit["module"].get<std::string>());
    sources.insert(culprit["source"].get<std::string>());
  }
  EXPECT_TRUE(modules.count("layer4.0.conv2")) << json(modules).dump();
  for (const std::string& source : sources) EXPECT_THAT(source, HasSubstr("torchvision/models/resnet.py:"));
  EXPECT_TRUE(sources.count("torchvision/models/resnet.py:96")) << json(sources).dump() << " (BasicBlock's self.conv2)";
}

// The archive of a model that uses scaled_dot_product_attention as PyTorch 2.x scripted it
// (vit_b_16, made at set-up by the 2.x build in LAYOUTPROF_NEWER_SAMPLES; scripts/test.sh
// passes it), handed to this LibTorch.
TEST(TooNew, TorchvisionArchiveOfANewerPyTorch) {
  const char* newer = std::getenv("LAYOUTPROF_NEWER_SAMPLES");
  if (!version_matches("1", LIBTORCH_VERSION)) GTEST_SKIP() << "LibTorch " LIBTORCH_VERSION " reads 2.x archives";
  if (!newer || !fs::exists(fs::path(newer) / "vit_b_16.pt"))
    GTEST_SKIP() << "no 2.x-scripted vit_b_16.pt: set LAYOUTPROF_NEWER_SAMPLES to a 2.x build's samples";
  Result r = run({(fs::path(newer) / "vit_b_16.pt").string(), "--input", "1x3x224x224"});
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("needs an op this LibTorch " LIBTORCH_VERSION
                               " lacks (aten::scaled_dot_product_attention): it was probably "
                               "saved by PyTorch 2.x; build layoutprof against that PyTorch "
                               "(TORCH_PYTHON=/path/to/python scripts/setup.sh)"));
}

TEST(Reports, RenderReproducesTheLiveText) {
  fs::path report = work_dir() / "render.json";
  auto args = run_args(entry_named("transpose_reshape"), report);
  Result live = run(args);
  ASSERT_EQ(live.code, 0) << live.err;
  Result rendered = run({"render", report.string()});
  ASSERT_EQ(rendered.code, 0) << rendered.err;
  EXPECT_EQ(rendered.out, live.out);
  EXPECT_THAT(live.out, HasSubstr("Heatmap"));
  // The same with rows by op.
  Result live_ops = run({"render", report.string(), "--group-by", "op", "--top", "1"});
  EXPECT_EQ(live_ops.code, 0);
  EXPECT_THAT(live_ops.out, HasSubstr("rows are top-level ops"));
}

// Every format from one run's saved report: render --format FORMAT -o FILE writes what the
// run itself writes (--json, --html, --trace), and nothing else reaches stdout.
TEST(Reports, RenderWritesEachFormatAsTheRunDoes) {
  fs::path report = work_dir() / "formats.json", page = work_dir() / "formats.html",
           trace = work_dir() / "formats.trace.json";
  auto args = run_args(entry_named("transpose_reshape"), report);
  args.insert(args.end(), {"--html", page.string(), "--trace", trace.string()});
  ASSERT_EQ(run(args).code, 0);
  const std::string live_page = read_file(page);
  EXPECT_THAT(live_page, HasSubstr("<!DOCTYPE html>"));
  EXPECT_THAT(live_page, HasSubstr("id=\"layoutprof-data\""));
  for (const auto& [format, live] : std::vector<std::pair<std::string, fs::path>>{
           {"html", page}, {"json", report}, {"trace", trace}}) {
    fs::path again = work_dir() / ("rendered." + format);
    Result r = run({"render", report.string(), "--format", format, "-o", again.string()});
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "") << format;
    if (format == "trace") {  // timestamps are relative to the report, the same either way
      EXPECT_EQ(json::parse(read_file(again)), json::parse(read_file(live))) << format;
    } else if (format == "html") {
      EXPECT_EQ(read_file(again), read_file(live)) << format;
    } else {
      EXPECT_EQ(json::parse(read_file(again)), json::parse(read_file(live))) << format;
    }
  }
  Result bad = run({"render", report.string(), "--format", "markdown"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
  EXPECT_THAT(bad.err, HasSubstr("--format"));
}

TEST(Reports, JsonToStdout) {
  Result r = run(sample_args("transpose_reshape", {"--format", "json"}));
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["schema_version"], 2);
}

TEST(Cli, TimingsSayWhenEachStepBeganAndWhatTheReportsTook) {
  fs::path report = work_dir() / "timings.json";
  Result r = run(sample_args("transpose_reshape", {"--timings", "--json", report.string()}));
  ASSERT_EQ(r.code, 0) << r.err;
  // Each step on its own line, seconds since the start and memory, in the order they ran:
  // "layoutprof: 0.412 s, RSS 170 MB (peak 171 MB): analysis".
  std::vector<std::string> steps = {"loading", "warm-up 1/", "locating ops", "recorded call 1/",
                                    "recorded calls done", "analysis", "text report",
                                    "JSON report to " + report.string(), "reports done: "};
  size_t at = 0;
  double last = -1;
  for (const std::string& step : steps) {
    size_t found = r.err.find(" MB): " + step, at);
    ASSERT_NE(found, std::string::npos) << step << " missing or out of order in:\n" << r.err;
    size_t line = r.err.rfind("layoutprof: ", found);
    double t = std::stod(r.err.substr(line + 12));
    EXPECT_GE(t, last) << step;
    EXPECT_THAT(r.err.substr(line, found - line), ::testing::MatchesRegex(".* s, RSS [0-9]+ MB \\(peak [0-9]+"));
    last = t;
    at = found;
  }
  EXPECT_THAT(r.err, HasSubstr(" s after the recorded calls (analysis and reports)"));
  // Without it, a run that is not on a terminal says nothing on stderr.
  Result quiet = run(sample_args("transpose_reshape", {}));
  ASSERT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
}

TEST(FailingModel, ReportsEverythingUpToTheFailingOp) {
  const json& e = entry_named("view_fails");
  fs::path report = work_dir() / "fails.json";
  Result r = run(run_args(e, report));
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("view"));
  json j = json::parse(read_file(report));
  EXPECT_EQ(j["run"]["status"], "failed");
  EXPECT_THAT(j["run"]["error"].get<std::string>(), HasSubstr("view size is not compatible"));
  const json last_top = [&] {
    json found;
    for (const auto& op : expand_ops(j))
      if (op["parent"].is_null()) found = op;
    return found;
  }();
  EXPECT_EQ(last_top["name"], "aten::view");
  EXPECT_TRUE(last_top["failed"].get<bool>());
  EXPECT_NE(last_top["inputs"][0]["class"], "contiguous");
  EXPECT_THAT(r.out, HasSubstr("The model raised in aten::view"));
}

struct BadRun {
  const char* what;
  std::vector<std::string> args;
  int code;
  const char* message;
};

TEST(BadInput, OneLineErrorAndDocumentedExitCode) {
  fs::path random = work_dir() / "random.pt";
  {
    std::ofstream f(random, std::ios::binary);
    for (int i = 0; i < 4096; ++i) f.put(static_cast<char>((i * 7919) % 251));
  }
  fs::path truncated = work_dir() / "truncated.pt";
  std::string whole = read_file(sample_path(entry_named("attention")));
  std::ofstream(truncated, std::ios::binary) << whole.substr(0, whole.size() / 2);
  fs::path state_dict = fs::path(COMMITTED_SAMPLES_DIR) / "not_torchscript" / "state_dict.pt";
  std::string ok_model = sample_path(entry_named("transpose_reshape")).string();
  // An archive whose file format version is newer than any LibTorch reads.
  fs::path future = work_dir() / "future_format.pt";
  std::string rewrite = "/usr/bin/python3 -c \"import sys, zipfile\n"
                        "src = zipfile.ZipFile(sys.argv[1]); dst = zipfile.ZipFile(sys.argv[2], 'w')\n"
                        "for i in src.infolist():\n"
                        "    dst.writestr(i, b'99\\n' if i.filename.endswith('/version') else src.read(i.filename))\n"
                        "dst.close()\" " + quote(ok_model) + " " + quote(future.string());
  ASSERT_EQ(std::system(rewrite.c_str()), 0) << rewrite;
  std::string ok_input = entry_named("transpose_reshape")["inputs"][0];

  std::vector<BadRun> cases = {
      {"missing model", {"/nonexistent/model.pt", "--input", "2x3"}, 3, "cannot open model '/nonexistent/model.pt'"},
      {"directory", {"/tmp", "--input", "2x3"}, 3, "'/tmp'"},
      {"random bytes", {random.string(), "--input", "2x3"}, 3, "not a loadable TorchScript archive"},
      {"truncated archive", {truncated.string(), "--input", "2x3"}, 3, "not a loadable TorchScript archive"},
      {"a state_dict", {state_dict.string(), "--input", "2x3"}, 3, "not a loadable TorchScript archive"},
      {"a newer file format", {future.string(), "--input", "2x3"}, 3,
       "has file format version 99, newer than this LibTorch " LIBTORCH_VERSION " reads (up to "},
      {"malformed --input", {ok_model, "--input", "2xQ"}, 2, "--input '2xQ'"},
      {"an input larger than the machine", {ok_model, "--input", "100000x100000x1000"}, 2,
       "its tensor needs 40000000000000 bytes (40.0 TB)"},
      {"an input past 2^63 bytes", {ok_model, "--input", "1099511627776x1099511627776"}, 2, "more than 2^63 bytes"},
      {"a long --input is cut in the message", {ok_model, "--input", std::string(5000, '7') + "xQ"}, 2, "(5002 bytes)"},
      {"wrong number of inputs", {ok_model, "--input", ok_input, "--input", ok_input}, 2, "takes 1 input"},
      {"no model", {"--input", "2x3"}, 2, "no model given"},
      {"unknown option", {ok_model, "--bogus"}, 2, "--bogus"},
      {"bad --iters", {ok_model, "--input", ok_input, "--iters", "0"}, 2, "--iters"},
      {"shape the model rejects", {ok_model, "--input", "3"}, 4, "raised"},
#ifdef LIBTORCH_HAS_CUDA  // this machine has no GPU
      {"cuda without a GPU", {ok_model, "--input", ok_input, "--device", "cuda"}, 2, "--device cuda: no CUDA device"},
#else
      {"cuda on a CPU build", {ok_model, "--input", ok_input, "--device", "cuda"}, 2, "--device cuda: this LibTorch"},
#endif
      {"bad --tlb", {ok_model, "--input", ok_input, "--tlb", "l1=3:2"}, 2, "--tlb 'l1=3:2'"},
      {"--events with --no-counters", {ok_model, "--input", ok_input, "--events", "cycles", "--no-counters"}, 2, "contradict"},
      {"unwritable --json", {ok_model, "--input", ok_input, "--json", "/nonexistent/r.json"}, 5, "'/nonexistent/r.json'"},
      {"render of a missing report", {"render", "/nonexistent/r.json"}, 2, "cannot open report"},
      {"render of a model file", {"render", ok_model}, 2, "is not valid JSON"},
  };
  for (const BadRun& c : cases) {
    Result r = run(c.args);
    EXPECT_EQ(r.code, c.code) << c.what << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << c.what << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.what;
    EXPECT_THAT(r.err, ::testing::StartsWith("layoutprof: ")) << c.what;
  }
}

// The binary started in the background, its stdout and stderr going to files, to be signalled.
struct Spawned {
  pid_t pid = -1;
  fs::path out, err;
  // Waits for it to exit (up to `seconds`); its exit code, -1 on a signal or a timeout (killed).
  int wait(double seconds) {
    for (double t = 0; t < seconds; t += 0.05) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      ::usleep(50000);
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    return -1;
  }
  // Polls its stderr until it says `text` (up to `seconds`).
  bool said(const std::string& text, double seconds) const {
    for (double t = 0; t < seconds; t += 0.02) {
      if (read_file(err).find(text) != std::string::npos) return true;
      ::usleep(20000);
    }
    return false;
  }
};

Spawned spawn(const std::vector<std::string>& args, const std::string& name) {
  Spawned s;
  s.out = work_dir() / (name + ".out");
  s.err = work_dir() / (name + ".err");
  s.pid = ::fork();
  if (s.pid == 0) {
    FILE* out = std::freopen(s.out.c_str(), "w", stdout);
    FILE* err = std::freopen(s.err.c_str(), "w", stderr);
    if (!out || !err) ::_exit(127);
    ::setenv("NO_COLOR", "1", 1);
    std::vector<char*> argv{const_cast<char*>(LAYOUTPROF_BIN)};
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(LAYOUTPROF_BIN, argv.data());
    ::_exit(127);
  }
  return s;
}

// Files in `dir` whose names hold ".tmp.": what an interrupted write would leave.
std::vector<std::string> temporaries(const fs::path& dir) {
  std::vector<std::string> found;
  for (const auto& f : fs::directory_iterator(dir))
    if (f.path().filename().string().find(".tmp.") != std::string::npos) found.push_back(f.path().string());
  return found;
}

// A long run of many recorded calls (op_loop: 17 op events a row), its reports in a folder of
// its own.
std::vector<std::string> long_run(const fs::path& dir) {
  fs::remove_all(dir);
  fs::create_directories(dir);
  return {(fs::path(COMMITTED_SAMPLES_DIR) / "op_loop.pt").string(), "--input", "3000x8x8", "--warmup", "1",
          "--iters", "2000", "--no-counters", "--timings", "--json", (dir / "r.json").string(),
          "--trace", (dir / "t.json").string()};
}

TEST(Interrupt, CtrlCDuringTheCallsReportsThoseRecordedAndExits130) {
  for (const auto& [sig, code, name] : {std::tuple{SIGINT, 130, "SIGINT"}, std::tuple{SIGTERM, 143, "SIGTERM"}}) {
    fs::path dir = work_dir() / (std::string("interrupt_") + name);
    Spawned p = spawn(long_run(dir), std::string("interrupt_") + name);
    ASSERT_TRUE(p.said("recorded call 3/", 120)) << read_file(p.err);
    ::kill(p.pid, sig);
    const int exit_code = p.wait(120);
    const std::string err = read_file(p.err);
    EXPECT_EQ(exit_code, code) << err;
    EXPECT_THAT(err, HasSubstr(std::string("layoutprof: ") + name + " after ")) << err;
    EXPECT_THAT(read_file(p.out), HasSubstr("status    interrupted: ")) << "the text report is printed";
    ASSERT_TRUE(fs::exists(dir / "r.json")) << err;
    json j = json::parse(read_file(dir / "r.json"));
    EXPECT_EQ(j["run"]["status"], "interrupted");
    EXPECT_GE(j["run"]["calls_recorded"].get<int>(), 2);
    EXPECT_LT(j["run"]["calls_recorded"].get<int>(), 2000);
    EXPECT_GT(j["summary"]["ops"].get<int>(), 50000) << "the first call's op events are all there";
    EXPECT_NO_THROW(json::parse(read_file(dir / "t.json"))) << "the trace is whole too";
    EXPECT_THAT(temporaries(dir), ::testing::IsEmpty());
    Result check = run({"check", (dir / "r.json").string(), (dir / "r.json").string()});
    EXPECT_EQ(check.code, 2) << check.err;
    EXPECT_THAT(check.err, HasSubstr("interrupted run")) << check.err;
  }
}

TEST(Interrupt, ASecondCtrlCExitsAtOnceLeavingNoPartialFile) {
  fs::path dir = work_dir() / "interrupt_twice";
  Spawned p = spawn(long_run(dir), "interrupt_twice");
  ASSERT_TRUE(p.said("recorded call 3/", 120)) << read_file(p.err);
  ::kill(p.pid, SIGINT);
  ASSERT_TRUE(p.said("interrupt again to stop at once", 10)) << read_file(p.err);
  ::kill(p.pid, SIGINT);
  EXPECT_EQ(p.wait(10), 130) << read_file(p.err);
  EXPECT_THAT(temporaries(dir), ::testing::IsEmpty());
  if (fs::exists(dir / "r.json")) {
    EXPECT_NO_THROW(json::parse(read_file(dir / "r.json"))) << "whole or not at all";
  }
}

// The counters in a report's JSON, for one op: event name -> raw count.
std::map<std::string, uint64_t> op_counts(const json& op) {
  std::map<std::string, uint64_t> counts;
  for (auto& [event, v] : op["counters"].items()) counts[event] = v["raw"].get<uint64_t>();
  return counts;
}

std::optional<json> top_level_op(const json& report, const std::string& name) {
  for (const auto& op : expand_ops(report))
    if (op["parent"].is_null() && op["name"] == name) return op;
  return std::nullopt;
}

// Runs a sample with extra options and returns its JSON report; the run must succeed.
json run_report(const std::string& sample, const std::string& file, std::vector<std::string> extra,
                Result* result) {
  fs::path report = work_dir() / file;
  auto args = run_args(entry_named(sample), report);
  args.insert(args.end(), extra.begin(), extra.end());
  *result = run(args);
  EXPECT_EQ(result->code, 0) << result->err;
  return fs::exists(report) ? json::parse(read_file(report)) : json::object();
}

// First touches of a fresh 64 MB tensor: one page fault per page, unless the kernel backs
// anonymous memory with huge pages on its own (transparent_hugepage "always").
int64_t pages_of(int64_t bytes) {
  std::ifstream thp("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes((std::istreambuf_iterator<char>(thp)), std::istreambuf_iterator<char>());
  if (modes.find("[always]") != std::string::npos) return -1;
  return bytes / ::sysconf(_SC_PAGESIZE);
}

TEST(Counters, PageFaultsCountedOnAFreshTensorAndNoneOnAView) {
  Result r;
  json j = run_report("fresh_tensor", "faults.json", {"--events", "page-faults", "--counters", "count"}, &r);
  ASSERT_EQ(j["run"]["counters"].size(), 1u);
  const json& status = j["run"]["counters"][0];
  if (!status["measured"].get<bool>()) GTEST_SKIP() << "page-faults not measured: " << status["reason"];
  EXPECT_EQ(status["mode"], "counted");
  EXPECT_EQ(j["run"]["counter_mode"], "counted");
  EXPECT_EQ(j["figures"]["counters"], "measured");
  auto view = top_level_op(j, "aten::t");
  auto write = top_level_op(j, "aten::mul");
  ASSERT_TRUE(view && write);
  EXPECT_EQ(op_counts(*view)["page-faults"], 0u);
  EXPECT_GT(op_counts(*write)["page-faults"], 0u) << "a fresh 64 MB tensor is written";
  if (const int64_t pages = pages_of(4096 * 4096 * 4); pages > 0) {
    EXPECT_GE(op_counts(*write)["page-faults"], static_cast<uint64_t>(pages) * 95 / 100);
    EXPECT_LE(op_counts(*write)["page-faults"], static_cast<uint64_t>(pages) * 105 / 100);
  }
  EXPECT_THAT(r.out, HasSubstr("page-faults (measured)"));
}

// The default: page faults sampled with their addresses. The samples land on the op that
// wrote the fresh tensor and, through their faulting addresses, on that tensor; none on the
// view, whose op touches no page.
TEST(SampledCounters, FirstTouchFaultsLandOnTheWritingOpAndItsTensorNotOnTheView) {
  Result r;
  json j = run_report("fresh_tensor", "sampled_faults.json", {"--events", "page-faults"}, &r);
  ASSERT_EQ(j["run"]["counters"].size(), 1u);
  const json& status = j["run"]["counters"][0];
  if (!status["measured"].get<bool>()) GTEST_SKIP() << "page-faults not sampled: " << status["reason"];
  EXPECT_EQ(status["mode"], "sampled") << "sampling is the default";
  EXPECT_EQ(j["run"]["counter_mode"], "sampled");
  EXPECT_EQ(j["figures"]["counters"], "sampled");
  const uint64_t period = status["period"].get<uint64_t>();
  EXPECT_EQ(period, 16u);
  EXPECT_THAT(status["data_address"].get<std::string>(), HasSubstr("faulting address"));
  EXPECT_EQ(status["lost"], 0);
  EXPECT_GT(status["attributed"].get<int64_t>(), 0);
  EXPECT_LE(status["attributed"].get<int64_t>(), status["samples"].get<int64_t>());
  const json ops = expand_ops(j);
  int64_t view_id = -1, write_id = -1;
  for (const json& op : ops)
    if (op["parent"].is_null()) {
      if (op["name"] == "aten::t") view_id = op["id"].get<int64_t>();
      if (op["name"] == "aten::mul") write_id = op["id"].get<int64_t>();
    }
  ASSERT_GE(view_id, 0);
  ASSERT_GE(write_id, 0);
  const json& write = ops[write_id];
  const uint64_t samples = write["counters"]["page-faults"]["raw"].get<uint64_t>();  // over the calls
  const uint64_t calls = status["calls"].get<uint64_t>();
  EXPECT_EQ(calls, j["run"]["calls_recorded"].get<uint64_t>()) << "every call ran the same ops";
  EXPECT_EQ(ops[view_id]["counters"]["page-faults"]["raw"], 0u) << "a view touches no page";
  EXPECT_GT(samples, 0u);
  const double estimate = write["counters"]["page-faults"]["scaled"].get<double>();
  EXPECT_DOUBLE_EQ(estimate, static_cast<double>(samples * period) / static_cast<double>(calls))
      << "the estimate is samples x period, a mean over the calls";
  if (const int64_t pages = pages_of(4096 * 4096 * 4); pages > 0) {
    EXPECT_GE(estimate, static_cast<double>(pages) * 0.9) << "every page faults once a call";
    EXPECT_LE(estimate, static_cast<double>(pages) * 1.1);
  }
  // Where the faulting addresses fell: the mul's output, and no tensor of the view's.
  const size_t output_slot = write["inputs"].size();
  uint64_t in_output = 0;
  for (const json& t : j["tensor_samples"]) {
    const int64_t op = t[0].get<int64_t>();
    EXPECT_NE(op, view_id) << "no sampled fault in the view's tensors";
    if (op == write_id && t[1].get<size_t>() == output_slot) in_output += t[3].get<uint64_t>();
  }
  // (the addresses are the shown call's: a call's share of the samples)
  EXPECT_GE(in_output, samples / calls * 9 / 10) << "the faults are the output's first touches";
  EXPECT_LE(in_output, samples);
  EXPECT_THAT(r.out, HasSubstr("page-faults (sampled, one every 16)"));
  EXPECT_THAT(r.out, HasSubstr("in aten::mul's output 0 [4096, 4096] f32 contiguous"));
}

// task-clock sampled on one thread, each top-level op's estimate against the op's times as two
// other measurements give them. Its wall time in the same run: an op's CPU time on one thread
// cannot pass it, so no estimate may exceed it by more than the sampling error. Its CPU time
// counted exactly (--counters count reads task-clock at its start and end) in other runs, one
// before and one after: an op's CPU time differs from run to run on a shared machine (a first
// touch of fresh pages costs what the kernel's zeroing, reclaim and huge pages make it), so the
// estimate must fall within the error of the range the two counted runs span, widened by that
// spread. The estimate is the mean over the calls and the wall time their median: one call in
// which the kernel stalled an op for milliseconds of its CPU time (direct reclaim under a loaded
// machine) puts the one past the other. So a sampled run that fails either check is run again,
// twice at most: a wrong attribution fails on every run, a machine's hiccup on one.
namespace {
struct TaskClockRun {
  json ops;         // expand_ops of the report
  double period = 0;
  double calls = 1;  // the op figures' calls: raw summed over them, scaled their mean
  std::string event;
  bool measured = false;
  std::string reason;
};

TaskClockRun profile_task_clock(const json& entry, const std::string& mode, const std::string& events, int n) {
  fs::path report = work_dir() / ("task_clock_" + entry["name"].get<std::string>() + "_" + mode + std::to_string(n) + ".json");
  Result r = run(model_args(entry, {"--json", report.string(), "--counters", mode, "--events", events, "--threads", "1",
                                    "--iters", "3"}));
  EXPECT_EQ(r.code, 0) << r.err;
  const json j = json::parse(read_file(report));
  TaskClockRun out;
  const json& status = j["run"]["counters"][0];
  out.measured = status["measured"].get<bool>();
  if (!out.measured) out.reason = status["reason"].dump();
  if (out.measured && status.contains("period")) out.period = status["period"].get<double>();
  if (out.measured && status.contains("calls")) out.calls = status["calls"].get<double>();
  out.event = status["event"].get<std::string>();
  out.ops = expand_ops(j);
  return out;
}

// How far a sampled run's estimates are from the counted runs' range: the failures, one line
// each; empty when every top-level op and their sum agree.
std::vector<std::string> task_clock_disagreements(const TaskClockRun& sampled, const TaskClockRun& before,
                                                  const TaskClockRun& after) {
  std::vector<std::string> out;
  auto check = [&](const std::string& what, double estimate, double samples, double a, double b) {
    const double lo = std::min(a, b), hi = std::max(a, b);
    const double error = sampled.period * std::sqrt(samples + sampled.calls) / sampled.calls;
    const double slack = 4 * error + 0.1 * hi + (hi - lo);
    if (estimate < lo - slack || estimate > hi + slack)
      out.push_back(what + ": estimate " + std::to_string(estimate) + " ns, counted " + std::to_string(a) + " and " +
                    std::to_string(b) + " ns, allowed +-" + std::to_string(slack));
  };
  double est_total = 0, samples_total = 0, before_total = 0, after_total = 0;
  for (size_t i = 0; i < sampled.ops.size(); ++i) {
    const json& op = sampled.ops[i];
    if (!op["parent"].is_null()) continue;
    const double n = op["counters"][sampled.event]["raw"].get<double>();
    const double estimate = op["counters"][sampled.event]["scaled"].get<double>();
    const double a = before.ops[i]["counters"]["task-clock"]["scaled"].get<double>();
    const double b = after.ops[i]["counters"]["task-clock"]["scaled"].get<double>();
    if (std::min(a, b) > 2e6)  // ops of a few periods and more
      check(op["name"].get<std::string>() + " at " + op["source"].dump(), estimate, n, a, b);
    est_total += estimate;
    samples_total += n;
    before_total += a;
    after_total += b;
  }
  check("the sum over the top-level ops", est_total, samples_total, before_total, after_total);
  return out;
}

// Every sampled top-level op's estimate within its own wall time, give or take the error: the
// ops past it, one line each.
std::vector<std::string> past_wall_time(const TaskClockRun& sampled) {
  std::vector<std::string> out;
  for (const json& op : sampled.ops) {
    if (!op["parent"].is_null()) continue;
    const double n = op["counters"][sampled.event]["raw"].get<double>();
    const double error = sampled.period * std::sqrt(n + sampled.calls) / sampled.calls;
    const double estimate = op["counters"][sampled.event]["scaled"].get<double>();
    const double wall = op["duration_ns"].get<double>();
    if (estimate > wall + 4 * error)
      out.push_back(op["name"].get<std::string>() + " at " + op["source"].dump() + " sampled past its wall time: " +
                    std::to_string(estimate) + " ns, wall " + std::to_string(wall) + " ns, error " + std::to_string(error));
  }
  return out;
}
}  // namespace

TEST(SampledCounters, TaskClockSamplesAgreeWithTheOpsMeasuredTimes) {
  for (const std::string& sample : {std::string("fresh_tensor"), std::string("resnet18")}) {
    const json& entry = entry_named(sample);
    if (!fs::exists(sample_path(entry))) {
      std::cout << sample << " not made here: " << unmade_reason(sample) << "\n";
      continue;
    }
    const TaskClockRun before = profile_task_clock(entry, "count", "task-clock", 0);
    std::vector<std::string> failures;
    for (int attempt = 0; attempt < 3; ++attempt) {
      const TaskClockRun sampled = profile_task_clock(entry, "sample", "task-clock:period=250000", attempt);
      if (!sampled.measured) GTEST_SKIP() << "task-clock not sampled: " << sampled.reason;
      ASSERT_TRUE(before.measured);
      EXPECT_EQ(sampled.period, 250000) << "the period given with the event";
      const TaskClockRun after = profile_task_clock(entry, "count", "task-clock", attempt + 1);
      ASSERT_EQ(sampled.ops.size(), before.ops.size()) << "the same model runs the same ops";
      ASSERT_EQ(sampled.ops.size(), after.ops.size()) << "the same model runs the same ops";
      for (size_t i = 0; i < sampled.ops.size(); ++i) ASSERT_EQ(sampled.ops[i]["name"], before.ops[i]["name"]);
      failures = task_clock_disagreements(sampled, before, after);
      for (std::string& f : past_wall_time(sampled)) failures.push_back(std::move(f));
      if (failures.empty()) break;
      for (const std::string& f : failures) std::cout << sample << ", sampled run " << attempt << ": " << f << "\n";
    }
    for (const std::string& f : failures) ADD_FAILURE() << sample << " failed on three sampled runs: " << f;
  }
}

// Bandwidth over time: system-wide events read every millisecond, each interval's count shared
// among the ops running in it. These VMs have no uncore PMU; cpu-clock counted system-wide on
// the first CPU stands in (root, or perf_event_paranoid <= 0): it counts the nanoseconds
// between readings, so each op's share must be about its own time.
TEST(SampledCounters, IntervalEventsAreSharedAmongTheOpsRunningInEachInterval) {
  Result r;
  json j = run_report("fresh_tensor", "interval.json", {"--events", "task-clock", "--bandwidth-events", "cpu-clock", "-v"}, &r);
  std::optional<json> status;
  for (const json& c : j["run"]["counters"])
    if (c["event"] == "cpu-clock") status = c;
  ASSERT_TRUE(status);
  EXPECT_EQ((*status)["mode"], "interval");
  EXPECT_EQ((*status)["scope"], "system");
  if (!(*status)["measured"].get<bool>()) GTEST_SKIP() << "cpu-clock not counted system-wide: " << (*status)["reason"];
  EXPECT_EQ((*status)["period"], 1000000);
  EXPECT_EQ(j["run"]["bandwidth"], "measured");
  // Each reading's count and its time stamp are taken by the sampler's thread one after the
  // other; on a busy machine (the suite runs two tests at once) that thread can be preempted
  // between them, so an op's share may be off by up to an interval at each end.
  const double interval = (*status)["period"].get<double>();
  for (const json& op : expand_ops(j)) {
    if (!op["parent"].is_null()) continue;
    const double share = op["counters"]["cpu-clock"]["scaled"].get<double>();
    const double time = op["duration_ns"].get<double>();
    EXPECT_NEAR(share, time, 0.1 * time + 2 * interval + 50000) << op["name"] << ": its share of the intervals it ran in";
  }
  EXPECT_THAT(r.out, HasSubstr("cpu-clock (read system-wide every 1000 us"));
}

// A call that writes more samples than a ring buffer holds: every page fault sampled (period 1),
// 128 MB first touched in one op, 32,768 samples of 48 bytes against forward()'s 1 MB buffer
// (21,845 samples). The sampler's thread empties a ring past half full, so the samples are
// kept; what the kernel still drops is counted, and then the run says its estimates undercount.
TEST(SampledCounters, ALongCallKeepsItsSamplesAndSaysWhatWasLost) {
  const std::string model = sample_path(entry_named("fresh_tensor")).string();
  fs::path report = work_dir() / "lost.json";
  Result r = run({model, "--input", "8192x4096", "--events", "page-faults:period=1", "--iters", "1", "--json", report.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(read_file(report));
  const json& status = j["run"]["counters"][0];
  if (!status["measured"].get<bool>()) GTEST_SKIP() << "page-faults not sampled: " << status["reason"];
  EXPECT_EQ(status["period"], 1);
  const int64_t samples = status["samples"].get<int64_t>(), lost = status["lost"].get<int64_t>();
  if (const int64_t pages = pages_of(int64_t{8192} * 4096 * 4); pages > 0) {
    EXPECT_GE(samples + lost, pages * 95 / 100) << "what was kept and what was lost add up to the faults";
    EXPECT_GE(samples, pages * 9 / 10) << "more than one ring buffer's worth kept";
  }
  EXPECT_EQ(j["run"]["not_measured"].dump().find("samples lost") != std::string::npos, lost > 0);
}

TEST(SampledCounters, CounterModeOptionsAreChecked) {
  const std::string model = sample_path(entry_named("transpose_reshape")).string();
  Result bad = run({model, "--input", "2x3x4", "--counters", "sometimes"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--counters"));
  Result contradict = run({model, "--input", "2x3x4", "--counters", "off", "--events", "task-clock"});
  EXPECT_EQ(contradict.code, 2);
  EXPECT_THAT(contradict.err, HasSubstr("contradict"));
  Result r;
  json off = run_report("transpose_reshape", "counters_off.json", {"--counters", "off"}, &r);
  EXPECT_TRUE(off["run"]["counters"].empty());
  EXPECT_TRUE(off["run"]["counter_mode"].is_null());
}

TEST(Scale, MaxOpsStopsRecordingSaysWhereAndTheGateRefusesTheReport) {
  Result whole_run, cut_run;
  json whole = run_report("op_loop", "op_loop_whole.json", {"--threads", "1", "--no-counters"}, &whole_run);
  json cut = run_report("op_loop", "op_loop_cut.json", {"--threads", "1", "--no-counters", "--max-ops", "100"}, &cut_run);
  EXPECT_EQ(whole["run"]["ops_not_recorded"], 0);
  EXPECT_EQ(cut["run"]["max_ops"], 100);
  EXPECT_EQ(cut["summary"]["ops"], 100);
  EXPECT_EQ(cut["summary"]["ops"].get<int64_t>() + cut["run"]["ops_not_recorded"].get<int64_t>(),
            whole["summary"]["ops"].get<int64_t>())
      << "every op event is either recorded or counted as not recorded";
  EXPECT_THAT(cut_run.err, HasSubstr("recording stopped at --max-ops 100"));
  EXPECT_THAT(cut_run.out, HasSubstr("Recording stopped at --max-ops 100"));
  int64_t copies = 0;
  for (const auto& [cls, n] : cut["summary"]["copies"].items()) copies += n.get<int64_t>();
  EXPECT_GT(copies, 0);
  EXPECT_LT(copies, 128) << "only the copies of the recorded part";
  for (const json& op : expand_ops(cut))
    if (op["parent"].is_null()) {
      EXPECT_NE(op["source"], "") << "sites apply to the recorded part";
    }
  Result check = run({"check", (work_dir() / "op_loop_cut.json").string(), (work_dir() / "op_loop_whole.json").string()});
  EXPECT_EQ(check.code, 2) << check.err;
  EXPECT_THAT(check.err, HasSubstr("--max-ops"));
}

TEST(Counters, UnavailableEventsAreNamedWithTheReason) {
  Result r;
  json j = run_report("transpose_reshape", "bogus_events.json", {"--events", "bogus::nothing,cycles,task-clock", "-v"}, &r);
  std::map<std::string, json> by_event;
  for (const auto& c : j["run"]["counters"]) by_event[c["event"]] = c;
  ASSERT_EQ(by_event.size(), 3u);
  EXPECT_FALSE(by_event["bogus::nothing"]["measured"].get<bool>());
  EXPECT_THAT(by_event["bogus::nothing"]["reason"].get<std::string>(), HasSubstr("does not know"));
  if (!by_event["cycles"]["measured"].get<bool>()) {
    EXPECT_FALSE(by_event["cycles"]["reason"].get<std::string>().empty());
  }
  EXPECT_THAT(r.out, HasSubstr("not measured  bogus::nothing: libpfm4 does not know"));
}

TEST(Counters, NoCountersSaysSo) {
  Result r;
  json j = run_report("transpose_reshape", "no_counters.json", {"--no-counters"}, &r);
  ASSERT_EQ(r.code, 0);
  EXPECT_TRUE(j["run"]["counters"].empty());
  EXPECT_THAT(j["run"]["not_measured"].dump(), HasSubstr("--no-counters"));
  EXPECT_TRUE(j["summary"]["counters"].empty());
}

TEST(Counters, ListEvents) {
  Result r = run({"--list-events"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("perf::PERF_COUNT_SW_PAGE_FAULTS"));
}

TEST(DtlbModel, EveryCopyIsModelledTheSameOnEveryRun) {
  std::vector<json> reports;
  for (const char* tlb : {"l1=64:4,l2=1536:12,page=4k", "l1=64:4,l2=1536:12,page=4k", "page=2m"}) {
    Result r;
    reports.push_back(run_report("transpose_reshape", "dtlb.json", {"--tlb", tlb}, &r));
    ASSERT_EQ(r.code, 0);
  }
  EXPECT_EQ(reports[0]["summary"]["dtlb"], reports[1]["summary"]["dtlb"]);
  EXPECT_GT(reports[0]["summary"]["dtlb"]["walks"].get<int64_t>(), 0);
  EXPECT_EQ(reports[2]["run"]["tlb"], "l1=64:4,l2=1536:12,page=2m");
  for (const auto& c : reports[0]["copies"]) EXPECT_TRUE(c.contains("dtlb"));
}

// --- the CI gate -------------------------------------------------------------------------

fs::path gate_baseline() {
  static fs::path path = [] {
    fs::path p = work_dir() / "gate_base.json";
    Result r = run(run_args(entry_named("gate_base"), p));
    EXPECT_EQ(r.code, 0) << r.err;
    return p;
  }();
  return path;
}

TEST(Gate, TheRegressionExampleFailsTheGateAndSaysWhere) {
  fs::path junit = work_dir() / "gate.xml";
  Result r = run(sample_args("gate_regressed", {"--baseline", gate_baseline().string(), "--junit", junit.string()}));
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("REGRESSED"));
  EXPECT_THAT(r.out, HasSubstr("implicit_layout copies 0 → 1: aten::reshape at samples/sample_gates.py:"));
  EXPECT_THAT(r.out, HasSubstr("new: aten::transpose at samples/sample_gates.py:"));
  std::string cmd = "/usr/bin/python3 -c \"import sys, xml.etree.ElementTree as E; "
                    "r = E.parse(sys.argv[1]).getroot(); "
                    "sys.exit(0 if int(r.get('failures')) > 0 and r.find('testsuite/testcase/failure') is not None else 1)\" " +
                    quote(junit.string());
  EXPECT_EQ(std::system(cmd.c_str()), 0) << read_file(junit);
}

TEST(Gate, TheSameModelPassesTheGate) {
  Result r = run(sample_args("gate_base", {"--baseline", gate_baseline().string()}));
  EXPECT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("layoutprof check: OK"));
}

TEST(Gate, CheckAndDiffOnSavedReports) {
  fs::path regressed = work_dir() / "gate_regressed.json";
  ASSERT_EQ(run(run_args(entry_named("gate_regressed"), regressed)).code, 0);
  Result check = run({"check", gate_baseline().string(), regressed.string()});
  EXPECT_EQ(check.code, 1);
  Result same = run({"check", gate_baseline().string(), gate_baseline().string()});
  EXPECT_EQ(same.code, 0) << same.out;
  Result lenient = run({"check", gate_baseline().string(), regressed.string(), "--max-new-implicit-copies", "1", "--max-new-copy-bytes", "8192",
                        "--max-new-split-points", "2", "--max-dtlb-increase", "100%", "--max-new-birthplaces", "1"});
  EXPECT_EQ(lenient.code, 0) << lenient.out;
  Result diff = run({"diff", gate_baseline().string(), regressed.string(), "--format", "markdown"});
  EXPECT_EQ(diff.code, 0);
  EXPECT_THAT(diff.out, HasSubstr("| module | implicit | explicit | MB copied | split points | DTLB walks | time ms |"));
  EXPECT_THAT(diff.out, HasSubstr("| (top) | 0 → 1 |"));
  Result text = run({"diff", gate_baseline().string(), regressed.string()});
  EXPECT_THAT(text.out, HasSubstr("module  implicit"));
}

// check and diff in every comparison format, to stdout or -o FILE; the exit code is the
// gate's whatever the format.
TEST(Gate, ComparisonsInEveryFormat) {
  fs::path regressed = work_dir() / "formats_regressed.json";
  ASSERT_EQ(run(run_args(entry_named("gate_regressed"), regressed)).code, 0);
  fs::path page = work_dir() / "check.html";
  Result html = run({"check", gate_baseline().string(), regressed.string(), "--format", "html", "-o", page.string()});
  EXPECT_EQ(html.code, 1);
  EXPECT_EQ(html.out, "");
  EXPECT_THAT(read_file(page), HasSubstr("\"kind\":\"comparison\""));
  Result as_json = run({"diff", gate_baseline().string(), regressed.string(), "--format", "json"});
  ASSERT_EQ(as_json.code, 0) << as_json.err;
  json doc = json::parse(as_json.out);
  EXPECT_TRUE(doc["regressed"].get<bool>());
  EXPECT_GT(doc["regressions"].get<int>(), 0);
  Result junit = run({"check", gate_baseline().string(), regressed.string(), "--format", "junit"});
  EXPECT_EQ(junit.code, 1);
  EXPECT_THAT(junit.out, HasSubstr("<testsuites name=\"layoutprof\""));
  Result bad = run({"check", gate_baseline().string(), regressed.string(), "--format", "trace"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
}

// --format sarif: the new birthplace is a result at its line, valid against SARIF 2.1.0's
// published schema; under GitHub Actions the same finding is an annotation on stdout.
TEST(Gate, SarifAndGithubAnnotationsPointAtTheNewBirthplacesLine) {
  fs::path regressed = work_dir() / "sarif_regressed.json";
  ASSERT_EQ(run(run_args(entry_named("gate_regressed"), regressed)).code, 0);
  fs::path sarif = work_dir() / "check.sarif";
  Result r = run({"check", gate_baseline().string(), regressed.string(), "--format", "sarif", "-o", sarif.string()});
  EXPECT_EQ(r.code, 1) << r.err;
  std::string validate = "/usr/bin/python3 " + quote(VALIDATOR) + " " + quote(SARIF_SCHEMA) + " " + quote(sarif.string());
  EXPECT_EQ(std::system(validate.c_str()), 0) << read_file(sarif);
  const json log = json::parse(read_file(sarif));
  EXPECT_EQ(log["version"], "2.1.0");
  const json& run0 = log["runs"][0];
  EXPECT_EQ(run0["tool"]["driver"]["name"], "layoutprof");
  ASSERT_GE(run0["results"].size(), 1u) << log.dump(1);
  const json& first = run0["results"][0];
  EXPECT_EQ(first["ruleId"], "birthplace-op");
  EXPECT_EQ(first["level"], "error") << "the gate failed on it";
  const json& place = first["locations"][0]["physicalLocation"];
  EXPECT_EQ(place["artifactLocation"]["uri"], "samples/sample_gates.py");
  EXPECT_GT(place["region"]["startLine"].get<int>(), 0);
  EXPECT_THAT(first["message"]["text"].get<std::string>(), HasSubstr("aten::transpose"));
  EXPECT_THAT(first["message"]["text"].get<std::string>(), HasSubstr("\nFix: "));
  EXPECT_FALSE(run0["invocations"][0]["toolExecutionNotifications"].empty()) << "the copy checks, which have no line";
  // Allowed by the thresholds: a warning.
  Result lenient = run({"check", gate_baseline().string(), regressed.string(), "--max-new-birthplaces", "1",
                        "--format", "sarif"});
  EXPECT_EQ(json::parse(lenient.out)["runs"][0]["results"][0]["level"], "warning");
  // Under GitHub Actions: one workflow command per finding, on stdout before the text.
  ::setenv("GITHUB_ACTIONS", "true", 1);
  Result annotated = run({"check", gate_baseline().string(), regressed.string()});
  Result as_json = run({"check", gate_baseline().string(), regressed.string(), "--format", "sarif"});
  ::unsetenv("GITHUB_ACTIONS");
  EXPECT_EQ(annotated.code, 1);
  EXPECT_EQ(annotated.out.rfind("::error file=samples/sample_gates.py,line=", 0), 0u) << annotated.out;
  EXPECT_THAT(annotated.out, HasSubstr(",title=layoutprof%3A new layout cause::"));
  EXPECT_THAT(annotated.out, HasSubstr("::error title=layoutprof gate%3A "));
  EXPECT_NO_THROW(json::parse(as_json.out)) << "a document on stdout keeps it: the commands go to stderr";
  EXPECT_THAT(as_json.err, HasSubstr("::error file=samples/sample_gates.py"));
}

TEST(Gate, UpdateBaselineWritesItAtomically) {
  fs::path baseline = work_dir() / "updated_baseline.json";
  fs::remove(baseline);
  Result first = run(sample_args("gate_regressed", {"--baseline", baseline.string(), "--update-baseline"}));
  EXPECT_EQ(first.code, 0) << first.err;
  ASSERT_TRUE(fs::exists(baseline));
  EXPECT_EQ(json::parse(read_file(baseline))["schema_version"], 2);
  Result again = run(sample_args("gate_regressed", {"--baseline", baseline.string()}));
  EXPECT_EQ(again.code, 0) << again.out;
}

TEST(Gate, RefusesBaselinesItCannotCompare) {
  fs::path other_inputs = work_dir() / "other_inputs.json";
  auto args = sample_args("gate_base", {"--json", other_inputs.string()});
  args[2] = "4x16x32";
  ASSERT_EQ(run(args).code, 0);
  Result r = run({"check", gate_baseline().string(), other_inputs.string()});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("other inputs"));

  json doc = json::parse(read_file(gate_baseline()));
  doc["schema_version"] = 3;
  fs::path v3 = work_dir() / "v3.json";
  std::ofstream(v3) << doc.dump();
  Result version = run({"check", v3.string(), gate_baseline().string()});
  EXPECT_EQ(version.code, 2);
  EXPECT_THAT(version.err, HasSubstr("schema_version 3 is not supported"));
}

TEST(Gate, MalformedBaselinesGetAClearErrorNeverACrash) {
  std::string good = read_file(gate_baseline());
  struct Bad {
    const char* name;
    std::function<void(const fs::path&)> make;
    const char* message;
  };
  std::vector<Bad> cases = {
      {"truncated", [&](const fs::path& p) { std::ofstream(p) << good.substr(0, good.size() / 2); }, "is not valid JSON"},
      {"wrong types", [&](const fs::path& p) {
         json j = json::parse(good);
         j["summary"]["copies"]["implicit_layout"] = "many";
         std::ofstream(p) << j.dump();
       }, "not a valid layoutprof report"},
      {"not an object", [](const fs::path& p) { std::ofstream(p) << "[1, 2, 3]"; }, "not an object"},
      {"deeply nested", [](const fs::path& p) {
         std::ofstream f(p);
         f << "{\"schema_version\": 1, \"run\": ";
         for (int i = 0; i < 200000; ++i) f << '[';
         for (int i = 0; i < 200000; ++i) f << ']';
         f << "}";
       }, "not a valid layoutprof report"},
      {"huge", [](const fs::path& p) {  // read as a stream: refused at its first bad byte
         std::ofstream(p) << "{";
         fs::resize_file(p, (std::uintmax_t{1} << 30) + 4096);  // sparse: no disk used
       }, "is not valid JSON"},
      {"empty", [](const fs::path& p) { std::ofstream(p) << ""; }, "is not valid JSON"},
  };
  for (const Bad& b : cases) {
    fs::path p = work_dir() / (std::string("bad_") + b.name + ".json");
    b.make(p);
    Result r = run({"check", p.string(), gate_baseline().string()});
    EXPECT_EQ(r.code, 2) << b.name << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1) << b.name << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(b.message)) << b.name;
    Result as_baseline = run(sample_args("gate_base", {"--baseline", p.string()}));
    EXPECT_EQ(as_baseline.code, 2) << b.name << ": " << as_baseline.err;
    fs::remove(p);
  }
}

// A report nested hundreds of thousands deep, wherever the nesting sits (schema_version, the
// first thing read; a value no reader looks at; an op row and a tensor on their own lines, as
// the fast path takes entries; the whole document): render and check refuse it with one line
// and exit 2, never a crash.
TEST(Gate, ReportsNestedHundredsOfThousandsDeepGetOneLineAndExit2) {
  const std::string good = read_file(gate_baseline());
  const std::string deep = std::string(300000, '[') + std::string(300000, ']');
  auto inserted = [&](const std::string& after, const std::string& text) {
    const size_t at = good.find(after);
    EXPECT_NE(at, std::string::npos) << after;
    return good.substr(0, at + after.size()) + text + good.substr(at + after.size());
  };
  const size_t version = good.find("\"schema_version\": ") + 18;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"schema_version", good.substr(0, version) + deep + good.substr(good.find(',', version))},
      {"unknown key", inserted("{", "\"unknown\": " + deep + ",\n")},
      {"op row", inserted("\"rows\": [\n", deep + ",\n")},
      {"tensor", inserted("\"tensors\": [\n", deep + ",\n")},
      {"document", deep},
  };
  for (const auto& [where, text] : cases) {
    const fs::path p = work_dir() / "deep.json";
    std::ofstream(p, std::ios::trunc) << text;
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"render", p.string()}, {"check", gate_baseline().string(), p.string()},
          {"check", p.string(), gate_baseline().string()}}) {
      Result r = run(args);
      EXPECT_EQ(r.code, 2) << where << " (" << args[0] << "): " << r.err;
      EXPECT_EQ(lines(r.err), 1) << where << ": " << r.err;
      EXPECT_THAT(r.err, HasSubstr("nest deeper than 1000 levels")) << where;
    }
    fs::remove(p);
  }
}

TEST(Trace, ChromeTraceOfARun) {
  fs::path trace = work_dir() / "trace.json";
  Result r = run(sample_args("attention", {"--trace", trace.string()}));
  ASSERT_EQ(r.code, 0) << r.err;
  json j = json::parse(read_file(trace));
  ASSERT_TRUE(j["traceEvents"].is_array());
  int slices = 0, copies = 0;
  for (const auto& e : j["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid"));
    if (e["ph"] == "X") {
      ++slices;
      ASSERT_TRUE(e.contains("ts") && e.contains("dur") && e.contains("tid"));
      if (e["cat"].get<std::string>().rfind("copy,", 0) == 0) ++copies;
    }
  }
  EXPECT_GT(slices, 100);
  EXPECT_EQ(copies, 7);  // the attention sample's copies, every class
}

TEST(Cli, VersionNamesLibTorch) {
  Result r = run({"--version"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("layoutprof "));
  EXPECT_THAT(r.out, HasSubstr("(LibTorch " LIBTORCH_VERSION ")"));
}

// The libraries the dynamic loader maps for `binary`, as ldd lists them.
std::string shared_libraries(const std::string& binary) {
  Result r = run_binary("/usr/bin/ldd", {binary});
  EXPECT_EQ(r.code, 0) << r.err;
  return r.out;
}

TEST(Cli, TheUsersCommandLinksNoLibTorchItsModelRunnerDoes) {
  const std::string runner = (fs::path(LAYOUTPROF_BIN).parent_path() / "layoutprof-run").string();
  EXPECT_THAT(shared_libraries(runner), HasSubstr("libc10"));
  const std::string libs = shared_libraries(LAYOUTPROF_BIN);
  EXPECT_THAT(libs, ::testing::Not(HasSubstr("libtorch")));
  EXPECT_THAT(libs, ::testing::Not(HasSubstr("libc10")));
}

TEST(Cli, WithoutItsModelRunnerARunSaysWhyInOneLineAndReportsStillRender) {
  fs::path alone = work_dir() / "alone";
  fs::create_directories(alone);
  fs::copy_file(LAYOUTPROF_BIN, alone / "layoutprof", fs::copy_options::overwrite_existing);
  Result r = run_binary((alone / "layoutprof").string(), {"model.pt", "--input", "1x3"});
  EXPECT_EQ(r.code, 70);
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("cannot start layoutprof-run"));
  EXPECT_THAT(r.err, HasSubstr((alone / "layoutprof-run").string()));

  Result version = run_binary((alone / "layoutprof").string(), {"--version"});
  EXPECT_EQ(version.code, 0) << version.err;
  EXPECT_THAT(version.out, HasSubstr("(LibTorch " LIBTORCH_VERSION ")"));
  Result render = run_binary((alone / "layoutprof").string(), {"render", "missing.json"});
  EXPECT_EQ(render.code, 2) << render.err;  // read by the report reader, not handed over
  EXPECT_THAT(render.err, ::testing::Not(HasSubstr("layoutprof-run")));
}

TEST(Cli, HelpListsTheOptions) {
  Result r = run({"--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* opt : {"--input", "--warmup", "--iters", "--threads", "--json", "--format",
                          "--group-by", "--depth", "--top", "render"})
    EXPECT_THAT(r.out, HasSubstr(opt));
}

TEST(Cli, UnwritableJsonStillPrintsTheText) {
  Result r = run(sample_args("transpose_reshape", {"--json", "/nonexistent/r.json"}));
  EXPECT_EQ(r.code, 5);
  EXPECT_THAT(r.out, HasSubstr("Heatmap"));
}

// --- compare-formats ---------------------------------------------------------------------
// Each variant is checked against a plain run of what it should be the same as: the copies of
// each class, which a plain run of the variant's inputs (and, for channels_last, of the model
// Python converted with model.to(memory_format=torch.channels_last)) makes.

// A short comparison (one thread, as the manifest's expectations), its JSON parsed (whole).
json compare_formats(const std::vector<std::string>& model_and_inputs, const std::string& tag, Result* result = nullptr,
                     int expect_code = 0) {
  fs::path doc = work_dir() / ("compare_formats_" + tag + ".json");
  std::vector<std::string> args = {"compare-formats"};
  args.insert(args.end(), model_and_inputs.begin(), model_and_inputs.end());
  for (const char* a : {"--threads", "1", "--warmup", "1", "--iters", "1", "--timed-calls", "7", "--json"})
    args.push_back(a);
  args.push_back(doc.string());
  Result r = run(args);
  EXPECT_EQ(r.code, expect_code) << r.err;
  if (result) *result = r;
  EXPECT_TRUE(fs::exists(doc)) << r.err;
  return fs::exists(doc) ? json::parse(read_file(doc)) : json();
}

// A plain run's report of `model` with `inputs`, as the variants ran (one thread, no counters).
json plain_report(const fs::path& model, const std::vector<std::string>& inputs, const std::string& tag) {
  fs::path report = work_dir() / ("compare_formats_plain_" + tag + ".json");
  std::vector<std::string> args = {model.string()};
  for (const std::string& in : inputs) {
    args.push_back("--input");
    args.push_back(in);
  }
  for (const char* a : {"--threads", "1", "--warmup", "1", "--iters", "1", "--no-counters", "--json"}) args.push_back(a);
  args.push_back(report.string());
  Result r = run(args);
  EXPECT_EQ(r.code, 0) << r.err;
  return fs::exists(report) ? json::parse(read_file(report)) : json();
}

const json& variant_named(const json& doc, const std::string& name) {
  for (const json& v : doc.at("variants"))
    if (v.at("name") == name) return v;
  throw std::runtime_error("no variant " + name);
}

// Each variant's embedded report is a report: it validates against the schema and renders.
void expect_whole_reports(const json& doc, const std::string& tag) {
  ASSERT_EQ(doc.at("compare_formats_version"), 2);
  ASSERT_EQ(doc.at("variants").size(), 3u);
  for (const json& v : doc.at("variants")) {
    fs::path report = work_dir() / ("compare_formats_" + tag + "_" + v.at("name").get<std::string>() + ".json");
    std::ofstream(report) << v.at("report").dump();
    std::string validate = "/usr/bin/python3 " + quote(VALIDATOR) + " " + quote(SCHEMA) + " " + quote(report.string());
    EXPECT_EQ(std::system(validate.c_str()), 0) << validate;
    Result rendered = run({"render", report.string()});
    EXPECT_EQ(rendered.code, 0) << rendered.err;
    EXPECT_THAT(rendered.out, HasSubstr("Heatmap")) << v.at("name");
  }
}

// The top-level convolutions' weight strides, in order.
std::vector<json> conv_weight_strides(const json& report) {
  std::vector<json> strides;
  for (const json& op : expand_ops(report))
    if (op["parent"].is_null() && op["name"] == "aten::conv2d") strides.push_back(op["inputs"][1]["strides"]);
  return strides;
}

TEST(CompareFormats, EachVariantCopiesAsAPlainRunOfItsInputsAndTheChannelsLastOneConvertedTheWeights) {
  const json& entry = entry_named("channels_last_convnet");  // given a channels_last input, NCHW weights
  Result r;
  const json doc = compare_formats(model_args(entry, {}), "convnet", &r);
  ASSERT_FALSE(doc.is_null());
  expect_whole_reports(doc, "convnet");
  const fs::path model = sample_path(entry);
  const json& given = variant_named(doc, "as_given");
  const json& cl = variant_named(doc, "channels_last");
  const json& contiguous = variant_named(doc, "contiguous");
  // as_given: the manifest's input, and the manifest's copies (each conv copies its weight).
  EXPECT_EQ(given["report"]["summary"]["copies"], plain_report(model, {"2x3x32x32:channels_last"}, "convnet_cl_input")["summary"]["copies"]);
  EXPECT_EQ(given["report"]["summary"]["copies"], expected(entry).at("copies"));
  EXPECT_EQ(given["conversion"], nullptr);
  // contiguous: the input made contiguous, the weights already are.
  EXPECT_EQ(contiguous["inputs"], json::array({"2x3x32x32"}));
  EXPECT_EQ(contiguous["report"]["summary"]["copies"], plain_report(model, {"2x3x32x32"}, "convnet_nchw")["summary"]["copies"]);
  EXPECT_EQ(contiguous["conversion"]["inputs"], 1);
  EXPECT_EQ(contiguous["conversion"]["parameters"], 0);
  // channels_last: the two conv weights converted (of 8 parameters; the batch norm's are 1-D),
  // so neither conv copies its weight: the two implicit copies as_given makes are avoided.
  EXPECT_EQ(cl["conversion"]["parameters"], 2);
  EXPECT_EQ(cl["conversion"]["parameters_total"], 8);
  EXPECT_EQ(cl["conversion"]["buffers"], 0);
  EXPECT_EQ(cl["conversion"]["inputs"], 0) << "the input was channels_last already";
  EXPECT_EQ(cl["report"]["run"]["conversion"], cl["conversion"]);
  EXPECT_EQ(given["report"]["summary"]["copies"]["implicit_layout"], 2);
  EXPECT_EQ(cl["report"]["summary"]["copies"]["implicit_layout"], 0);
  EXPECT_EQ(cl["total"]["implicit_copies"], 0);
  EXPECT_EQ(given["total"]["implicit_copies"], 2);
  ASSERT_EQ(conv_weight_strides(cl["report"]).size(), 2u);
  for (const json& strides : conv_weight_strides(cl["report"]))
    EXPECT_EQ(strides[1], 1) << "channels_last weights: the channel dim innermost: " << strides;
  // Timed: five plain calls each, in the report too.
  for (const json& v : doc["variants"]) {
    EXPECT_EQ(v["time"]["calls"], 7) << v["name"];
    EXPECT_EQ(v["report"]["run"]["plain_call_ns"].size(), 7u) << v["name"];
    EXPECT_LE(v["time"]["min_ns"], v["time"]["median_ns"]);
  }
  // The copies channels_last avoids, by op, module and line.
  const json& avoided = doc["verdict"]["copies"][0]["avoided"];
  ASSERT_EQ(doc["verdict"]["copies"][0]["variant"], "channels_last");
  ASSERT_EQ(avoided.size(), 2u) << avoided.dump();
  EXPECT_EQ(avoided[0]["op"], "aten::conv2d");
  EXPECT_EQ(avoided[0]["module"], "conv1");
  EXPECT_EQ(avoided[1]["module"], "conv2");
  // The user's line (the sample's forward), torch's conv.py as the innermost frame.
  EXPECT_THAT(avoided[0]["source"].get<std::string>(), HasSubstr("sample_convs.py:"));
  EXPECT_THAT(r.out, HasSubstr("channels_last: adds 0 copies (0.000 MB), avoids 2 copies"));
  EXPECT_THAT(r.out, HasSubstr("avoids   1 → 0  implicit_layout"));
  EXPECT_THAT(r.out, HasSubstr("aten::conv2d in conv1 at "));
  EXPECT_THAT(r.out, HasSubstr("Verdict (derived from the plain calls): "));
  EXPECT_EQ(r.err, "") << "nothing on stderr when it is not a terminal";
}

// The C++ conversion does what Python's does: the channels_last variant of the NCHW block is
// the block Python converted (grad_channels_last_model), copy for copy and stride for stride,
// and the contiguous variant of that converted block is the NCHW block again.
TEST(CompareFormats, TheChannelsLastVariantIsWhatModelToMemoryFormatMakes) {
  const fs::path nchw = sample_path(entry_named("grad_channels_last_input"));
  const fs::path converted = sample_path(entry_named("grad_channels_last_model"));
  const json doc = compare_formats({nchw.string(), "--input", "2x8x6x6"}, "block");
  ASSERT_FALSE(doc.is_null());
  const json& cl = variant_named(doc, "channels_last");
  EXPECT_EQ(cl["inputs"], json::array({"2x8x6x6:channels_last"}));
  // The 3x3, the 1x1 and the depthwise weights (the 1x1's and the depthwise's NCHW strides
  // differ from channels_last's on their size-1 dims, which Python's conversion changes too).
  EXPECT_EQ(cl["conversion"]["parameters"], 3);
  EXPECT_EQ(cl["conversion"]["parameters_total"], 6);
  const json python = plain_report(converted, {"2x8x6x6:channels_last"}, "block_python_converted");
  EXPECT_EQ(cl["report"]["summary"]["copies"], python["summary"]["copies"]);
  EXPECT_EQ(cl["report"]["summary"]["copy_bytes"], python["summary"]["copy_bytes"]);
  EXPECT_EQ(conv_weight_strides(cl["report"]), conv_weight_strides(python));
  EXPECT_EQ(conv_weight_strides(python).size(), 3u);
  // And back: the converted block's contiguous variant is the NCHW block fed NCHW input.
  const json back = compare_formats({converted.string(), "--input", "2x8x6x6:channels_last"}, "block_back");
  ASSERT_FALSE(back.is_null());
  const json& contiguous = variant_named(back, "contiguous");
  EXPECT_EQ(contiguous["conversion"]["parameters"], 3);
  const json nchw_run = plain_report(nchw, {"2x8x6x6"}, "block_nchw");
  EXPECT_EQ(contiguous["report"]["summary"]["copies"], nchw_run["summary"]["copies"]);
  EXPECT_EQ(conv_weight_strides(contiguous["report"]), conv_weight_strides(nchw_run));
}

// matmul folds the batch dims of a 4-D operand with reshape: a view of an NCHW tensor, a copy
// of a channels_last one. channels_last adds a copy there.
TEST(CompareFormats, ChannelsLastAddsTheCopyAPlainRunOfAChannelsLastInputMakes) {
  const json& entry = entry_named("broadcast_matmul");
  Result r;
  const json doc = compare_formats(model_args(entry, {}), "matmul", &r);
  ASSERT_FALSE(doc.is_null());
  expect_whole_reports(doc, "matmul");
  const fs::path model = sample_path(entry);
  const json plain_cl = plain_report(model, {"2x4x8x16:channels_last"}, "matmul_cl");
  const json& cl = variant_named(doc, "channels_last");
  EXPECT_EQ(cl["report"]["summary"]["copies"], plain_cl["summary"]["copies"]);
  EXPECT_EQ(cl["report"]["summary"]["copies"]["implicit_layout"], 1);
  EXPECT_EQ(cl["conversion"]["parameters"], 0) << "its one parameter is 3-D";
  EXPECT_EQ(variant_named(doc, "as_given")["report"]["summary"]["copies"], expected(entry).at("copies"));
  EXPECT_EQ(variant_named(doc, "contiguous")["report"]["summary"]["copies"], expected(entry).at("copies"));
  const json& added = doc["verdict"]["copies"][0]["added"];
  ASSERT_EQ(added.size(), 1u) << doc["verdict"].dump();
  EXPECT_EQ(added[0]["op"], "aten::matmul");
  EXPECT_EQ(added[0]["class"], "implicit_layout");
  EXPECT_EQ(added[0]["count_before"], 0);
  EXPECT_EQ(added[0]["count_after"], 1);
  EXPECT_EQ(added[0]["bytes_after"], plain_cl["summary"]["copy_bytes"]["implicit_layout"]);
  EXPECT_EQ(added[0]["src_layout"], "channels_last");
  EXPECT_THAT(added[0]["source_text"].get<std::string>(), HasSubstr("torch.matmul(x, self.w)"));
  EXPECT_EQ(doc["verdict"]["copies"][1]["variant"], "contiguous");
  EXPECT_TRUE(doc["verdict"]["copies"][1]["added"].empty());
  EXPECT_THAT(r.out, HasSubstr("channels_last: adds 1 copy (0.004 MB), avoids 0 copies"));
  EXPECT_THAT(r.out, HasSubstr("adds     0 → 1  implicit_layout, 0.000 → 0.004 MB: aten::matmul at "));
  EXPECT_THAT(r.out, HasSubstr("contiguous: the same copies as as_given"));
  // The rounds: as_given, each variant, as_given again, 7 of them; every pair judged at 97.5%.
  EXPECT_EQ(doc["as_given_again_ns"].size(), 7u);
  for (const json& v : doc["variants"]) EXPECT_EQ(v["report"]["run"]["plain_call_ns"].size(), 7u) << v["name"];
  EXPECT_THAT(doc["verdict"]["control"].get<std::string>(), HasSubstr("as_given against itself"));
  EXPECT_EQ(doc["verdict"]["control_rounds"]["rounds"], 7);
  ASSERT_EQ(doc["verdict"]["against_fastest"].size(), 2u);
  for (const json& a : doc["verdict"]["against_fastest"]) {
    EXPECT_EQ(a["rounds"]["rounds"], 7);
    EXPECT_DOUBLE_EQ(a["rounds"]["level"].get<double>(), 0.975);
    EXPECT_NE(a["rounds"]["saving"], "not_judged");
  }
}

// A model that raises with a channels_last input (view() of it): that variant says so, the
// others are compared, and the command succeeds.
TEST(CompareFormats, AVariantThatRaisesIsReportedAndTheOthersKept) {
  const fs::path model = work_dir() / "view_after_conv_layout.pt";
  const std::string script =
      "import sys, torch\n"
      "class ViewFlat(torch.nn.Module):\n"
      "    def forward(self, x):\n"
      "        return x.view(x.size(0), -1)\n"
      "torch.jit.script(ViewFlat()).save(sys.argv[1])\n";
  const fs::path script_file = work_dir() / "view_flat.py";
  std::ofstream(script_file) << script;
  ASSERT_EQ(std::system((quote(TORCH_PYTHON) + " " + quote(script_file.string()) + " " + quote(model.string())).c_str()), 0);
  Result r;
  const json doc = compare_formats({model.string(), "--input", "2x3x4x4"}, "raises", &r);
  ASSERT_FALSE(doc.is_null());
  const json& cl = variant_named(doc, "channels_last");
  EXPECT_EQ(cl["status"], "failed");
  EXPECT_THAT(cl["error"].get<std::string>(), HasSubstr("view size is not compatible"));
  EXPECT_EQ(cl["report"]["run"]["status"], "failed") << "its report, up to the op that raised";
  EXPECT_EQ(cl["time"]["calls"], 0);
  for (const char* name : {"as_given", "contiguous"}) {
    EXPECT_EQ(variant_named(doc, name)["status"], "ok") << name;
    EXPECT_EQ(variant_named(doc, name)["time"]["calls"], 7) << name;
  }
  EXPECT_THAT(doc["verdict"]["not_timed"][0].get<std::string>(), HasSubstr("channels_last: could not run: "));
  EXPECT_THAT(r.out, HasSubstr("channels_last  could not run: RuntimeError: view size is not compatible"));
  EXPECT_EQ(r.err, "");
}

TEST(CompareFormats, ExitCodesAndOneLineErrors) {
  const std::string ok_model = sample_path(entry_named("transpose_reshape")).string();
  // A bad --input, the wrong number of inputs, a missing model: before anything runs.
  for (const auto& [args, code, message] :
       {std::tuple{std::vector<std::string>{ok_model, "--input", "2x8y16"}, 2, "--input '2x8y16'"},
        std::tuple{std::vector<std::string>{ok_model, "--input", "2x8x16", "--input", "4"}, 2, "forward() takes 1 input"},
        std::tuple{std::vector<std::string>{"/nonexistent/m.pt", "--input", "4"}, 3, "cannot open model"},
        std::tuple{std::vector<std::string>{ok_model, "--input", "2x8x16", "--timed-calls", "-1"}, 2, "timed-calls"}}) {
    std::vector<std::string> full = {"compare-formats"};
    full.insert(full.end(), args.begin(), args.end());
    Result r = run(full);
    EXPECT_EQ(r.code, code) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_THAT(r.err, HasSubstr(message));
    EXPECT_EQ(r.out, "") << "nothing on stdout";
  }
  // The model raises as given (and so in every variant): exit 4, the outputs still written.
  Result failed;
  const json doc = compare_formats(sample_args("view_fails", {}), "view_fails", &failed, 4);
  EXPECT_EQ(lines(failed.err), 1) << failed.err;
  EXPECT_THAT(failed.err, HasSubstr("raised as given: RuntimeError: view size"));
  EXPECT_THAT(failed.out, HasSubstr("as_given       could not run"));
  EXPECT_EQ(variant_named(doc, "as_given")["status"], "failed");
  EXPECT_EQ(doc["verdict"]["fastest"], nullptr);
  // An unwritable --json: exit 5, the text still printed.
  Result unwritable = run({"compare-formats", ok_model, "--input", "2x8x16", "--timed-calls", "0", "--json",
                           "/nonexistent/c.json"});
  EXPECT_EQ(unwritable.code, 5) << unwritable.err;
  EXPECT_THAT(unwritable.out, HasSubstr("Verdict"));
  // --json -: the document on stdout instead of the text.
  Result to_stdout = run({"compare-formats", ok_model, "--input", "2x8x16", "--timed-calls", "0", "--json", "-"});
  ASSERT_EQ(to_stdout.code, 0) << to_stdout.err;
  EXPECT_EQ(json::parse(to_stdout.out)["variants"].size(), 3u);
}

// --- the text report leads with its verdict ----------------------------------------------------

// The first `n` lines of a text.
std::vector<std::string> first_lines(const std::string& text, size_t n) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; out.size() < n && std::getline(in, line);) out.push_back(line);
  return out;
}

// The index of the first line containing `part`, -1 if none.
int line_with(const std::vector<std::string>& lines, const std::string& part) {
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find(part) != std::string::npos) return static_cast<int>(i);
  return -1;
}

int64_t layout_copies(const json& report) {
  return report["summary"]["copies"]["implicit_layout"].get<int64_t>() +
         report["summary"]["copies"]["explicit_layout"].get<int64_t>();
}

// The causes' lines ("  N. COUNT implicit, ..." / "  N. COUNT explicit, ...") and the sum of
// their counts.
int64_t cause_copies(const std::vector<std::string>& lines, int from, int to, int* causes) {
  int64_t sum = 0;
  *causes = 0;
  for (int i = from; i >= 0 && i < to; ++i) {
    int rank = 0, n = 0;
    char kind[16] = {};
    if (std::sscanf(lines[i].c_str(), " %d. %d %15[a-z],", &rank, &n, kind) == 3 &&
        (std::string(kind) == "implicit" || std::string(kind) == "explicit")) {
      sum += n;
      ++*causes;
    }
  }
  return sum;
}

// The default sample as scripts/profile-default.sh runs it: its first screen (40 lines) holds
// the verdict, the causes with their fixes and the heatmap, in that order, and the copies
// the verdict and the causes count are the JSON report's.
TEST(Verdict, TheDefaultSamplesFirstScreenHoldsTheVerdictTheCausesAndTheHeatmap) {
  const json& entry = entry_named("resnet18");
  if (!fs::exists(sample_path(entry))) GTEST_SKIP() << "resnet18 not made here: " << unmade_reason("resnet18");
  const fs::path report = work_dir() / "default_sample.json";
  Result r = run({sample_path(entry).string(), "--input", "8x3x224x224:f32:channels_last", "--json", report.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const json doc = json::parse(read_file(report));
  const int64_t implicit = doc["summary"]["copies"]["implicit_layout"].get<int64_t>();
  ASSERT_GT(implicit, 0) << "channels_last input against NCHW weights";
  const std::vector<std::string> screen = first_lines(r.out, 40);
  const int verdict = line_with(screen, "Verdict: " + std::to_string(implicit) +
                                                   (implicit == 1 ? " implicit layout copy" : " implicit layout copies") +
                                                   " a call, ");
  const int causes = line_with(screen, "Causes of the layout copies, grouped: ");
  const int heatmap = line_with(screen, "Heatmap: rows are ");
  ASSERT_GE(verdict, 0) << r.out;
  EXPECT_THAT(screen[verdict], HasSubstr("% of the forward's time (measured: the copies' own time, "));
  ASSERT_GT(causes, verdict) << r.out;
  ASSERT_GT(heatmap, causes) << r.out;
  ASSERT_LT(heatmap + 1, 40) << "the heatmap's column titles are on the first screen too";
  EXPECT_THAT(screen[heatmap + 1], HasSubstr("module")) << r.out;
  const int weights = line_with(screen, "channels_last data meets NCHW (contiguous) weights");
  ASSERT_GT(weights, causes) << r.out;
  EXPECT_LT(weights, heatmap);
  EXPECT_EQ(screen[weights + 1], "     → convert the model once: model.to(memory_format=torch.channels_last)");
  int listed = 0;
  EXPECT_EQ(cause_copies(screen, causes, heatmap, &listed), layout_copies(doc)) << r.out;
  EXPECT_EQ(line_with(screen, "not measured  "), -1) << "the not-measured list is behind -v";
  EXPECT_GE(line_with(screen, "  figures   measured: "), 0) << r.out;
  // The convolutions' split points share one suggestion: it is printed once.
  const std::string suggestion = "→ inputs mix channels_last and NCHW tensors";
  const size_t first = r.out.find(suggestion);
  ASSERT_NE(first, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(suggestion, first + 1), std::string::npos) << r.out;
  EXPECT_THAT(r.out, HasSubstr(" places, same cause and suggestion: in "));
}

// A sample with two causes (matmul after chunk, reshape after transpose) shows each, with its
// fix, before the heatmap.
TEST(Verdict, EachCauseOfATwoCauseSampleIsShown) {
  Result r;
  const json doc = run_report("attention", "two_causes.json", {}, &r);
  const std::vector<std::string> screen = first_lines(r.out, 40);
  const int causes = line_with(screen, "Causes of the layout copies, grouped: 2 causes");
  const int heatmap = line_with(screen, "Heatmap: rows are ");
  ASSERT_GE(causes, 0) << r.out;
  ASSERT_GT(heatmap, causes) << r.out;
  int listed = 0;
  EXPECT_EQ(cause_copies(screen, causes, heatmap, &listed), layout_copies(doc)) << r.out;
  EXPECT_EQ(listed, 2) << r.out;
  const int matmul = line_with(screen, "aten::matmul needs dense data");
  const int reshape = line_with(screen, "aten::reshape needs dense data: the permuted(0,2,1,3) tensor that aten::transpose makes");
  for (int at : {matmul, reshape}) {
    ASSERT_GT(at, causes) << r.out;
    ASSERT_LT(at, heatmap) << r.out;
    EXPECT_THAT(screen[at + 1], HasSubstr("     → make it contiguous once where ")) << r.out;
  }
}

// -v (run and render) lists what was measured and what was not, with why; without it the
// header says it in one line.
TEST(Verdict, VerboseListsWhatWasNotMeasured) {
  Result quiet;
  run_report("transpose_reshape", "verbose.json", {"--no-counters"}, &quiet);
  EXPECT_THAT(quiet.out, ::testing::Not(HasSubstr("not measured  performance counters: turned off")));
  EXPECT_THAT(quiet.out, HasSubstr(" not measured (-v lists them)"));
  Result loud;
  run_report("transpose_reshape", "verbose.json", {"--no-counters", "-v"}, &loud);
  EXPECT_THAT(loud.out, HasSubstr("not measured  performance counters: turned off (--no-counters)"));
  EXPECT_THAT(loud.out, HasSubstr("  measured  op times"));
  Result rendered = run({"render", (work_dir() / "verbose.json").string(), "--verbose"});
  ASSERT_EQ(rendered.code, 0) << rendered.err;
  EXPECT_THAT(rendered.out, HasSubstr("not measured  performance counters: turned off (--no-counters)"));
}

// check's Markdown (a pull-request comment) leads the same way: the verdict, then the causes
// of the layout copies baseline → new with their fixes, then the checks.
TEST(Verdict, CheckMarkdownLeadsWithTheCauses) {
  fs::path regressed = work_dir() / "verdict_regressed.json";
  ASSERT_EQ(run(run_args(entry_named("gate_regressed"), regressed)).code, 0);
  Result md = run({"check", gate_baseline().string(), regressed.string(), "--format", "markdown"});
  EXPECT_EQ(md.code, 1) << md.err;
  const size_t verdict = md.out.find("### layoutprof: REGRESSED");
  const size_t causes = md.out.find("**Causes of the layout copies** (baseline → new):");
  const size_t reshape = md.out.find("- 0 → 1 implicit, ");
  const size_t regression = md.out.find("- **regression** ");
  ASSERT_NE(verdict, std::string::npos) << md.out;
  ASSERT_NE(causes, std::string::npos) << md.out;
  ASSERT_NE(reshape, std::string::npos) << md.out;
  EXPECT_LT(verdict, causes);
  EXPECT_LT(causes, reshape);
  EXPECT_LT(reshape, regression) << md.out;
  EXPECT_THAT(md.out.substr(reshape), HasSubstr("aten::reshape needs dense data: the permuted(0,2,1,3) tensor that aten::transpose makes"));
  EXPECT_THAT(md.out.substr(reshape), HasSubstr("\n  → make it contiguous once where aten::transpose makes it (`.contiguous()` on the result of the transpose), so that the ops after it read dense data\n"));
}

}  // namespace
