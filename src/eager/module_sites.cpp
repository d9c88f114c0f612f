// ModuleSites: interned names, and one stack of module ids per thread.
#include "eager/module_sites.h"

#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace layoutprof {

namespace {

struct Interned {
  mutable std::mutex mutex;
  std::vector<std::string> modules{""};  // id 0: the outermost module, or none
  std::unordered_map<std::string, uint32_t> module_ids{{"", 0}};
  std::vector<SourceLine> sources{SourceLine{}};  // id 0: not known
  std::unordered_map<std::string, uint32_t> source_ids;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> joined;  // (outer, nested) → module id
};

Interned& interned() {
  static Interned* names = new Interned;  // outlives every thread's last callback
  return *names;
}

struct ThreadSites {
  std::vector<uint32_t> modules;
};

thread_local ThreadSites this_thread;

}  // namespace

uint32_t ModuleSites::module_id(const std::string& path) {
  Interned& n = interned();
  std::lock_guard<std::mutex> lock(n.mutex);
  auto [it, added] = n.module_ids.emplace(path, static_cast<uint32_t>(n.modules.size()));
  if (added) n.modules.push_back(path);
  return it->second;
}

uint32_t ModuleSites::source_id(const std::string& location, const std::string& text) {
  Interned& n = interned();
  std::lock_guard<std::mutex> lock(n.mutex);
  auto [it, added] = n.source_ids.emplace(location, static_cast<uint32_t>(n.sources.size()));
  if (added) n.sources.push_back(SourceLine{location, text});
  return it->second;
}

void ModuleSites::enter(uint32_t id) { this_thread.modules.push_back(id); }

void ModuleSites::leave() {
  if (!this_thread.modules.empty()) this_thread.modules.pop_back();
}

void ModuleSites::reset_thread() { this_thread = ThreadSites{}; }

SiteId ModuleSites::current() {
  const ThreadSites& t = this_thread;
  SiteId site{t.modules.empty() ? outside_ : t.modules.back(), 0u};
  if (!probe_) return site;
  uint32_t nested = kNoModule;
  site.source = probe_(&nested);
  if (nested != kNoModule) site.module = joined(site.module, nested);
  return site;
}

// The path of module `nested` inside module `outer` ("backbone" and "units.0.a":
// "backbone.units.0.a"), interned once per pair.
uint32_t ModuleSites::joined(uint32_t outer, uint32_t nested) {
  Interned& n = interned();
  std::string path;
  {
    std::lock_guard<std::mutex> lock(n.mutex);
    auto it = n.joined.find({outer, nested});
    if (it != n.joined.end()) return it->second;
    const std::string& o = outer == outside_ ? n.modules[0] : n.modules[outer];
    path = o.empty() ? n.modules[nested] : n.modules[nested].empty() ? o : o + "." + n.modules[nested];
  }
  const uint32_t id = module_id(path);
  std::lock_guard<std::mutex> lock(n.mutex);
  n.joined[{outer, nested}] = id;
  return id;
}

ModuleSites::ModuleSites() : outside_(module_id(kOutsideTheModel)) {}

std::string ModuleSites::module_path(uint32_t module) const {
  Interned& n = interned();
  std::lock_guard<std::mutex> lock(n.mutex);
  return module < n.modules.size() ? n.modules[module] : std::string();
}

SourceLine ModuleSites::source_line(uint32_t source) const {
  Interned& n = interned();
  std::lock_guard<std::mutex> lock(n.mutex);
  return source < n.sources.size() ? n.sources[source] : SourceLine{};
}

ModuleSites& module_sites() {
  static ModuleSites sites;
  return sites;
}

}  // namespace layoutprof
