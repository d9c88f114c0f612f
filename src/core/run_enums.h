// The closed sets a run's record takes its words from: how the run ended, and how and over
// what each counter was taken. The code compares the enums; the names are the reports' words
// (the JSON report's strings, and what the text and HTML reports show).
#pragma once

#include <string>

namespace layoutprof {

enum class RunStatus {
  ok,
  failed,       // the model raised: the record holds the calls up to the op that raised
  interrupted,  // SIGINT or SIGTERM stopped the run after the calls it holds (support/interrupt.h)
};

enum class CounterMode {
  counted,   // read at the start and end of every top-level op and copy (exact per op)
  sampled,   // one sample every `period` events, attributed to the ops running then
  interval,  // an uncore event of a sampled run, read every `period` ns and shared by time
};

enum class CounterScope {
  thread,  // the process's threads
  system,  // uncore: the whole socket
};

std::string to_string(RunStatus v);
std::string to_string(CounterMode v);
std::string to_string(CounterScope v);

// The value a name stands for (the inverse of to_string); throws std::invalid_argument, one
// line, for a name that is none of them.
template <typename E>
E from_string(const std::string& name);
template <>
RunStatus from_string<RunStatus>(const std::string& name);
template <>
CounterMode from_string<CounterMode>(const std::string& name);
template <>
CounterScope from_string<CounterScope>(const std::string& name);

}  // namespace layoutprof
