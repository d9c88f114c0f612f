// The JSON report: the Trace+Report serialised (schema_version 2: the op list in a compact
// encoding, described in the document itself), and read back (schema 1 too). Written by
// src/report/json_writer.cpp, read by json_dom_reader.cpp (a tree) and json_stream_reader.cpp
// (a file).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "report_model/report.h"

namespace layoutprof {

constexpr int kSchemaVersion = 2;

// Writes the report as it goes: no JSON tree of the op list is built.
void write_report_json(std::ostream& out, const Report& report);
std::string report_json_text(const Report& report);
// The same document as a tree (tests, small reports).
nlohmann::json report_to_json(const Report& report);
// The op list as a list of objects, one per op event, as schema 1 wrote it.
nlohmann::json op_list_json(const Report& report);
// Throws UsageError with a one-line reason for documents that are not a layoutprof report,
// among them any nested deeper than a report can be (the readers' one limit, far above the
// depth layoutprof writes).
Report report_from_json(const nlohmann::json& doc);
// Serialises; bytes that are not UTF-8 (a model path, a source line) become U+FFFD rather
// than failing the whole report.
std::string dump_json(const nlohmann::json& doc, int indent = 2);

// What a report read keeps of the op list. The text report, JSON and trace need it whole
// (full). The gate (check, diff, --baseline) aligns and names top-level ops only and compares
// copies, split points and modules, which carry their own tensors: top_level keeps the
// top-level op events, ids as in the file, without tensors (Report::top_level_only), and
// checks every op event as a full read does.
enum class OpDetail { full, top_level };

// Reads and parses a report file, schema 2 or 1, converting the op list as it streams by;
// errors name the file.
Report load_report_file(const std::string& path, OpDetail detail = OpDetail::full);
// The same from an open regular file (read from its current offset); `path` names it in errors.
Report read_report_fd(int fd, const std::string& path, OpDetail detail = OpDetail::full);

}  // namespace layoutprof
