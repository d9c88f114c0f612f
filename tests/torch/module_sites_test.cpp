// ModuleSites: the module and line of each op the eager front end records, and the module path
// a line of compiled code names inside the module that runs the compiled code.
#include "eager/module_sites.h"

#include <gtest/gtest.h>

namespace layoutprof {
namespace {

uint32_t g_nested = ModuleSites::kNoModule;  // what the probe below names, if anything
uint32_t g_source = 0;

uint32_t probe(uint32_t* nested) {
  if (g_nested != ModuleSites::kNoModule) *nested = g_nested;
  return g_source;
}

TEST(ModuleSites, ALineOfCompiledCodeNamesItsModuleInsideTheOneRunningIt) {
  ModuleSites sites;
  sites.reset_thread();
  sites.set_source_probe(&probe);
  g_source = sites.source_id("model.py:63", "x = self.a(x)");
  sites.enter(sites.module_id("backbone"));
  g_nested = ModuleSites::kNoModule;
  EXPECT_EQ(sites.module_path(sites.current().module), "backbone") << "no module named: the running one";
  g_nested = sites.module_id("units.0.a");
  SiteId site = sites.current();
  EXPECT_EQ(sites.module_path(site.module), "backbone.units.0.a");
  EXPECT_EQ(sites.source_line(site.source).location, "model.py:63");
  EXPECT_EQ(sites.current().module, site.module) << "the joined path is interned once";
  sites.leave();
  sites.enter(sites.module_id(""));  // the compiled model is the profiled one
  EXPECT_EQ(sites.module_path(sites.current().module), "units.0.a");
  sites.leave();
  g_nested = ModuleSites::kNoModule;
  sites.set_source_probe(nullptr);
  sites.reset_thread();
}

}  // namespace
}  // namespace layoutprof
