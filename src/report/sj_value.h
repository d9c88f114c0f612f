// A simdjson DOM element with the few calls of nlohmann::json that the report's readers make
// (at, contains, is_null, empty, size, iteration, and get<T> through as<T>), so that one
// definition of each reader (tensor_from, copy_from, ...) serves both parsers. Stricter than
// nlohmann where nlohmann converts silently: an integer field holds an integer in range.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/str.h"

namespace layoutprof {

class SjValue {
 public:
  explicit SjValue(simdjson::dom::element e) : e_(e) {}

  SjValue at(const char* key) const {
    simdjson::dom::element v;
    if (!e_.is_object() || e_.at_key(key).get(v)) throw std::out_of_range(std::string("no '") + key + "' in an entry");
    return SjValue(v);
  }
  SjValue at(const std::string& key) const { return at(key.c_str()); }
  bool contains(const char* key) const {
    simdjson::dom::element v;
    return e_.is_object() && !e_.at_key(key).get(v);
  }
  bool is_null() const { return e_.is_null(); }
  bool is_array() const { return e_.is_array(); }
  size_t size() const {
    if (e_.is_array()) return simdjson::dom::array(e_).size();
    if (e_.is_object()) return simdjson::dom::object(e_).size();
    return is_null() ? 0 : 1;
  }
  bool empty() const { return size() == 0; }

  class iterator {
   public:
    explicit iterator(simdjson::dom::array::iterator it) : it_(it) {}
    SjValue operator*() const { return SjValue(*it_); }
    iterator& operator++() {
      ++it_;
      return *this;
    }
    bool operator!=(const iterator& o) const { return it_ != o.it_; }

   private:
    simdjson::dom::array::iterator it_;
  };
  iterator begin() const { return iterator(array().begin()); }
  iterator end() const { return iterator(array().end()); }

  template <typename T>
  T get() const {
    if constexpr (std::is_same_v<T, bool>) {
      bool b = false;
      if (e_.get(b)) wrong("a boolean");
      return b;
    } else if constexpr (std::is_integral_v<T>) {
      return checked<T>();
    } else if constexpr (std::is_floating_point_v<T>) {
      double d = 0;
      if (e_.get(d)) wrong("a number");
      return static_cast<T>(d);
    } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, Str>) {
      std::string_view s;
      if (e_.get(s)) wrong("a string");
      return T(std::string(s));
    } else {  // std::vector<...>
      T out;
      for (SjValue v : *this) out.push_back(v.get<typename T::value_type>());
      return out;
    }
  }

 private:
  simdjson::dom::array array() const {
    simdjson::dom::array a;
    if (e_.get(a)) wrong("an array");
    return a;
  }
  template <typename T>
  T checked() const {
    int64_t v = 0;
    uint64_t u = 0;
    if (!e_.get(v)) {
      if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          (v > 0 && static_cast<uint64_t>(v) > static_cast<uint64_t>(std::numeric_limits<T>::max())))
        throw std::out_of_range("an integer is out of range");
      return static_cast<T>(v);
    }
    if (!e_.get(u)) {  // past int64
      if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) throw std::out_of_range("an integer is out of range");
      return static_cast<T>(u);
    }
    wrong("an integer");
  }
  [[noreturn]] static void wrong(const char* what) {
    throw std::invalid_argument(std::string("a value is not ") + what + " where one belongs");
  }

  simdjson::dom::element e_;
};

}  // namespace layoutprof
