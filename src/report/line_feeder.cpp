#include "report/line_feeder.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <system_error>

namespace layoutprof {

namespace {
bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
}  // namespace

LineFeeder::LineFeeder(int fd, size_t block, size_t max_entry_depth)
    : fd_(fd), buf_(block + simdjson::SIMDJSON_PADDING), cap_(block) {
  // simdjson's depth bound counts an innermost empty array or object one level short of the
  // others (2 allows [[]] but not [[1]]): as the bound, it never passes an entry deeper than
  // max_entry_depth. It stays when simdjson grows the parser for a longer line.
  if (parser_.allocate(simdjson::dom::MINIMAL_DOCUMENT_CAPACITY, max_entry_depth)) throw std::bad_alloc();
}

bool LineFeeder::fill() {
  if (eof_) return false;
  if (pos_ > 0) {
    std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    consumed_ += pos_;
    pos_ = 0;
  }
  if (end_ == cap_) return false;
  ssize_t n;
  do {
    n = ::read(fd_, buf_.data() + end_, cap_ - end_);
  } while (n < 0 && errno == EINTR);
  if (n < 0) throw std::system_error(errno, std::generic_category(), "reading the report");
  if (n == 0) {
    eof_ = true;
    return false;
  }
  end_ += static_cast<size_t>(n);
  return true;
}

// Offsets here are relative to pos_, which fill() moves to 0 without moving what follows it.
bool LineFeeder::line_at(size_t& from, size_t* line_end) {
  size_t at = from;
  for (;;) {
    const char* start = buf_.data() + pos_ + at;
    if (const void* nl = std::memchr(start, '\n', end_ - pos_ - at)) {
      *line_end = static_cast<size_t>(static_cast<const char*>(nl) - (buf_.data() + pos_));
      return true;
    }
    at = end_ - pos_;
    if (!fill()) {
      if (!eof_) return false;  // longer than the block
      *line_end = end_ - pos_;
      return true;
    }
  }
}

void LineFeeder::arm(Entry entry) {
  size_t from = 0, line_end = 0;
  if (!line_at(from, &line_end)) return;
  for (size_t i = 0; i < line_end; ++i)
    if (!blank(buf_[pos_ + i])) return;  // the first entry shares the bracket's line
  entry_ = std::move(entry);
}

bool LineFeeder::next_nonblank_starts_with_bracket(size_t from) {
  for (;;) {
    size_t line_end = 0;
    if (!line_at(from, &line_end)) return false;
    for (size_t i = from; i < line_end; ++i)
      if (!blank(buf_[pos_ + i])) return buf_[pos_ + i] == ']';
    if (pos_ + line_end >= end_) return false;  // the end of the file
    from = line_end + 1;
  }
}

void LineFeeder::pass_lines() {
  bool after_comma = false;  // the last entry passed ended with a comma
  for (;;) {
    size_t from = 0, line_end = 0;
    if (!line_at(from, &line_end)) break;
    const bool newline = pos_ + line_end < end_;
    size_t b = 0, e = line_end;
    while (b < e && blank(buf_[pos_ + b])) ++b;
    while (e > b && blank(buf_[pos_ + e - 1])) --e;
    if (b == e) {  // a blank line
      if (!newline) break;
      pos_ += line_end + 1;
      continue;
    }
    if (buf_[pos_ + b] == ']') {
      if (after_comma) throw JsonSyntaxError("a comma before the ']' that closes an array");
      break;
    }
    const bool comma = buf_[pos_ + e - 1] == ',';
    if (comma)
      for (--e; e > b && blank(buf_[pos_ + e - 1]);) --e;
    // The last entry has no comma: the array must close on the next line that says anything.
    if (!comma && !next_nonblank_starts_with_bracket(line_end + 1)) break;
    simdjson::dom::element entry;
    if (b == e || parser_.parse(buf_.data() + pos_ + b, e - b, false).get(entry)) break;
    entry_(entry);
    ++fast_entries_;
    after_comma = comma;
    pos_ += line_end + (newline ? 1 : 0);
  }
  entry_ = nullptr;  // what follows goes through the parser
}

}  // namespace layoutprof
