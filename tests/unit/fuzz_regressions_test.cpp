// Every input a fuzz target found a fault with, kept in tests/fuzz/regressions/TARGET/ once
// fixed, and every seed of tests/fuzz/corpus/TARGET/, through the same target bodies
// (tests/fuzz/fuzz_entries.h), in every build: they must be refused with a one-line error or
// read, never crash or throw anything else.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "../fuzz/fuzz_entries.h"

namespace layoutprof {
namespace {

namespace fs = std::filesystem;

const std::map<std::string, std::function<int(const uint8_t*, size_t)>>& targets() {
  static const std::map<std::string, std::function<int(const uint8_t*, size_t)>> t = {
      {"input_spec", fuzz::input_spec}, {"tlb", fuzz::tlb},         {"events", fuzz::events},
      {"fraction", fuzz::fraction},     {"report", fuzz::report},   {"pt2", fuzz::pt2}};
  return t;
}

TEST(FuzzRegressions, EveryKeptInputIsRefusedOrReadNeverACrash) {
  size_t replayed = 0;
  for (const char* kind : {"regressions", "corpus"}) {
    for (const auto& [name, body] : targets()) {
      const fs::path dir = fs::path(FUZZ_DIR) / kind / name;
      if (!fs::exists(dir)) continue;
      for (const auto& f : fs::directory_iterator(dir)) {
        std::ifstream in(f.path(), std::ios::binary);
        std::stringstream s;
        s << in.rdbuf();
        const std::string data = s.str();
        EXPECT_NO_THROW(body(reinterpret_cast<const uint8_t*>(data.data()), data.size())) << f.path();
        ++replayed;
      }
    }
  }
  EXPECT_GT(replayed, 20u) << "the seed corpora are in tests/fuzz/corpus";
}

}  // namespace
}  // namespace layoutprof
