// The what-if's figures (report_model/what_if.h) as the JSON report holds them, and back: the
// run's block ("what_if": rounds, threads, device, control, budget, the baseline's recorded
// call, and the variants that apply several causes' fixes together, "together"), and each
// cause's own variants ("causes[i].what_if"). The Python front end hands its measurement over
// as the block with every variant in one list ("variants"), read by what_if_from_text().
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "report_model/report.h"

namespace layoutprof {

nlohmann::json what_if_json(const WhatIfRun& w);
// One variant's rounds against its baseline (also compare-formats' pairs and control).
nlohmann::json rounds_json(const PairedRounds& p);
// The variants that apply cause `cause`'s fixes alone.
nlohmann::json cause_what_if_json(const WhatIfRun& w, int64_t cause);
// The block, with the variants in its "variants" and "together" lists; a cause's own ones are
// added by what_if_variant_from(). Throws std::out_of_range or a json error on what is not one;
// cause indices must be below `causes`.
WhatIfRun what_if_from(const nlohmann::json& block, int64_t causes);
WhatIfVariant what_if_variant_from(const nlohmann::json& j, int64_t causes);
// The same from JSON text (for code compiled with LibTorch's include path: compiled_json.h).
WhatIfRun what_if_from_text(const std::string& text, int64_t causes);

}  // namespace layoutprof
