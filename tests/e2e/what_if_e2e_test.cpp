// The command's --what-if on the samples whose manifest entry says what each fix must give
// (samples/sample_table.py: measured): in a .pt2 program every kind of fix is applied (a line's
// op changed in the executor, the inputs fed, the model converted, a parameter made dense); in
// a TorchScript archive the line fixes are refused by name and the others applied as there.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// layoutprof with `args`, its JSON report (--json FILE) and its exit code; the folder it
// writes in is removed before it returns.
std::pair<int, json> run_json(std::vector<std::string> args) {
  const fs::path dir = fs::temp_directory_path() / ("layoutprof_what_if_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path out = dir / "report.json";
  struct Gone {
    fs::path dir;
    ~Gone() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } gone{dir};
  std::string cmd = std::string("NO_COLOR=1 '") + LAYOUTPROF_BIN + "'";
  args.insert(args.end(), {"--json", out.string()});
  for (const std::string& a : args) cmd += " '" + a + "'";
  cmd += " >/dev/null 2>" + (dir / "err").string() + " </dev/null";
  const int status = std::system(cmd.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (!fs::exists(out)) return {code, json()};
  return {code, json::parse(read_text(out))};
}

const json& manifest() {
  static const json m = json::parse(read_text(fs::path(COMMITTED_SAMPLES_DIR) / "manifest.json"));
  return m;
}

// The report's cause the manifest's `want` (sample_causes.cause) names: its index, or -1.
int cause_index(const json& want, const json& report, bool pt2) {
  const json& place = pt2 && want.contains("pt2") ? want["pt2"] : want;
  for (size_t i = 0; i < report["causes"].size(); ++i) {
    const json& c = report["causes"][i];
    const json& b = c["birthplace"];
    if (c["layout"] == want["layout"] && b["kind"] == want["kind"] && b["name"] == want["op"] &&
        b["where"].get<std::string>().find(place["file"].get<std::string>()) != std::string::npos &&
        b["code"].get<std::string>().find(place["code"].get<std::string>()) != std::string::npos)
      return static_cast<int>(i);
  }
  return -1;
}

bool line_fix(const std::string& kind) { return kind == "contiguous_at" || kind == "swap_operands"; }

// One manifest expectation against the report's variants of that cause.
void expect_fix(const std::string& name, const json& want, const json& report, int cause, bool pt2) {
  const json& mine = report["causes"][cause].value("what_if", json::array());
  const json* v = nullptr;
  for (const json& candidate : mine)
    if (candidate["actions"][0]["kind"] == want["kind"]) v = &candidate;
  ASSERT_NE(v, nullptr) << name << ": no " << want["kind"] << " variant in " << mine.dump();
  const std::string refused = (*v)["refused"];
  const std::string kind = want["kind"];
  if (!pt2 && line_fix(kind)) {  // a TorchScript archive's lines are not changed: said by name
    EXPECT_THAT(refused, ::testing::HasSubstr("not inside a TorchScript archive")) << name;
    return;
  }
  if (!want["refused"].get<std::string>().empty()) {
    EXPECT_FALSE(refused.empty()) << name << ": " << kind << " was applied";
    return;
  }
  ASSERT_EQ(refused, "") << name << ": " << kind;
  if (want["gone"].get<bool>()) {
    EXPECT_FALSE((*v)["cause_survives"].get<bool>()) << name << ": " << v->dump();
  }
  for (const char* copies : {"explicit", "implicit"}) {
    if (want.contains(copies) && !want[copies].is_null()) {
      EXPECT_EQ((*v)["recorded"][std::string(copies) + "_copies"], want[copies]) << name << ": " << kind;
    }
  }
  if (want["fewer_mixed"].get<bool>()) {
    EXPECT_LT((*v)["recorded"]["mixed_ops"], report["what_if"]["baseline"]["mixed_ops"]) << name;
  }
  const json& outputs = want["outputs"];
  EXPECT_NE(std::find(outputs.begin(), outputs.end(), (*v)["outputs"]["match"]), outputs.end())
      << name << ": " << (*v)["outputs"].dump();
}

// Every call of the rounds is in the report: per round, the baseline first and last and each
// variant that ran once between.
void expect_rounds_calls(const std::string& name, const json& report) {
  const json& w = report["what_if"];
  size_t ran = 0;
  for (const json& c : report["causes"])
    for (const json& v : c.value("what_if", json::array())) ran += v["refused"] == "";
  for (const json& v : w["together"]) ran += v["refused"] == "";
  const int64_t rounds = w["rounds"];
  ASSERT_GT(rounds, 0) << name;
  ASSERT_EQ(w["calls"].size(), static_cast<size_t>(rounds) * (ran + 2)) << name;
  for (int64_t r = 0; r < rounds; ++r) {
    const json& first = w["calls"][static_cast<size_t>(r) * (ran + 2)];
    const json& last = w["calls"][static_cast<size_t>(r + 1) * (ran + 2) - 1];
    EXPECT_EQ(first["who"], "baseline") << name << " round " << r;
    EXPECT_EQ(last["who"], "baseline again") << name << " round " << r;
    EXPECT_EQ(last["round"], r) << name;
  }
}

void check_sample(const json& entry, bool pt2) {
  const std::string name = entry["name"];
  fs::path model = fs::path(MADE_SAMPLES_DIR) / (name + (pt2 ? ".pt2" : ".pt"));
  if (!fs::exists(model)) model = fs::path(COMMITTED_SAMPLES_DIR) / model.filename();
  if (!fs::exists(model)) GTEST_SKIP() << model << " was not made for this LibTorch";
  std::vector<std::string> args{model.string(), "--no-counters", "--threads", "1", "--what-if=8",
                                "--what-if-budget", "2"};
  for (const json& spec : pt2 ? entry["pt2"]["inputs"] : entry["inputs"]) args.insert(args.end(), {"--input", spec});
  const auto [code, report] = run_json(args);
  ASSERT_EQ(code, 0) << name;
  ASSERT_TRUE(report.contains("what_if")) << name;
  EXPECT_EQ(report["what_if"]["why_not"], "") << name;
  expect_rounds_calls(name, report);
  for (const json& want : entry["what_if"]) {
    const int cause = cause_index(entry["causes"][want["cause"].get<size_t>()], report, pt2);
    ASSERT_GE(cause, 0) << name << ": no cause like " << entry["causes"][want["cause"].get<size_t>()].dump();
    expect_fix(name, want, report, cause, pt2);
  }
}

std::vector<std::string> what_if_samples() {
  std::vector<std::string> names;
  for (const json& e : manifest()["samples"])
    if (e.contains("what_if") && !e.value("large", false)) names.push_back(e["name"]);
  return names;
}

const json& entry_of(const std::string& name) {
  for (const json& e : manifest()["samples"])
    if (e["name"] == name) return e;
  throw std::out_of_range(name);
}

class WhatIf : public ::testing::TestWithParam<std::string> {};

TEST_P(WhatIf, EachFixOfTheManifestInTheTorchScriptArchive) { check_sample(entry_of(GetParam()), false); }

TEST_P(WhatIf, EachFixOfTheManifestInTheProgram) {
  const json& entry = entry_of(GetParam());
  if (!entry.contains("pt2") || std::string(LIBTORCH_VERSION).rfind("1.", 0) == 0)
    GTEST_SKIP() << "no .pt2 program for this sample or this LibTorch";
  check_sample(entry, true);
}

INSTANTIATE_TEST_SUITE_P(Manifest, WhatIf, ::testing::ValuesIn(what_if_samples()),
                         [](const auto& info) { return info.param; });

// `check --max-measured-saving`: a report that measured no fixes fails it, saying so; one whose
// fixes cannot save a whole call passes it.
TEST(WhatIfCommand, TheGateReadsTheMeasuredSavings) {
  const fs::path model = fs::path(COMMITTED_SAMPLES_DIR) / "permuted_weight.pt";
  const fs::path dir = fs::temp_directory_path() / ("layoutprof_what_if_gate_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string plain = (dir / "plain.json").string(), measured = (dir / "measured.json").string();
  const std::string run = std::string("'") + LAYOUTPROF_BIN + "' '" + model.string() + "' --input 2x8x16x16 --no-counters";
  ASSERT_EQ(std::system((run + " --json " + plain + " >/dev/null 2>&1").c_str()), 0);
  ASSERT_EQ(std::system((run + " --what-if --what-if-budget 2 --json " + measured + " >/dev/null 2>&1").c_str()), 0);
  const std::string check = std::string("'") + LAYOUTPROF_BIN + "' check " + plain + " ";
  const std::string out = (dir / "out").string();
  int status = std::system((check + plain + " --max-measured-saving 5% >" + out + " 2>&1").c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_THAT(read_text(out), ::testing::HasSubstr("measured no fixes: run it with --what-if"));
  status = std::system((check + measured + " --max-measured-saving 100% >" + out + " 2>&1").c_str());
  EXPECT_EQ(WEXITSTATUS(status), 0) << read_text(out);
  fs::remove_all(dir);
}

TEST(WhatIfCommand, ABadNumberOfCausesIsAUsageError) {
  const auto [code, report] = run_json({"--what-if=0", "x.pt"});
  EXPECT_EQ(code, 2);
  EXPECT_TRUE(report.is_null());
}

}  // namespace
