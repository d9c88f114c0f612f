// The counters where the process may not open them, as users meet it: under a seccomp filter
// that refuses perf_event_open (a default Docker container), and as root with every capability
// dropped (root in a default container has no CAP_PERFMON or CAP_SYS_ADMIN: what counts is the
// capabilities, not the uid). The command still records and reports; each event that did not open says
// why and what would change it, and a user-space-only open says that kernel time is left out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ::testing::HasSubstr;

// A folder anybody may write (the unprivileged run writes its report there).
fs::path shared_dir() {
  static fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("layoutprof_permissions_" + std::to_string(::getpid()));
    fs::create_directories(d);
    ::chmod(d.c_str(), 0777);
    return d;
  }();
  return dir;
}

// `prefix` then the command on the committed gate sample, its JSON report to `name`; the exit
// code, and the report (empty when none was written).
int run_sample(const std::string& prefix, const std::string& name, json* report, const std::string& options = "") {
  const fs::path out = shared_dir() / name;
  const std::string cmd = prefix + " '" + LAYOUTPROF_BIN + "' '" + COMMITTED_SAMPLES_DIR +
                          "/gate_base.pt' --input 2x16x32 --iters 1 --warmup 0 " + options + " --json '" + out.string() +
                          "' >'" + out.string() + ".log' 2>&1 </dev/null";
  const int status = std::system(cmd.c_str());
  std::ifstream in(out);
  *report = in ? json::parse(in) : json::object();
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A kernel setting (/proc/sys/kernel/NAME) set for a test and put back after it. The settings
// are global: these tests run serially (RUN_SERIAL in tests/CMakeLists.txt).
class Sysctl {
 public:
  Sysctl(const std::string& name, const std::string& value) : path_("/proc/sys/kernel/" + name) {
    std::ifstream in(path_);
    if (!(in >> old_)) return;
    std::ofstream out(path_);
    set_ = static_cast<bool>(out << value << "\n" << std::flush);
  }
  ~Sysctl() {
    if (set_) std::ofstream(path_) << old_ << "\n";
  }
  bool set() const { return set_; }

 private:
  std::string path_, old_;
  bool set_ = false;
};

// The uid stays root's (the build and its LibTorch stay readable); every capability goes.
const char* const kNoCapabilities = "ASAN_OPTIONS=detect_leaks=0 /usr/bin/setpriv --inh-caps=-all --bounding-set=-all --";

bool can_drop_capabilities() { return ::geteuid() == 0 && ::access("/usr/bin/setpriv", X_OK) == 0; }

std::string log_of(const std::string& name) {
  std::ifstream in(shared_dir() / (name + ".log"));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(Permissions, ASeccompFilterThatRefusesPerfEventOpenIsNamedAndTheRunGoesOn) {
  json j;
  ASSERT_EQ(run_sample(std::string("'") + NO_PERF_OPEN_BIN + "'", "seccomp.json", &j), 0) << log_of("seccomp.json");
  ASSERT_FALSE(j["run"]["counters"].empty()) << "the default events are listed, opened or not";
  for (const json& c : j["run"]["counters"]) {
    EXPECT_FALSE(c["measured"].get<bool>()) << c.dump();
    EXPECT_THAT(c["reason"].get<std::string>(), HasSubstr("a seccomp filter refuses perf_event_open")) << c.dump();
  }
  EXPECT_EQ(j["run"]["status"], "ok");
}

TEST(Permissions, RootWithoutCapabilitiesCountsUserSpaceOnlyAndSaysSo) {
  std::ifstream sysctl("/proc/sys/kernel/perf_event_paranoid");
  int paranoid = 0;
  if (!(sysctl >> paranoid) || paranoid < 2) GTEST_SKIP() << "perf_event_paranoid " << paranoid << " (< 2 lets kernel time in)";
  if (!can_drop_capabilities()) GTEST_SKIP() << "needs root and setpriv to drop every capability";
  json j;
  ASSERT_EQ(run_sample(kNoCapabilities, "no_capabilities.json", &j), 0) << log_of("no_capabilities.json");
  bool software = false;
  for (const json& c : j["run"]["counters"]) {
    const std::string event = c["event"];
    if (event != "task-clock" && event != "page-faults") continue;
    software = true;
    EXPECT_TRUE(c["measured"].get<bool>()) << c.dump();
    EXPECT_THAT(c["note"].get<std::string>(), HasSubstr("kernel time left out of the counts")) << c.dump();
  }
  EXPECT_TRUE(software) << j["run"]["counters"].dump();
}

// The software events' statuses of a run without capabilities at each paranoid level: at -1 the
// kernel lets kernel time in (no note), at 2 it is left out and the note says so.
TEST(Permissions, ParanoidMinusOneAndTwoAsAProcessWithoutCapabilitiesSeesThem) {
  if (!can_drop_capabilities()) GTEST_SKIP() << "needs root and setpriv to drop every capability";
  for (const char* level : {"-1", "2"}) {
    Sysctl paranoid("perf_event_paranoid", level);
    if (!paranoid.set()) GTEST_SKIP() << "/proc/sys/kernel/perf_event_paranoid is not writable here";
    json j;
    const std::string name = std::string("paranoid") + level + ".json";
    ASSERT_EQ(run_sample(kNoCapabilities, name, &j), 0) << log_of(name);
    int software = 0;
    for (const json& c : j["run"]["counters"]) {
      const std::string event = c["event"];
      if (event != "task-clock" && event != "page-faults") continue;
      ++software;
      EXPECT_TRUE(c["measured"].get<bool>()) << level << ": " << c.dump();
      const std::string note = c.value("note", "");
      if (std::string(level) == "2") EXPECT_THAT(note, HasSubstr("kernel time left out")) << c.dump();
      else EXPECT_THAT(note, ::testing::Not(HasSubstr("kernel time left out"))) << c.dump();
    }
    EXPECT_EQ(software, 2) << level << ": " << j["run"]["counters"].dump();
  }
}

// Sampling buffers are locked memory: past perf_event_mlock_kb (and RLIMIT_MEMLOCK) a thread's
// ring cannot be mapped. The run samples the threads that fit and names the others, with the
// setting that would change it.
TEST(Permissions, AThreadWhoseRingBufferIsOverTheLockedMemoryLimitIsNamed) {
  if (!can_drop_capabilities()) GTEST_SKIP() << "needs root and setpriv to drop every capability";
  Sysctl mlock("perf_event_mlock_kb", "8");
  if (!mlock.set()) GTEST_SKIP() << "/proc/sys/kernel/perf_event_mlock_kb is not writable here";
  json j;
  ASSERT_EQ(run_sample(std::string("ulimit -l 0; ") + kNoCapabilities, "mlock.json", &j, "--threads 4"), 0)
      << log_of("mlock.json");
  const std::string read = j["run"].value("counter_read", "");
  EXPECT_THAT(read, HasSubstr("not sampled, their ops' samples missing: thread ")) << read;
  EXPECT_THAT(read, HasSubstr("perf_event_mlock_kb 8 KB")) << read;
  EXPECT_EQ(j["run"]["status"], "ok");
}

}  // namespace
