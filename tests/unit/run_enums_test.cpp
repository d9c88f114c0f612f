// The run's enums and their names (core/run_enums.h): each name reads back as its value, and
// a name that is none of them is refused in one line that lists the known ones.
#include "core/run_enums.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

namespace layoutprof {
namespace {

using ::testing::HasSubstr;

template <typename E>
void expect_round_trip(std::initializer_list<std::pair<E, const char*>> values) {
  for (const auto& [value, name] : values) {
    EXPECT_EQ(to_string(value), name);
    EXPECT_EQ(from_string<E>(name), value) << name;
  }
}

TEST(RunEnums, EachNameIsTheReportsWordAndReadsBack) {
  expect_round_trip<RunStatus>(
      {{RunStatus::ok, "ok"}, {RunStatus::failed, "failed"}, {RunStatus::interrupted, "interrupted"}});
  expect_round_trip<CounterMode>(
      {{CounterMode::counted, "counted"}, {CounterMode::sampled, "sampled"}, {CounterMode::interval, "interval"}});
  expect_round_trip<CounterScope>({{CounterScope::thread, "thread"}, {CounterScope::system, "system"}});
}

TEST(RunEnums, AnUnknownNameIsRefusedInOneLine) {
  try {
    from_string<RunStatus>("OK");
    FAIL() << "names are matched exactly";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown run status 'OK' (ok, failed, interrupted)");
  }
  EXPECT_THROW(from_string<CounterMode>(""), std::invalid_argument);
  try {
    from_string<CounterScope>("socket\nnext line");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("unknown counter scope"));
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace layoutprof
