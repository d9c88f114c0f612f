// The JSON of a Comparison (internal to the report layer): the json reporter writes it, and the
// HTML page of a comparison embeds it.
#pragma once

#include <nlohmann/json.hpp>

#include "gate/gate.h"

namespace layoutprof {

nlohmann::json comparison_json(const Comparison& c);

}  // namespace layoutprof
