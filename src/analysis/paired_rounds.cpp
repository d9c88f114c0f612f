#include "analysis/paired_rounds.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace layoutprof {

namespace {

// P(Binomial(n, 1/2) = i), in logs: exact enough for any n a run can time.
double binomial_half(int64_t n, int64_t i) {
  const double nd = static_cast<double>(n), id = static_cast<double>(i);
  return std::exp(std::lgamma(nd + 1) - std::lgamma(id + 1) - std::lgamma(nd - id + 1) - nd * std::log(2.0));
}

double median_of_sorted(const std::vector<double>& x) {
  const size_t n = x.size();
  if (n == 0) return 0;
  return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

double median_of(const std::vector<int64_t>& ns) {
  std::vector<double> x(ns.begin(), ns.end());
  std::sort(x.begin(), x.end());
  return median_of_sorted(x);
}

}  // namespace

RankInterval median_interval(int64_t n, double level) {
  RankInterval out;
  double below = 0;  // P(Binomial(n, 1/2) <= k - 1), for k = 1, 2, ...
  for (int64_t k = 1; 2 * k <= n + 1; ++k) {
    below += binomial_half(n, k - 1);
    const double coverage = 1 - 2 * below;
    if (coverage < level) break;
    out = {k - 1, n - k, coverage};
  }
  return out;
}

int64_t rounds_needed(double level) {
  int64_t n = 1;
  while (median_interval(n, level).lo < 0) ++n;
  return n;
}

PairedRounds pair_rounds(const std::vector<int64_t>& baseline_ns, const std::vector<int64_t>& variant_ns,
                         int comparisons, double level) {
  if (baseline_ns.size() != variant_ns.size())
    throw std::invalid_argument("pair_rounds: " + std::to_string(baseline_ns.size()) + " baseline rounds against " +
                                std::to_string(variant_ns.size()) + " of the variant");
  PairedRounds p;
  p.rounds = static_cast<int64_t>(baseline_ns.size());
  p.level = 1 - (1 - level) / std::max(1, comparisons);
  p.baseline_median_ns = median_of(baseline_ns);
  p.variant_median_ns = median_of(variant_ns);
  std::vector<double> d(baseline_ns.size());
  for (size_t i = 0; i < d.size(); ++i) d[i] = static_cast<double>(variant_ns[i]) - static_cast<double>(baseline_ns[i]);
  std::sort(d.begin(), d.end());
  p.difference_ns = median_of_sorted(d);
  const RankInterval ranks = median_interval(p.rounds, p.level);
  if (ranks.lo < 0) return p;  // not judged
  p.low_ns = d[static_cast<size_t>(ranks.lo)];
  p.high_ns = d[static_cast<size_t>(ranks.hi)];
  p.coverage = ranks.coverage;
  p.saving = p.high_ns < 0 ? Saving::faster : p.low_ns > 0 ? Saving::slower : Saving::within_noise;
  return p;
}

PairedRounds pair_first_rounds(const std::vector<int64_t>& baseline_ns, const std::vector<int64_t>& variant_ns,
                               int comparisons, double level) {
  const auto first = [n = std::min(baseline_ns.size(), variant_ns.size())](const std::vector<int64_t>& x) {
    return std::vector<int64_t>(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n));
  };
  return pair_rounds(first(baseline_ns), first(variant_ns), comparisons, level);
}

RoundsVerdict judge_rounds(const std::vector<int64_t>& baseline_ns, const std::vector<int64_t>& baseline_again_ns,
                           const std::vector<std::vector<int64_t>>& variants_ns, double level) {
  RoundsVerdict v;
  v.control = pair_rounds(baseline_ns, baseline_again_ns, 1, level);
  const bool noisy = v.control.saving == Saving::faster || v.control.saving == Saving::slower;
  const int comparisons = static_cast<int>(std::max<size_t>(1, variants_ns.size()));
  for (const std::vector<int64_t>& ns : variants_ns) {
    PairedRounds p = pair_first_rounds(baseline_ns, ns, comparisons, level);
    if (noisy && p.saving != Saving::not_judged) p.saving = Saving::withheld;
    v.variants.push_back(p);
  }
  return v;
}

}  // namespace layoutprof
