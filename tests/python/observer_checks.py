"""No observer effect under torch.compile: each case of observer_cases.py captures the same graphs
with layoutprof on as off. For each case, in a process of its own per way of running it:
- plain: no layoutprof;
- step: under layoutprof.profile(warmup=1), steps marked with p.step();
- call: under layoutprof.profile(by="call", warmup=1, calls=1), as `python -m layoutprof` runs a
  script (the model's calls counted by layoutprof's stand-in for Module.__call__);
and in the profiled processes, every case once more after the profile ended (torch._dynamo was
first imported under the profile: nothing of layoutprof's may stay behind).
What is compared (torch._dynamo's own records, reset before each case): the unique graphs
(counters["stats"]["unique_graphs"]), the graph breaks (counters["graph_break"]), the frames
dynamo converted (counters["frames"]), and each code object dynamo converted with its cache
entries (one per compile that is still cached: a recompile adds one). A code object of
layoutprof's among them is a failure in itself.

Usage: observer_checks.py [CASE ...]; observer_checks.py --way WAY [CASE ...] runs one way and
prints its JSON. Exits 1 naming each difference."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
WAYS = ("plain", "step", "call")


def _converted():
    """Each code object dynamo converted since its reset: "file:line name" -> cache entries (those
    it looked at and left, without an entry, only where they are layoutprof's)."""
    from torch._C._dynamo.eval_frame import _debug_get_cache_entry_list
    from torch._dynamo import convert_frame
    out = {}
    for ref in convert_frame.input_codes.seen:
        code = ref()
        if code is not None:
            mine = os.path.basename(os.path.dirname(code.co_filename)) == "layoutprof"  # the package's folder
            key = ("layoutprof's " if mine else "") + f"{os.path.basename(code.co_filename)}:{code.co_firstlineno} {code.co_name}"
            entries = len(_debug_get_cache_entry_list(code))
            if entries or mine:
                out[key] = out.get(key, 0) + entries
    return out


def _records(case, way):
    import torch
    import torch._dynamo
    from torch._dynamo.utils import counters
    if way == "plain":
        case(lambda: None)
    else:
        import layoutprof
        p = layoutprof.profile(warmup=1, calls=1, by="call") if way == "call" else layoutprof.profile(warmup=1)
        with p:
            case(p.step if way == "step" else lambda: None)
        if p.report["run"]["status"] != "ok":
            raise RuntimeError(f"status {p.report['run']['status']}: {p.report['run'].get('error', '')}")
    records = {"unique_graphs": counters["stats"].get("unique_graphs", 0),
               "graph_breaks": dict(counters["graph_break"]), "frames": dict(counters["frames"]),
               "converted": _converted()}
    torch._dynamo.reset()
    counters.clear()
    return records


def run_way(way, names):
    """Every case one way (and again plain after a profiled way): {case: records}."""
    import torch
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.expanduser("~/.cache/layoutprof/inductor"))
    torch.set_num_threads(1)
    sys.path.insert(0, HERE)
    import observer_cases
    cases = [c for c in observer_cases.CASES if not names or c.__name__ in names]
    out = {}
    for case in cases:
        try:
            out[case.__name__] = _records(case, way)
        except Exception as e:  # noqa: BLE001  # a case that raises is reported as such
            out[case.__name__] = {"raised": f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"}
    if way != "plain":
        for case in cases:
            out[case.__name__ + " (after the profile)"] = _records(case, "plain")
    return out


def _differences(case, plain, other, way):
    if "raised" in other or "raised" in plain:
        return [f"{case} ({way}): raised {other.get('raised')!r}, plain raised {plain.get('raised')!r}"]
    problems = []
    for key in ("unique_graphs", "graph_breaks", "frames", "converted"):
        if other[key] != plain[key]:
            problems.append(f"{case} ({way}): {key} {other[key]} where the plain run has {plain[key]}")
    return problems


def _run(way, names):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--way", way] + names,
                         capture_output=True, text=True)
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or not lines:
        return None, f"{way}: exit {out.returncode}: {out.stderr.strip()[-600:]}"
    return json.loads(lines[-1]), ""


def check_observer(fail, names=()):
    names, failed = list(names), []

    def failure(what):
        failed.append(what)
        fail(what)

    results = {}
    for way in WAYS:
        results[way], error = _run(way, names)
        if error:
            failure(f"observer: {error}")
            return
    plain = results["plain"]
    for way in WAYS[1:]:
        for case, records in results[way].items():
            base = plain.get(case.replace(" (after the profile)", ""))
            for problem in _differences(case, base, records, way):
                failure(f"observer: {problem}")
    for case, records in plain.items():
        if any(case in f for f in failed):
            continue
        print(f"observer {case}: {records.get('unique_graphs')} graphs, {sum(records.get('graph_breaks', {}).values())}"
              f" breaks, {len(records.get('converted', {}))} code objects converted "
              f"({sum(records.get('converted', {}).values())} cache entries), the same with layoutprof"
              if "raised" not in records else f"observer {case}: plain run raised {records['raised']}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--way"]:
        print(json.dumps(run_way(sys.argv[2], sys.argv[3:])))
        sys.exit(0)
    from check_main import run_alone
    run_alone(check_observer)
