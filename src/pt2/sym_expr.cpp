#include "pt2/sym_expr.h"

#include <cctype>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace layoutprof::pt2 {

namespace {

// An exact rational; sympy keeps sizes exact (2*s/2 stays an integer).
struct Q {
  int64_t num = 0, den = 1;
};

struct Invalid {};  // the expression cannot be evaluated here

int64_t checked(__int128 v) {
  if (v > INT64_MAX || v < INT64_MIN) throw Invalid{};
  return static_cast<int64_t>(v);
}

Q normal(__int128 num, __int128 den) {
  if (den == 0) throw Invalid{};
  if (den < 0) num = -num, den = -den;
  __int128 a = num < 0 ? -num : num, b = den;
  while (b != 0) a %= b, std::swap(a, b);
  if (a > 1) num /= a, den /= a;
  return {checked(num), checked(den)};
}

Q add(Q a, Q b) { return normal(__int128{a.num} * b.den + __int128{b.num} * a.den, __int128{a.den} * b.den); }
Q mul(Q a, Q b) { return normal(__int128{a.num} * b.num, __int128{a.den} * b.den); }
int64_t integer(Q q) {
  if (q.den != 1) throw Invalid{};
  return q.num;
}
class Parser {
 public:
  Parser(const std::string& text, const std::map<std::string, int64_t>& symbols) : s_(text), symbols_(symbols) {}

  Q whole() {
    Q v = expr(0);
    skip();
    if (i_ != s_.size()) throw Invalid{};
    return v;
  }

 private:
  static constexpr int kMaxDepth = 64;

  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    skip();
    if (i_ >= s_.size() || s_[i_] != c) return false;
    ++i_;
    return true;
  }
  void expect(char c) {
    if (!eat(c)) throw Invalid{};
  }
  std::string name() {
    skip();
    size_t start = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
    if (start == i_) throw Invalid{};
    return s_.substr(start, i_ - start);
  }
  int64_t number() {
    skip();
    const bool negative = eat('-');
    skip();
    if (i_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[i_]))) throw Invalid{};
    __int128 v = 0;
    while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) v = v * 10 + (s_[i_++] - '0'), checked(v);
    return checked(negative ? -v : v);
  }
  std::string quoted() {
    skip();
    if (i_ >= s_.size() || (s_[i_] != '\'' && s_[i_] != '"')) throw Invalid{};
    const char q = s_[i_++];
    size_t end = s_.find(q, i_);
    if (end == std::string::npos) throw Invalid{};
    std::string text = s_.substr(i_, end - i_);
    i_ = end + 1;
    return text;
  }
  // Symbol's keyword arguments (positive=True, integer=True): what they say, sizes already are.
  void keywords() {
    while (eat(',')) {
      name();
      expect('=');
      name();
    }
  }
  std::vector<Q> operands(int depth) {
    std::vector<Q> out;
    if (eat(')')) return out;
    do out.push_back(expr(depth + 1));
    while (eat(','));
    expect(')');
    return out;
  }

  Q expr(int depth) {
    if (depth > kMaxDepth) throw Invalid{};
    skip();
    if (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-')) return {number(), 1};
    static const std::map<std::string, Q> kConstants = {
        {"Zero", {0, 1}}, {"One", {1, 1}}, {"NegativeOne", {-1, 1}}, {"Half", {1, 2}}};
    const std::string f = name();
    expect('(');
    auto constant = kConstants.find(f);
    if (constant != kConstants.end()) {
      expect(')');
      return constant->second;
    }
    if (f == "Symbol") {
      const std::string symbol = quoted();
      keywords();
      expect(')');
      auto it = symbols_.find(symbol);
      if (it == symbols_.end()) throw Invalid{};
      return {it->second, 1};
    }
    if (f == "Integer") {
      Q v{number(), 1};
      expect(')');
      return v;
    }
    if (f == "Rational") {
      const int64_t p = number();
      expect(',');
      const int64_t q = number();
      expect(')');
      return normal(p, q);
    }
    return apply(f, operands(depth));
  }

  static Q apply(const std::string& f, const std::vector<Q>& a) {
    if (a.empty()) throw Invalid{};
    if (f == "Add" || f == "Mul") {
      Q v = a[0];
      for (size_t k = 1; k < a.size(); ++k) v = f == "Add" ? add(v, a[k]) : mul(v, a[k]);
      return v;
    }
    if (f == "Max" || f == "Min") {
      Q v = a[0];
      for (const Q& x : a)
        if ((__int128{x.num} * v.den > __int128{v.num} * x.den) == (f == "Max")) v = x;
      return v;
    }
    if (a.size() != 2) throw Invalid{};
    if (f == "Pow") return power(a[0], integer(a[1]));
    if (f == "FloorDiv") return {floor_div(integer(a[0]), integer(a[1])), 1};
    if (f == "Mod") return {integer(a[0]) - floor_div(integer(a[0]), integer(a[1])) * integer(a[1]), 1};
    throw Invalid{};
  }
  static Q power(Q base, int64_t e) {
    if (e < 0) base = normal(base.den, base.num), e = -e;
    if (e > 64) throw Invalid{};
    Q v{1, 1};
    for (int64_t k = 0; k < e; ++k) v = mul(v, base);
    return v;
  }

  const std::string& s_;
  const std::map<std::string, int64_t>& symbols_;
  size_t i_ = 0;
};

}  // namespace

std::optional<int64_t> evaluate_size(const std::string& expr, const std::map<std::string, int64_t>& symbols) {
  try {
    const Q v = Parser(expr, symbols).whole();
    if (v.den != 1) return std::nullopt;
    return v.num;
  } catch (const Invalid&) {
    return std::nullopt;
  } catch (const std::domain_error&) {  // a division by zero
    return std::nullopt;
  }
}

int64_t floor_div(int64_t a, int64_t b) {
  if (b == 0) throw std::domain_error("integer division by zero in the program's size arithmetic");
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

}  // namespace layoutprof::pt2
