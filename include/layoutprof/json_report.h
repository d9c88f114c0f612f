// The JSON report: the Trace+Report serialised (schema_version 1), and read back.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "layoutprof/report.h"

namespace layoutprof {

constexpr int kSchemaVersion = 1;

nlohmann::json report_to_json(const Report& report);
// Throws UsageError with a one-line reason for documents that are not a layoutprof report.
Report report_from_json(const nlohmann::json& doc);
// Serialises; bytes that are not UTF-8 (a model path, a source line) become U+FFFD rather
// than failing the whole report.
std::string dump_json(const nlohmann::json& doc, int indent = 2);

// Reads and parses a report file; errors name the file.
Report load_report_file(const std::string& path);

}  // namespace layoutprof
