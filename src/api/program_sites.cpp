// The sites of a C++ program's ops: TorchScript frames, else the innermost Scope.
#include "api/program_sites.h"

#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/pools.h"
#include "eager/module_sites.h"
#include "runner/torchscript_sites.h"
#include "support/format.h"

namespace layoutprof {

namespace {

// A scope open on this thread: its module id in module_sites(), its line's source id.
struct OpenScope {
  uint32_t module;
  uint32_t source;
};

thread_local std::vector<OpenScope> open_scopes;

// Line `line` (1-based) of `file`, trimmed; "" when it cannot be read.
std::string line_text(const char* file, int line) {
  std::ifstream in(file);
  std::string text;
  for (int i = 0; i < line && std::getline(in, text); ++i) {
  }
  return in ? trimmed(text) : "";
}

// Interned once per distinct (path, file, line) and pools' epoch (an ended recording's ids are
// gone from module_sites()): a scope in a loop costs a map look-up.
struct ScopeIds {
  std::mutex mutex;
  std::map<std::pair<uint32_t, std::string>, uint32_t> modules;  // (outer, name) → module id
  std::map<std::pair<const char*, int>, uint32_t> sources;       // (file, line) → source id
  EpochStamp epoch;

  void forget_if_stale() {  // under the lock
    if (!epoch.ended()) return;
    modules.clear();
    sources.clear();
  }
};

ScopeIds& scope_ids() {
  static ScopeIds* ids = new ScopeIds;  // outlives every thread's last scope
  return *ids;
}

uint32_t scope_module(uint32_t outer, const char* name) {
  ScopeIds& ids = scope_ids();
  std::lock_guard<std::mutex> lock(ids.mutex);
  ids.forget_if_stale();
  auto key = std::make_pair(outer, std::string(name));
  auto it = ids.modules.find(key);
  if (it != ids.modules.end()) return it->second;
  const std::string path = outer == 0 ? key.second : module_sites().module_path(outer) + "." + key.second;
  return ids.modules.emplace(std::move(key), module_sites().module_id(path)).first->second;
}

uint32_t scope_source(const char* name, const char* file, int line) {
  ScopeIds& ids = scope_ids();
  std::lock_guard<std::mutex> lock(ids.mutex);
  ids.forget_if_stale();
  auto it = ids.sources.find({file, line});
  if (it != ids.sources.end()) return it->second;
  // The line's text where the source file is readable from here (a relative path is the
  // compiler's, not the program's), else what the scope says.
  std::string text = line_text(file, line);
  if (text.empty()) text = std::string("layoutprof::Scope(\"") + name + "\")";
  const uint32_t id = module_sites().source_id(std::string(file) + ":" + std::to_string(line), text);
  return ids.sources.emplace(std::make_pair(file, line), id).first->second;
}

// The TorchScript sites, and their ids as module_sites() interns them.
struct Interpreted {
  TorchScriptSites sites;
  std::mutex mutex;
  std::vector<uint32_t> modules;  // by TorchScriptSites id; kNoModule: not yet interned
  std::vector<uint32_t> sources;
  EpochStamp epoch;  // as ScopeIds'

  // The id `ids[id]` holds, interned by `intern` the first time.
  template <typename Intern>
  uint32_t mapped(std::vector<uint32_t>& ids, uint32_t id, Intern intern) {
    std::lock_guard<std::mutex> lock(mutex);
    if (epoch.ended()) {
      modules.clear();
      sources.clear();
    }
    if (id >= ids.size()) ids.resize(id + 1, ModuleSites::kNoModule);
    if (ids[id] == ModuleSites::kNoModule) ids[id] = intern();
    return ids[id];
  }
};

Interpreted& interpreted() {
  static Interpreted* sites = new Interpreted;
  return *sites;
}

}  // namespace

void enter_scope(const char* name, const char* file, int line) {
  const uint32_t outer = open_scopes.empty() ? 0 : open_scopes.back().module;
  const OpenScope scope{scope_module(outer, name), scope_source(name, file, line)};
  open_scopes.push_back(scope);
  module_sites().enter(scope.module);
}

void leave_scope() {
  if (open_scopes.empty()) return;
  open_scopes.pop_back();
  module_sites().leave();
}

uint32_t program_source(uint32_t* nested) {
  Interpreted& ts = interpreted();
  SiteId id;
  if (!ts.sites.running(id)) return open_scopes.empty() ? 0 : open_scopes.back().source;
  *nested = ts.mapped(ts.modules, id.module, [&] { return module_sites().module_id(ts.sites.module_path(id.module)); });
  if (id.source == 0) return 0;
  return ts.mapped(ts.sources, id.source, [&] {
    const SourceLine line = ts.sites.source_line(id.source);
    return module_sites().source_id(line.location, line.text);
  });
}

}  // namespace layoutprof
