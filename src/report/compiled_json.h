// torch.compile's section of a report (report_model/compiled.h) as the JSON report's "compiled"
// object holds it, and back. The Python front end writes the same object (layoutprof's
// _compile_report.py), which the in-process session reads with compiled_from().
#pragma once

#include <nlohmann/json.hpp>

#include "report_model/report.h"

namespace layoutprof {

nlohmann::json compiled_json(const CompiledRun& c);
// Throws std::out_of_range or a json error on an object that is not one.
CompiledRun compiled_from(const nlohmann::json& j);
// The same from the JSON text. For code compiled with LibTorch's include path: a torch may
// bring a nlohmann/json of another version, whose json type must not cross into this layer's
// (a link error at best: its ABI namespace, json_abi_v3_11_N, differs).
CompiledRun compiled_from_text(const std::string& text);

}  // namespace layoutprof
