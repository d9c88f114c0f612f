// Where an op comes from, as the model's front end knows it: the recorder's one question to
// the model. Torch-free: the recorder asks it in its RecordFunction callback, keeps the ids it
// gets, and turns them into text after the call.
#pragma once

#include <cstdint>
#include <string>

namespace layoutprof {

// An op's site as ids its OpSiteSource interned: cheap to take and to keep per op. Equal ids
// name the same module path (the same source line), within one source's life.
struct SiteId {
  uint32_t module = 0;  // 0: the model itself, or not known
  uint32_t source = 0;  // 0: not known
};

// The user's source line of an op: "file:line" and that line's text, trimmed ("" unknown).
struct SourceLine {
  std::string location;
  std::string text;
};

// A front end that names its ops up front (a graph whose nodes carry their module path and
// stack trace) answers current() with the ids of the node it is running; one that learns them
// as the ops run (the TorchScript interpreter's call stack, an eager front end's module hooks)
// asks its runtime then.
class OpSiteSource {
 public:
  virtual ~OpSiteSource() = default;
  // As a top-level op starts, on the thread running it (any thread: a forked task's ops run
  // on the pool's), where the model's code called it from. Called per recorded top-level op:
  // builds no text it can avoid and takes no lock it can avoid.
  virtual SiteId current() = 0;
  // Off the hot path, after the call: the module path ("layer1.0"; "" for the model itself)
  // and the source line behind ids current() gave.
  virtual std::string module_path(uint32_t module) const = 0;
  virtual SourceLine source_line(uint32_t source) const = 0;
};

}  // namespace layoutprof
