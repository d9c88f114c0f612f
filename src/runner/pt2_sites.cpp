#include "runner/pt2_sites.h"

#include "support/format.h"

namespace layoutprof {

namespace {

struct Frame {
  std::string file;
  std::string line;
  std::string code;
};

// `File "PATH", line N, in NAME` lines, each followed by the code line (when there is one).
std::vector<Frame> frames_of(const std::string& stack_trace) {
  std::vector<Frame> frames;
  size_t pos = 0;
  while (pos < stack_trace.size()) {
    size_t end = stack_trace.find('\n', pos);
    if (end == std::string::npos) end = stack_trace.size();
    const std::string line = trimmed(stack_trace.substr(pos, end - pos));
    pos = end + 1;
    const std::string file_key = "File \"", line_key = "\", line ";
    if (line.rfind(file_key, 0) == 0) {
      auto close = line.find(line_key);
      if (close == std::string::npos) continue;
      auto number_end = line.find(',', close + line_key.size());
      frames.push_back({line.substr(file_key.size(), close - file_key.size()),
                        line.substr(close + line_key.size(), number_end == std::string::npos
                                                                 ? std::string::npos
                                                                 : number_end - close - line_key.size()),
                        ""});
    } else if (!frames.empty() && frames.back().code.empty()) {
      frames.back().code = line;
    }
  }
  return frames;
}

// Code fx generated ("<eval_with_key>.12"): a higher-order op's subgraph as a function.
bool generated(const Frame& f) { return f.file.rfind("<", 0) == 0; }

// torch's own Python (its modules, fx's generated code) is not where a user's op comes from.
bool in_torch(const Frame& f) {
  return f.file.find("/torch/") != std::string::npos || f.file.rfind("torch/", 0) == 0 || generated(f);
}

// A path from its package folder on ("torchvision/models/resnet.py"), as a user reads it.
std::string short_path(const std::string& file) {
  const std::string site = "-packages/";
  auto at = file.rfind(site);
  return at == std::string::npos ? file : file.substr(at + site.size());
}

}  // namespace

std::string innermost_module_path(const std::string& nn_module_stack) {
  auto begin = nn_module_stack.rfind(';');
  begin = begin == std::string::npos ? 0 : begin + 1;
  // "KEY,PATH,CLASS": the key has no comma, nor does the class's dotted name.
  auto first = nn_module_stack.find(',', begin);
  auto last = nn_module_stack.rfind(',');
  if (first == std::string::npos || last <= first) return "";
  return nn_module_stack.substr(first + 1, last - first - 1);
}

SourceLine user_source_line(const std::string& stack_trace) {
  const std::vector<Frame> frames = frames_of(stack_trace);
  if (frames.empty()) return {};
  const Frame* user = nullptr;
  const Frame* source = nullptr;
  for (auto f = frames.rbegin(); f != frames.rend(); ++f) {
    if (!user && !in_torch(*f)) user = &*f;
    if (!source && !generated(*f)) source = &*f;
  }
  const Frame& innermost = source ? *source : frames.back();
  if (!user) return {short_path(innermost.file) + ":" + innermost.line, innermost.code};
  SourceLine line{short_path(user->file) + ":" + user->line, user->code};
  if (user != &innermost)
    line.text += "  (innermost: " + short_path(innermost.file) + ":" + innermost.line + ")";
  return line;
}

Pt2Sites::Pt2Sites() {
  modules_.emplace_back();
  module_ids_.emplace("", 0);
  sources_.emplace_back();  // id 0: unknown
}

uint32_t Pt2Sites::intern_in(std::vector<std::string>& names, std::map<std::string, uint32_t>& ids,
                             const std::string& key) {
  auto it = ids.find(key);
  if (it != ids.end()) return it->second;
  names.push_back(key);
  return ids.emplace(key, static_cast<uint32_t>(names.size() - 1)).first->second;
}

std::string Pt2Sites::module_of(const pt2::Node& node, const SiteContext& context) const {
  return node.nn_module_stack.empty() ? context.module : innermost_module_path(node.nn_module_stack);
}

SiteId Pt2Sites::intern(const pt2::Node& node, const SiteContext& context) {
  SiteId id;
  id.module = intern_in(modules_, module_ids_, module_of(node, context));
  if (node.stack_trace.empty()) return id;
  const std::string key = node.stack_trace + '\x1f' + context.within;
  auto it = source_ids_.find(key);
  if (it != source_ids_.end()) {
    id.source = it->second;
    return id;
  }
  sources_.push_back({node.stack_trace, context.within});
  id.source = source_ids_.emplace(key, static_cast<uint32_t>(sources_.size() - 1)).first->second;
  return id;
}

SiteId Pt2Sites::current() {
  const uint64_t packed = current_.load(std::memory_order_relaxed);
  return {static_cast<uint32_t>(packed >> 32), static_cast<uint32_t>(packed)};
}

std::string Pt2Sites::module_path(uint32_t module) const {
  return module < modules_.size() ? modules_[module] : "";
}

SourceLine Pt2Sites::source_line(uint32_t source) const {
  if (source == 0 || source >= sources_.size()) return {};
  SourceLine line = user_source_line(sources_[source].stack_trace);
  if (!sources_[source].within.empty()) line.text += "  (inside " + sources_[source].within + ")";
  return line;
}

}  // namespace layoutprof
