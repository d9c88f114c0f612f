// Interned strings: op names, module paths, source lines, dtypes and devices repeat across
// hundreds of thousands of op events, so each distinct text is stored once (for the process's
// life, or its epoch's: core/pools.h) and an op event holds a pointer to it.
#pragma once

#include <cstring>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace layoutprof {

class Str {
 public:
  Str() : p_(empty_text()) {}
  Str(const std::string& s) : p_(intern(s)) {}  // NOLINT: implicit, like the std::string it replaces
  Str(const char* s) : p_(intern(s)) {}         // NOLINT
  Str(std::string_view s) : p_(intern(s)) {}    // NOLINT

  operator const std::string&() const { return *p_; }  // NOLINT
  const std::string& str() const { return *p_; }
  const char* c_str() const { return p_->c_str(); }
  bool empty() const { return p_->empty(); }
  size_t size() const { return p_->size(); }

  // Equal texts are one pointer: comparing two Strs compares addresses.
  friend bool operator==(Str a, Str b) { return a.p_ == b.p_; }
  friend bool operator!=(Str a, Str b) { return a.p_ != b.p_; }
  friend bool operator==(Str a, const std::string& b) { return *a.p_ == b; }
  friend bool operator==(const std::string& a, Str b) { return a == *b.p_; }
  friend bool operator!=(Str a, const std::string& b) { return *a.p_ != b; }
  friend bool operator!=(const std::string& a, Str b) { return a != *b.p_; }
  friend bool operator==(Str a, const char* b) { return std::strcmp(a.p_->c_str(), b) == 0; }
  friend bool operator!=(Str a, const char* b) { return !(a == b); }
  friend bool operator<(Str a, Str b) { return *a.p_ < *b.p_; }
  friend std::string operator+(const std::string& a, Str b) { return a + *b.p_; }
  friend std::string operator+(Str a, const std::string& b) { return *a.p_ + b; }
  friend std::string operator+(const char* a, Str b) { return a + *b.p_; }
  friend std::string operator+(Str a, const char* b) { return *a.p_ + b; }
  friend std::ostream& operator<<(std::ostream& os, Str s) { return os << *s.p_; }

  // Identifies the text within the process (for hashing).
  const void* id() const { return p_; }

 private:
  static const std::string* empty_text();
  static const std::string* intern(std::string_view s);
  const std::string* p_;
};

// nlohmann::json conversions, found by argument-dependent lookup (no json header needed here).
template <typename BasicJsonType>
void to_json(BasicJsonType& j, const Str& s) {
  j = s.str();
}
template <typename BasicJsonType>
void from_json(const BasicJsonType& j, Str& s) {
  s = Str(j.template get<std::string>());
}

}  // namespace layoutprof

template <>
struct std::hash<layoutprof::Str> {
  size_t operator()(layoutprof::Str s) const noexcept { return std::hash<const void*>()(s.id()); }
};
