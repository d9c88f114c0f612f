// Where an op of the user's eager model comes from: the module whose forward() is running on
// the op's thread, as the front end's module hooks say (enter as a module call starts, leave
// as it returns), and the user's source line, which the front end's probe reads from the
// interpreter's stack as the op starts. The recorder's OpSiteSource for in-process recording.
// Torch-free and Python-free.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "record/op_sites.h"

namespace layoutprof {

// The module row of the ops that run outside every module's forward() (a loss, an optimizer
// step): their own row, not the model's.
inline constexpr const char* kOutsideTheModel = "(outside the model)";

class ModuleSites : public OpSiteSource {
 public:
  ModuleSites();
  // Ids are interned once, for good where no recording is under way, else until the pools'
  // epoch ends (core/pools.h, eager/id_table.h): a process that records many models keeps
  // none of their names.
  // The id of a module path ("layer1.0.conv1"; "" for the outermost module).
  uint32_t module_id(const std::string& path);
  // The id of a source line ("file.py:12" and its text).
  uint32_t source_id(const std::string& location, const std::string& text);
  // The calling thread enters, or leaves, the forward() of module `id`.
  void enter(uint32_t id);
  void leave();
  // Asked, as each recorded top-level op starts on its thread, for the id of the user's source
  // line running there (0: none known). Null: no lines. A line of compiled code may also name
  // the module its FX node belongs to, relative to the module running the compiled code: it
  // sets `*nested` to that path's module_id() (left alone otherwise).
  static constexpr uint32_t kNoModule = ~0u;
  using SourceProbe = uint32_t (*)(uint32_t* nested);
  void set_source_probe(SourceProbe probe) { probe_ = probe; }
  // Forgets every thread's stack (a new recording starts from the top).
  void reset_thread();

  // The module paths, source lines and joined paths held now.
  size_t names() const;

  SiteId current() override;
  std::string module_path(uint32_t module) const override;
  SourceLine source_line(uint32_t source) const override;

 private:
  uint32_t joined(uint32_t outer, uint32_t nested);

  uint32_t outside_;
  SourceProbe probe_ = nullptr;
};

// The process's one source: module hooks see every module, as the recorder sees every op.
ModuleSites& module_sites();

}  // namespace layoutprof
