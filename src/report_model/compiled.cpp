// The figures a compiled run's section sums (compiled.h).
#include "report_model/compiled.h"

namespace layoutprof {

std::string Recompile::key() const { return function + "|" + tensor + "|" + kind; }

int64_t CompiledRun::layout_recompiles() const {
  int64_t n = 0;
  for (const Recompile& r : recompiles) n += r.layout;
  return n;
}

int64_t CompiledRun::copies_per_call() const {
  int64_t n = 0;
  for (const CompiledGraph& g : graphs)
    for (const CompiledCopy& c : g.copies) n += c.every_call;
  return n;
}

int64_t CompiledRun::copy_bytes_per_call() const {
  int64_t n = 0;
  for (const CompiledGraph& g : graphs)
    for (const CompiledCopy& c : g.copies) n += c.every_call ? c.bytes : 0;
  return n;
}

}  // namespace layoutprof
