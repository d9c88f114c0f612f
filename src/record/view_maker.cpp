#include "record/view_maker.h"

#include <algorithm>

#include "record/op_sites.h"
#include "record/thread_buffer.h"

namespace layoutprof {

bool same_view(const TensorInfo& a, const TensorInfo& b) {
  return a.storage != 0 && a.storage == b.storage && a.storage_offset == b.storage_offset && a.sizes() == b.sizes() &&
         a.strides() == b.strides();
}

namespace {

// Whether event `i` of `b` has an output that is `view`.
bool outputs_view(const ThreadBuffer& b, size_t i, const TensorInfo& view) {
  const RawTensors& r = b.ranges[i];
  const TensorInfo* first = b.tensors.data() + r.first_output;
  return std::any_of(first, first + r.outputs, [&](const TensorInfo& t) { return same_view(t, view); });
}

}  // namespace

std::optional<ViewMaker> find_view_maker(const ThreadBuffer& b, const OpSiteSource* sites, const TensorInfo& view) {
  if (sites == nullptr || b.ranges.size() < b.events.size()) return std::nullopt;
  for (size_t i = b.events.size(); i-- > 0;) {
    if (!outputs_view(b, i, view)) continue;
    // Its line: its own site, or that of the op around it that took one (the user's call).
    size_t at = i;
    while (!b.events[at].sited && b.events[at].parent >= 0) at = static_cast<size_t>(b.events[at].parent);
    if (!b.events[at].sited) continue;
    // Sites are taken in event order: this is the buffer's site number (sited ones before it).
    const auto site = static_cast<size_t>(
        std::count_if(b.events.begin(), b.events.begin() + static_cast<std::ptrdiff_t>(at),
                      [](const RawEvent& e) { return e.sited; }));
    if (site >= b.sites.size()) continue;
    SourceLine line = sites->source_line(b.sites[site].second.source);
    if (line.location.empty()) continue;
    return ViewMaker{b.events[at].name->text, std::move(line.location), std::move(line.text)};
  }
  return std::nullopt;
}

}  // namespace layoutprof
