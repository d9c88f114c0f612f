#include "report/verdict_json.h"

#include "analysis/verdict.h"

namespace layoutprof {

nlohmann::json verdict_json(const Report& r, size_t max_split) {
  using nlohmann::json;
  const Verdict v = verdict_of(r);
  json causes = json::array();
  for (const CopyCause& k : v.causes)
    causes.push_back({{"kind", cause_kind_name(k.kind)}, {"class", copy_class_name(k.cls)}, {"copies", k.copies},
                      {"bytes", k.bytes}, {"time_ns", k.time_ns}, {"what", k.what}, {"fix", k.fix},
                      {"modules", k.modules}, {"sources", k.sources}, {"origin_sources", k.origin_sources}});
  json groups = json::array();
  for (const SplitGroup& g : group_split_points(r)) {
    json points = json::array();
    for (size_t p : g.points)
      if (p < max_split) points.push_back(p);
    if (!points.empty()) groups.push_back({{"points", points}, {"copies", g.copies}, {"copy_bytes", g.copy_bytes}});
  }
  return {{"implicit_ns", v.implicit_ns}, {"wall_ns", v.wall_ns}, {"share", share_text(v.implicit_ns, v.wall_ns)},
          {"medians", v.medians}, {"copy_gpu_ns", v.copy_gpu_ns}, {"gpu_ns", v.gpu_ns},
          {"gpu_share", share_text(v.copy_gpu_ns, v.gpu_ns)}, {"causes", causes}, {"split_groups", groups}};
}

}  // namespace layoutprof
