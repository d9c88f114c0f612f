// Writing JSON text straight into a buffer, for the report's and the trace's lists that grow
// with the op count (internal to the report layer): building an nlohmann tree per entry costs
// more than the rest of the report together.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstring>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/str.h"

namespace layoutprof {

// nlohmann's compact text of a value (invalid UTF-8 replaced, never thrown).
inline std::string dump_compact(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A growing text buffer written a few bytes at a time: the report's lists are millions of
// small pieces, where std::string's appends (a call and a capacity check each) cost more than
// the text itself.
class TextBuf {
 public:
  TextBuf() : text_(256, '\0') {}
  // Room for n more bytes at the end; commit(p) sets the end to p.
  char* room(size_t n) {
    if (size_ + n > text_.size()) text_.resize(std::max(text_.size() * 2, size_ + n));
    return text_.data() + size_;
  }
  void commit(char* end) { size_ = static_cast<size_t>(end - text_.data()); }
  TextBuf& operator+=(char c) {
    *room(1) = c;
    ++size_;
    return *this;
  }
  TextBuf& operator+=(std::string_view v) {
    std::memcpy(room(v.size()), v.data(), v.size());
    size_ += v.size();
    return *this;
  }
  void clear() { size_ = 0; }
  size_t size() const { return size_; }
  std::string_view view() const { return {text_.data(), size_}; }
  void write_to(std::ostream& out) const { out.write(text_.data(), static_cast<std::streamsize>(size_)); }

 private:
  std::string text_;
  size_t size_ = 0;
};

inline void put_int(TextBuf& out, int64_t v) {
  char* p = out.room(24);
  out.commit(std::to_chars(p, p + 24, v).ptr);
}

inline void put_uint(TextBuf& out, uint64_t v) {
  char* p = out.room(24);
  out.commit(std::to_chars(p, p + 24, v).ptr);
}

inline void put_double(TextBuf& out, double v) { out += nlohmann::json(v).dump(); }

// Writes JSON text straight into a string, for the lists that grow with the op count
// (copies, split points): building an nlohmann tree per entry costs more than the rest of the
// report together. Keys are written in nlohmann's order (sorted), so the text is what
// dump_compact() of the same tree would be.
class JsonOut {
 public:
  explicit JsonOut(TextBuf& out) : out_(out) {}
  template <size_t N>
  JsonOut& key(const char (&k)[N]) {
    comma();
    out_ += '"';
    out_ += std::string_view(k, N - 1);
    out_ += "\":";
    fresh_ = true;
    return *this;
  }
  JsonOut& begin(char c) {
    comma();
    out_ += c;
    fresh_ = true;
    return *this;
  }
  JsonOut& end(char c) {
    out_ += c;
    fresh_ = false;
    return *this;
  }
  JsonOut& num(int64_t v) {
    comma();
    put_int(out_, v);
    return *this;
  }
  JsonOut& num_or_null(int64_t v) { return v < 0 ? raw("null") : num(v); }
  JsonOut& real(double v) {
    comma();
    put_double(out_, v);
    return *this;
  }
  JsonOut& boolean(bool v) { return raw(v ? "true" : "false"); }
  JsonOut& str(const std::string& v) { return text(v); }
  JsonOut& str(const char* v) { return text(v); }
  JsonOut& str(Str v) { return text(v.str()); }
  JsonOut& text(std::string_view v) {
    comma();
    bool plain = true;
    for (unsigned char ch : v)
      if (ch < 0x20 || ch == '"' || ch == '\\' || ch >= 0x80) plain = false;
    if (plain) {
      out_ += '"';
      out_ += v;
      out_ += '"';
    } else {
      out_ += dump_compact(nlohmann::json(std::string(v)));
    }
    return *this;
  }
  JsonOut& unum(uint64_t v) {
    comma();
    put_uint(out_, v);
    return *this;
  }
  template <typename List>  // of integers: std::vector or CompactVector
  JsonOut& nums(const List& v) {
    begin('[');
    for (auto x : v) num(static_cast<int64_t>(x));
    return end(']');
  }
  template <typename List>  // of std::string or Str
  JsonOut& strs(const List& v) {
    begin('[');
    for (const auto& x : v) str(x);
    return end(']');
  }
  JsonOut& raw(std::string_view text) {
    comma();
    out_ += text;
    return *this;
  }

 private:
  void comma() {
    if (!fresh_) out_ += ',';
    fresh_ = false;
  }
  TextBuf& out_;
  bool fresh_ = true;
};

}  // namespace layoutprof
