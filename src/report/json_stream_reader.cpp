// The JSON report's file reader: nlohmann's SAX parser over a LineFeeder, converting the op
// list, the tensor table, copies and split points entry by entry as they stream by (lines the
// feeder passes by go through simdjson), and the rest through the DOM reader.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <limits>
#include <set>
#include <system_error>

#include "support/errors.h"
#include "report/json_report.h"
#include "report/json_fields.h"
#include "report/line_feeder.h"
#include "report/sj_value.h"

namespace layoutprof {

using nlohmann::json;

namespace {

using namespace report_json;

// An index into one of the op list's tables, as both row readers take it.
size_t row_index(int64_t v) {
  if (v < 0) throw std::out_of_range("an op row has a negative index");
  return static_cast<size_t>(v);
}

// One op row (schema 2) as the SAX parser saw it: scalars and brackets, with no JSON tree.
struct RowToken {
  enum Kind : uint8_t { integer, real, open, close } kind;
  int64_t i = 0;
  double d = 0;
};

// Reads op rows from their tokens, checking what op_from_row() checks.
class RowReader {
 public:
  explicit RowReader(const std::vector<RowToken>& t) : t_(t) {}
  bool at_close() const { return at_ < t_.size() && t_[at_].kind == RowToken::close; }
  bool done() const { return at_ >= t_.size(); }
  int64_t integer() {
    if (at_ >= t_.size() || t_[at_].kind != RowToken::integer)
      throw std::out_of_range("an op row holds something other than an integer where one belongs");
    return t_[at_++].i;
  }
  double number() {
    if (at_ < t_.size() && t_[at_].kind == RowToken::real) return t_[at_++].d;
    return static_cast<double>(integer());
  }
  size_t index() { return row_index(integer()); }
  void open() {
    if (at_ >= t_.size() || t_[at_].kind != RowToken::open) throw std::out_of_range("an op row is malformed");
    ++at_;
  }
  void close() {
    if (!at_close()) throw std::out_of_range("an op row is malformed");
    ++at_;
  }

 private:
  const std::vector<RowToken>& t_;
  size_t at_ = 0;
};

// The same reading off simdjson's tape (a row the file reader parsed alone), without tokens.
class DomRowReader {
 public:
  explicit DomRowReader(simdjson::dom::element row) {
    simdjson::dom::array items;
    if (row.get(items)) throw std::out_of_range("an op row is not a list");
    stack_.push_back({items.begin(), items.end()});
  }
  bool at_close() const { return stack_.size() > 1 && stack_.back().at == stack_.back().end; }
  bool done() const { return stack_.size() == 1 && stack_.back().at == stack_.back().end; }
  int64_t integer() {
    Level& l = stack_.back();
    if (l.at == l.end) throw std::out_of_range("an op row holds something other than an integer where one belongs");
    const simdjson::dom::element v = *l.at;
    int64_t i = -1;  // null: an absent parent, as the SAX layer writes it
    if (!v.is_null() && v.get(i))
      throw std::out_of_range(v.is_uint64() ? "an op row holds an integer past int64"
                                            : "an op row holds something other than an integer where one belongs");
    ++l.at;
    return i;
  }
  double number() {
    Level& l = stack_.back();
    if (l.at != l.end && (*l.at).is_double()) {
      const double d = double(*l.at);
      ++l.at;
      return d;
    }
    return static_cast<double>(integer());
  }
  size_t index() { return row_index(integer()); }
  void open() {
    Level& l = stack_.back();
    simdjson::dom::array inner;
    if (l.at == l.end || (*l.at).get(inner)) throw std::out_of_range("an op row is malformed");
    ++l.at;
    stack_.push_back({inner.begin(), inner.end()});
  }
  void close() {
    if (!at_close()) throw std::out_of_range("an op row is malformed");
    stack_.pop_back();
  }

 private:
  struct Level {
    simdjson::dom::array::iterator at, end;
  };
  std::vector<Level> stack_;
};

// The same conversion as op_from_row(), from tokens (RowReader) or off simdjson's tape
// (DomRowReader). `null` parents are -1; a row is [ ... ] without its own outer brackets.
template <typename Reader>
OpEvent op_from_reader(Reader r, const OpTablesIn& t, const OpSink& ops, TensorStore& store) {
  OpEvent op;
  op.id = op_index(ops.size());
  const int64_t parent = r.integer();
  if (parent >= op.id || parent < -1)
    throw std::out_of_range("ops[" + std::to_string(op.id) + "] has a bad id or parent");
  op.parent = static_cast<int32_t>(parent);
  op.depth = op.parent >= 0 ? ops.depth(op.parent) + 1 : 0;
  op.name = t.names.at(r.index());
  op.module = t.modules.at(r.index());
  const auto& source = t.sources.at(r.index());
  op.source = source.first;
  op.source_text = source.second;
  op.start_ns = r.integer();
  op.duration_ns = r.integer();
  const int64_t thread = r.integer();
  if (thread < 0 || thread > std::numeric_limits<uint32_t>::max()) throw std::out_of_range("an op's thread is out of range");
  op.thread = static_cast<uint32_t>(thread);
  op.failed = r.integer() != 0;
  thread_local std::vector<TensorInfo> list;
  for (TensorList* out : {&op.inputs, &op.outputs}) {
    list.clear();
    r.open();
    while (!r.at_close()) {
      const TensorInfo& entry = t.tensors.at(r.index());
      const auto storage = static_cast<uint64_t>(r.integer());
      if (!t.keep_op_tensors) continue;
      list.push_back(entry);
      list.back().storage = storage;
    }
    r.close();
    if (!list.empty()) *out = store.add(list);
  }
  if (!r.done()) {
    r.open();
    while (!r.at_close()) {
      if (op.counters.size() >= t.counter_names.size())
        throw std::out_of_range("an op's counters do not match run.counters");
      CounterValue v;
      v.raw = static_cast<uint64_t>(r.integer());
      v.scaled = r.number();
      if (!std::isfinite(v.scaled) || v.scaled < 0 || v.scaled > 1e300)
        throw std::out_of_range("counter '" + t.counter_names[op.counters.size()] + "' has an impossible value");
      v.multiplexed = r.integer() != 0;
      op.counters.push_back(v);
    }
    r.close();
    if (!op.counters.empty() && op.counters.size() != t.counter_names.size())
      throw std::out_of_range("an op's counters do not match run.counters");
  }
  if (!r.done()) {
    r.open();
    op.gpu_ns = r.integer();
    op.gpu_launches = r.integer();
    op.copy_gpu_ns = r.integer();
    r.open();
    while (!r.at_close()) op.kernels.push_back(t.kernels.at(r.index()));
    r.close();
    r.close();
  }
  if (!r.done()) throw std::out_of_range("an op row has the wrong length");
  return op;
}

OpEvent op_from_tokens(const std::vector<RowToken>& tokens, const OpTablesIn& t, const OpSink& ops,
                       TensorStore& store) {
  return op_from_reader(RowReader(tokens), t, ops, store);
}

// The file reader's conversions as the parser goes: which top-level key it is in, the run's
// counters and the op list's tables once read, and each entry converted as it closes (or,
// where the file has one entry per line, as the feeder passes its lines by). Depths count the
// containers open around an event, the document included (its keys are at depth 1).
class StreamConverter {
 public:
  StreamConverter(Streamed& streamed, std::streamoff size, LineFeeder& feeder)
      : s_(streamed), size_(size), feeder_(feeder) {
    tables_.keep_op_tensors = streamed.sink.detail() == OpDetail::full;
    streamed.tensor_table = &tables_.tensors;
  }
  void key(size_t depth, const std::string& k);
  void value(size_t depth, const json& v) {
    if (depth == 1 && top_ == Top::schema_version) check_version(v);
  }
  // An array opens: true when its entries are the op rows, to be read as tokens (rows convert
  // as they come once what they refer to has been read: the run's counters and the tables).
  bool array_opens(size_t depth);
  // A container closes: false when it was an entry that is now converted and leaves the
  // document, which keeps only what is converted at the end.
  bool object_closes(size_t depth, const json& v);
  bool array_closes(size_t depth, const json& v);
  void row(const std::vector<RowToken>& tokens) {
    s_.sink.add(op_from_tokens(tokens, tables_, s_.sink, *s_.report.tensors));
    s_.ops = true;
  }

 private:
  // The top-level key being read, compared as a number at every event.
  enum class Top { other, schema_version, run, summary, ops, copies, split_points };
  // A document whose keys were reordered (sorted by a JSON tool) has its rows before the
  // tables or the run: they stay in the tree instead, converted at the end.
  bool rows_ready() const { return run_read_ && tables_read_.size() == kOpTables.size(); }
  void reserve_ops(const json& summary);
  void arm_entries(size_t depth);

  Streamed& s_;
  std::streamoff size_;
  LineFeeder& feeder_;
  OpTablesIn tables_;
  Top top_ = Top::other;
  std::string ops_key_;
  bool ops_is_list_ = false;  // schema 1: "ops" is a list of objects
  bool run_read_ = false;
  std::set<std::string> tables_read_;
};

void StreamConverter::key(size_t depth, const std::string& k) {
  if (depth == 1)
    top_ = k == "schema_version" ? Top::schema_version
           : k == "run"          ? Top::run
           : k == "summary"      ? Top::summary
           : k == "ops"          ? Top::ops
           : k == "copies"       ? Top::copies
           : k == "split_points" ? Top::split_points
                                 : Top::other;
  if (depth == 2) ops_key_ = k;
}

// The op list is sized once (growing it by doubling would hold up to twice its size): to the
// summary's counts, bounded by what the file can hold (a row is over 20 bytes).
void StreamConverter::reserve_ops(const json& summary) {
  if (!summary.contains("ops") || !summary["ops"].is_number_unsigned() || !summary.contains("top_level_ops") ||
      !summary["top_level_ops"].is_number_unsigned())
    return;
  const auto most = static_cast<uint64_t>(size_ / 20);
  s_.sink.reserve(std::min<uint64_t>(as<uint64_t>(summary["ops"]), most),
                  std::min<uint64_t>(as<uint64_t>(summary["top_level_ops"]), most));
}

// The arrays of entries the feeder may take past the parser (line_feeder.h), each entry
// converted as the parser would have had it.
void StreamConverter::arm_entries(size_t depth) {
  if (depth == 2 && top_ == Top::ops && ops_key_ == "rows" && rows_ready())
    feeder_.arm([this](simdjson::dom::element row) {
      s_.sink.add(op_from_reader(DomRowReader(row), tables_, s_.sink, *s_.report.tensors));
      s_.ops = true;
    });
  if (depth == 2 && top_ == Top::ops && ops_key_ == "tensors" && !ops_is_list_)
    feeder_.arm([this](simdjson::dom::element t) { tables_.tensors.push_back(tensor_from(SjValue(t), false)); });
  if (depth == 1 && top_ == Top::copies && run_read_)
    feeder_.arm([this](simdjson::dom::element c) {
      s_.report.copies.push_back(copy_from(SjValue(c), tables_.counter_names));
      s_.copies = true;
    });
  if (depth == 1 && top_ == Top::split_points)
    feeder_.arm([this](simdjson::dom::element sp) {
      s_.report.split_points.push_back(split_from(SjValue(sp)));
      s_.split_points = true;
    });
}

bool StreamConverter::array_opens(size_t depth) {
  arm_entries(depth);
  if (depth == 1 && top_ == Top::ops) ops_is_list_ = true;
  return depth == 2 && top_ == Top::ops && ops_key_ == "rows" && rows_ready();
}

bool StreamConverter::object_closes(size_t depth, const json& v) {
  if (depth == 1 && top_ == Top::summary) reserve_ops(v);
  if (depth == 1 && top_ == Top::run) {
    tables_.counter_names = measured_names(run_from(v));
    run_read_ = true;
  }
  // Copies and split points, one entry at a time: the document keeps none of them.
  if (depth == 2 && top_ == Top::copies && run_read_) {
    s_.report.copies.push_back(copy_from(v, tables_.counter_names));
    s_.copies = true;
    return false;
  }
  if (depth == 2 && top_ == Top::split_points) {
    s_.report.split_points.push_back(split_from(v));
    s_.split_points = true;
    return false;
  }
  if (top_ != Top::ops) return true;
  if (ops_is_list_ && depth == 2 && run_read_) {
    s_.sink.add(op_from(v, tables_.counter_names, *s_.report.tensors));
    s_.ops = true;
    return false;
  }
  if (!ops_is_list_ && depth == 3 && ops_key_ == "tensors") {  // the tensor table, an entry at a time too
    tables_.tensors.push_back(tensor_from(v, false));
    return false;
  }
  return true;
}

bool StreamConverter::array_closes(size_t depth, const json& v) {
  if (top_ != Top::ops || ops_is_list_) return true;
  if (depth == 2 && ops_key_ != "rows") {
    read_table(tables_, ops_key_, v);
    if (std::find(kOpTables.begin(), kOpTables.end(), ops_key_) != kOpTables.end()) tables_read_.insert(ops_key_);
  }
  if (depth == 3 && ops_key_ == "rows" && rows_ready()) {
    s_.sink.add(op_from_row(v, tables_, s_.sink, *s_.report.tensors));
    s_.ops = true;
    return false;
  }
  return true;
}

// nlohmann's public SAX interface, building the document's tree with the converter's say on
// what stays in it: the op rows go past the tree, as tokens into a reused buffer (a row then
// costs no allocation of its own), and the entries the converter took leave it as they close.
// Every array and object opened counts against kMaxReportDepth, wherever it is and whichever
// path reads it, before it is built.
class ReportSax final : public nlohmann::json_sax<json> {
 public:
  ReportSax(json& doc, StreamConverter& convert) : doc_(doc), convert_(convert) {}

  bool null() override { return in_row() ? token({RowToken::integer, -1}) : value(nullptr); }
  bool boolean(bool v) override { return in_row() ? malformed() : value(v); }
  bool number_integer(number_integer_t v) override {
    return in_row() ? token({RowToken::integer, v}) : value(v);
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (!in_row()) return value(v);
    // Row values are indexes, ids and nanoseconds: past int64 is malformed.
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return malformed();
    return token({RowToken::integer, static_cast<int64_t>(v)});
  }
  bool number_float(number_float_t v, const string_t&) override {
    if (!in_row()) return value(v);
    RowToken t{RowToken::real};
    t.d = v;
    return token(t);
  }
  bool string(string_t& v) override { return in_row() ? malformed() : value(std::move(v)); }
  bool binary(binary_t& v) override { return in_row() ? malformed() : value(json::binary(std::move(v))); }
  bool start_object(std::size_t) override {
    if (in_row()) return malformed();
    open(json::object());
    return true;
  }
  bool key(string_t& k) override {
    slot_ = &(*stack_.back())[k];
    keys_.back() = k;
    convert_.key(stack_.size(), k);
    return true;
  }
  bool end_object() override { return close(false); }
  bool start_array(std::size_t) override;
  bool end_array() override;
  bool parse_error(std::size_t, const std::string&, const json::exception& ex) override {
    if (const auto* pe = dynamic_cast<const json::parse_error*>(&ex)) throw *pe;  // keep its type
    throw ex;
  }

 private:
  bool in_row() const { return rows_ > 0; }
  bool token(const RowToken& t) {
    tokens_.push_back(t);
    return true;
  }
  [[noreturn]] bool malformed() { throw std::out_of_range("an op row holds a string, object or boolean"); }
  static void deeper(size_t depth) {
    if (depth > kMaxReportDepth) refuse_too_deep();
  }
  json* place(json&& v);
  template <typename V>
  bool value(V&& v) {
    convert_.value(stack_.size(), *place(json(std::forward<V>(v))));
    return true;
  }
  void open(json&& container) {
    deeper(stack_.size() + 1);
    stack_.push_back(place(std::move(container)));
    keys_.emplace_back();
  }
  bool close(bool array);

  json& doc_;
  StreamConverter& convert_;
  std::vector<json*> stack_;        // the open containers, the document first
  std::vector<std::string> keys_;   // each open object's current key
  json* slot_ = nullptr;            // the value of the current key of the innermost object
  int rows_ = -1;  // -1: not in the rows array; 0: in it, between rows; 1: in a row; 2+: nested
  std::vector<RowToken> tokens_;
};

json* ReportSax::place(json&& v) {
  if (stack_.empty()) {
    doc_ = std::move(v);
    return &doc_;
  }
  json& parent = *stack_.back();
  if (!parent.is_array()) {
    *slot_ = std::move(v);
    return slot_;
  }
  auto& list = parent.get_ref<json::array_t&>();
  list.push_back(std::move(v));
  return &list.back();
}

bool ReportSax::close(bool array) {
  const size_t depth = stack_.size() - 1;
  const json& v = *stack_.back();
  const bool keep = array ? convert_.array_closes(depth, v) : convert_.object_closes(depth, v);
  stack_.pop_back();
  keys_.pop_back();
  if (keep || stack_.empty()) return true;
  json& parent = *stack_.back();  // the converted entry leaves it
  if (parent.is_array()) parent.get_ref<json::array_t&>().pop_back();
  else parent.erase(keys_.back());
  return true;
}

bool ReportSax::start_array(std::size_t) {
  if (rows_ >= 0) {  // inside the rows array: a row, or a list within one
    deeper(stack_.size() + static_cast<size_t>(rows_) + 1);
    if (rows_ > 0) tokens_.push_back({RowToken::open});
    ++rows_;
    return true;
  }
  const bool rows = convert_.array_opens(stack_.size());
  open(json::array());
  if (rows) rows_ = 0;
  return true;
}

bool ReportSax::end_array() {
  if (rows_ > 0) {
    if (--rows_ > 0) {
      tokens_.push_back({RowToken::close});
    } else {
      convert_.row(tokens_);
      tokens_.clear();
    }
    return true;
  }
  rows_ = -1;  // the rows array (or any other) closes
  return close(true);
}

// The one line a read that failed while parsing gets, from what is being thrown.
[[noreturn]] void rethrow_parse_failure() {
  try {
    throw;
  } catch (const json::parse_error& e) {
    throw UsageError("is not valid JSON: " + first_line(e.what()));
  } catch (const JsonSyntaxError& e) {
    throw UsageError(std::string("is not valid JSON: ") + e.what());
  } catch (const std::system_error& e) {
    throw UsageError(std::string("cannot be read: ") + e.what());
  } catch (const UsageError&) {
    throw;
  } catch (const json::exception& e) {
    throw UsageError("not a valid layoutprof report: " + first_line(e.what()));
  } catch (const std::logic_error& e) {
    throw UsageError("not a valid layoutprof report: " + first_line(e.what()));
  }
}

// Parses a report with the op list converted as it streams by: each row (or, in schema 1,
// each op object) becomes an OpEvent and leaves the document, so memory holds the Report
// and never the op list's JSON tree.
Report parse_report_streaming(int fd, std::streamoff size, OpDetail detail) {
  Streamed streamed(detail);
  // An entry the feeder passes by sits inside 2 containers (a copy) or 3 (an op row): simdjson
  // allows it kMaxReportDepth - 3 levels of its own, and one deeper goes to nlohmann's parser,
  // which counts it exactly.
  LineFeeder feeder(fd, LineFeeder::kBlock, kMaxReportDepth - 3);
  StreamConverter convert(streamed, size, feeder);
  json doc;
  ReportSax sax(doc, convert);
  try {
    json::sax_parse(feeder.begin(), feeder.end(), &sax);
  } catch (...) {
    rethrow_parse_failure();
  }
  return report_from_doc(doc, &streamed);
}

}  // namespace

Report load_report_file(const std::string& path, OpDetail detail) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw UsageError("cannot open report '" + path + "': " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  return read_report_fd(fd, path, detail);
}

Report read_report_fd(int fd, const std::string& path, OpDetail detail) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    throw UsageError("cannot read report '" + path + "': not a regular file");
  try {
    return parse_report_streaming(fd, static_cast<std::streamoff>(st.st_size), detail);
  } catch (const UsageError& e) {
    const std::string why = e.what();
    throw UsageError("report '" + path + "'" + (why.rfind("is not", 0) == 0 ? " " : ": ") + why);
  }
}

}  // namespace layoutprof
