// The text of the sites a call took, each id resolved once: Str ids that compare as the first
// call's do (match_by_site), and the strings the events keep. Torch-free.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>

#include "core/str.h"
#include "record/op_sites.h"

namespace layoutprof {

class SiteTexts {
 public:
  explicit SiteTexts(const OpSiteSource* source) : source_(source) {}
  Str module(SiteId id) {
    auto it = modules_.find(id.module);
    if (it == modules_.end()) it = modules_.emplace(id.module, Str(source_ ? source_->module_path(id.module) : "")).first;
    return it->second;
  }
  // file:line and the line's text.
  const std::pair<Str, Str>& source(SiteId id) {
    auto it = sources_.find(id.source);
    if (it == sources_.end()) {
      SourceLine line = source_ ? source_->source_line(id.source) : SourceLine{};
      it = sources_.emplace(id.source, std::make_pair(Str(line.location), Str(line.text))).first;
    }
    return it->second;
  }

 private:
  const OpSiteSource* source_;
  std::unordered_map<uint32_t, Str> modules_;
  std::unordered_map<uint32_t, std::pair<Str, Str>> sources_;
};

}  // namespace layoutprof
