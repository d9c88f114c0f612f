// ModuleSites: interned names, and one stack of module ids per thread.
#include "eager/module_sites.h"

#include <iterator>
#include <map>
#include <mutex>
#include <vector>

#include "core/id_table.h"
#include "core/pools.h"

namespace layoutprof {

namespace {

struct Interned {
  mutable std::mutex mutex;
  IdTable<std::string> modules;  // id 0: the outermost module, or none
  IdTable<SourceLine> sources;   // id 0: not known
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> joined;  // (outer, nested) → module id

  Interned() {
    modules.intern("", "", false);
    sources.intern("", SourceLine{}, false);
  }
};

Interned& interned() {
  static Interned* names = new Interned;  // outlives every thread's last callback
  return *names;
}

// The names made inside a recording go as the pools' epoch ends.
void forget_epoch() {
  Interned& n = interned();
  std::lock_guard<std::mutex> lock(n.mutex);
  n.modules.forget_epoch();
  n.sources.forget_epoch();
  for (auto it = n.joined.begin(); it != n.joined.end();) {
    const bool epochs = IdTable<std::string>::is_epochs(it->first.first) ||
                        IdTable<std::string>::is_epochs(it->first.second) || IdTable<std::string>::is_epochs(it->second);
    it = epochs ? n.joined.erase(it) : std::next(it);
  }
}

bool in_epoch() { return pool_leases() > 0; }

struct ThreadSites {
  std::vector<uint32_t> modules;
};

thread_local ThreadSites this_thread;

}  // namespace

uint32_t ModuleSites::module_id(const std::string& path) {
  Interned& n = interned();
  std::lock_guard<std::mutex> lock(n.mutex);
  return n.modules.intern(path, path, in_epoch());
}

uint32_t ModuleSites::source_id(const std::string& location, const std::string& text) {
  Interned& n = interned();
  std::lock_guard<std::mutex> lock(n.mutex);
  return n.sources.intern(location, SourceLine{location, text}, in_epoch());
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
    const std::string* o = n.modules.find(outer == outside_ ? 0 : outer);
    const std::string* in = n.modules.find(nested);
    if (!o || !in) return outer;  // an id of an ended recording's (a call open across its end)
    path = o->empty() ? *in : in->empty() ? *o : *o + "." + *in;
  }
  const uint32_t id = module_id(path);
  std::lock_guard<std::mutex> lock(n.mutex);
  n.joined[{outer, nested}] = id;
  return id;
}

ModuleSites::ModuleSites() {
  Interned& n = interned();
  {
    std::lock_guard<std::mutex> lock(n.mutex);
    outside_ = n.modules.intern(kOutsideTheModel, kOutsideTheModel, false);  // for good
  }
  on_pools_released(&forget_epoch);  // outside the lock: the hook runs under the pools' own
}

size_t ModuleSites::names() const {
  Interned& n = interned();
  std::lock_guard<std::mutex> lock(n.mutex);
  return n.modules.size() + n.sources.size() + n.joined.size();
}

std::string ModuleSites::module_path(uint32_t module) const {
  Interned& n = interned();
  std::lock_guard<std::mutex> lock(n.mutex);
  const std::string* path = n.modules.find(module);
  return path ? *path : std::string();
}

SourceLine ModuleSites::source_line(uint32_t source) const {
  Interned& n = interned();
  std::lock_guard<std::mutex> lock(n.mutex);
  const SourceLine* line = n.sources.find(source);
  return line ? *line : SourceLine{};
}

ModuleSites& module_sites() {
  static ModuleSites sites;
  return sites;
}

}  // namespace layoutprof
