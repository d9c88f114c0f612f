"""torch.compile in process (tests/python/in_process.py runs these): each case of
samples/sample_compiled.py runs under a profile with one warm-up step, compiled with inductor on
the CPU; its report's "compiled" section holds what the case expects, each at the line whose code
the case names, and the text report's first screen (before the heatmap) names that line.

Usage alone: compiled_checks.py [CASE ...] (the samples folder must be importable)."""
import json
import linecache
import os
import subprocess
import sys
import tempfile

import torch

import layoutprof


def _code_at(where):
    path, _, line = where.rpartition(":")
    return linecache.getline(path, int(line)).strip() if path and line.isdigit() else ""


def _first_screen(text):
    return text.split("\nHeatmap", 1)[0]


def _line_named(where, code, text, name, what):
    """The problems of one expected row: its line holds `code`, and the first screen names it."""
    problems = []
    if code not in _code_at(where) and code not in where:
        problems.append(f"{name}: {what} at {where!r} (`{_code_at(where)}`), want the line of `{code}`")
    elif where and where not in _first_screen(text):
        problems.append(f"{name}: {what}'s line {where} is not on the text report's first screen")
    return problems


def _recompile_problems(name, want, compiled, text):
    got = compiled["recompiles"]
    for w in want.get("recompiles", []):
        hit = [r for r in got if all(r[k] == v for k, v in w.items())]
        if not hit:
            return [f"{name}: no recompile like {w}: {[r['reason'] for r in got]}"]
        r = hit[0]
        if not (r["before"] and r["after"] and r["before"] != r["after"]):
            return [f"{name}: the recompile's layouts {r['before']!r} then {r['after']!r}"]
        words = want.get("layouts", ["", ""])
        if not (r["before"].startswith(words[0]) and r["after"].startswith(words[1])):
            return [f"{name}: the recompile's layouts {r['before']!r} then {r['after']!r}, want {words[0]!r} then "
                    f"{words[1]!r}"]
        if "``" in r["fix"] or f"`{w['tensor']}`" not in r["fix"]:
            return [f"{name}: the recompile's fix does not name `{w['tensor']}`: {r['fix']!r}"]
        if want.get("made") and want["made"] not in r["fix"]:
            return [f"{name}: the recompile's fix does not name the line of `{want['made']}` that made it: {r['fix']!r}"]
        return _line_named(r["called_at"], want["code"], text, name, "the recompiled call")
    return []


def _copy_problems(name, want, compiled, text):
    copies = [c for g in compiled["graphs"] for c in g["copies"]]
    problems = []
    for w in want.get("copies", []):
        hit = [c for c in copies if c["kind"] == w["kind"] and w["code"] in c["code"] and c["bytes"] > 0]
        if not hit:
            problems.append(f"{name}: no {w['kind']} copy at `{w['code']}`: "
                            f"{[(c['kind'], c['tensor'], c['code']) for c in copies]}")
        else:
            problems += _line_named(hit[0]["where"], w["code"], text, name, f"the {w['kind']} copy")
    if "layout_opt" in want and not any(g["layout_opt"] == want["layout_opt"] for g in compiled["graphs"]):
        problems.append(f"{name}: layout optimization {[g['layout_opt'] for g in compiled['graphs']]}, "
                        f"want {want['layout_opt']}")
    return problems


def _region_ops(report):
    """The ops directly inside a compiled region: [(name, "file:line", line text, module)]."""
    o = report["ops"]
    rows = o["rows"]
    regions = {i for i, r in enumerate(rows) if o["names"][r[1]].startswith("Torch-Compiled Region")}
    return [(o["names"][r[1]],) + tuple(o["sources"][r[3]] if r[3] is not None else ("", ""))
            + (o["modules"][r[2]] if r[2] is not None else "",) for r in rows if r[0] in regions]


def _op_line_problems(name, want, report):
    """Each op inside a compiled region carries the user's line of its FX node: never a line of
    inductor's generated code; the ops the case names, at the line of the code it names (and in
    the module it names)."""
    ops, problems = _region_ops(report), []
    cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR", "torchinductor")
    generated = [(n, where) for n, where, _code, _module in ops if cache in where or "torchinductor" in where]
    if generated:
        problems.append(f"{name}: {len(generated)} ops inside compiled regions carry generated code's lines: "
                        f"{generated[:2]}")
    for w in want.get("ops", []):
        if not any(w["name"] in n and w["code"] in code and w.get("module", m) == m for n, _where, code, m in ops):
            problems.append(f"{name}: no {w['name']} op at `{w['code']}` in module {w.get('module', '(any)')} "
                            f"inside a compiled region: {sorted({(n[:40], code, m) for n, _w, code, m in ops})[:8]}")
    return problems


def _other_problems(name, want, report, compiled, text):
    problems = []
    for w in want.get("breaks", []):
        hit = [b for b in compiled["breaks"] if w["code"] in _code_at(b["where"])]
        if not hit:
            problems.append(f"{name}: no graph break at `{w['code']}`: {compiled['breaks']}")
        elif not any("permute" in c or "][" in c for c in hit[0]["crossing"]) or hit[0]["where"] not in _first_screen(text):
            problems.append(f"{name}: the break's crossing tensors {hit[0]['crossing']} or its line on the first screen")
    graphs = sorted({g["graph"] for g in compiled["graphs"]})
    if "graphs" in want and not set(want["graphs"]) <= set(graphs):
        problems.append(f"{name}: graphs {graphs}, want {want['graphs']}")
    if want.get("parameters") and not report.get("parameters"):
        problems.append(f"{name}: no gradient verdicts")
    for words in want.get("screen", []):
        if words not in _first_screen(text):
            problems.append(f"{name}: the text report's first screen does not say `{words}`")
    return problems


ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def _schema_problems(name, report):
    """The report against the repository's JSON Schema (Debian's python3-jsonschema, as the
    command's reports are validated: tests/e2e/validate_report.py)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(report, f)
    try:
        out = subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tests/e2e/validate_report.py"),
                              os.path.join(ROOT, "src/report/report.schema.json"), f.name],
                             capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    return [] if out.returncode == 0 else [f"{name}: the report is not the schema's: {out.stderr.strip()[:400]}"]


def check_case(case, fail):
    torch.set_num_threads(1)
    torch._dynamo.reset()
    p = layoutprof.profile(warmup=1)
    with p:
        case.run(p.step)
    report, text = p.report, p.text()
    compiled = report.get("compiled")
    if report["run"]["status"] != "ok" or compiled is None:
        fail(f"{case.name}: status {report['run']['status']} {report['run'].get('error', '')}; compiled section "
             f"{'present' if compiled else 'missing'}")
        return
    want = case.expect
    for problem in (_recompile_problems(case.name, want, compiled, text) + _copy_problems(case.name, want, compiled, text)
                    + _other_problems(case.name, want, report, compiled, text)
                    + _op_line_problems(case.name, want, report) + _schema_problems(case.name, report)):
        fail(problem)
    if not any("enable_kernel_profile" in o for o in compiled.get("observer", [])) or \
            "layoutprof's own effect: inductor's C++ kernels profiled" not in text:
        fail(f"{case.name}: the settings layoutprof switched on are not listed: {compiled.get('observer')}")
    if "recompiles" not in want and compiled["recompiles"]:
        fail(f"{case.name}: recompiles {[r['reason'] for r in compiled['recompiles']]}, the case expects none")
    print(f"compiled {case.name}: {len(compiled['graphs'])} graphs, {len(compiled['recompiles'])} recompiles, "
          f"{compiled['summary']['copies_per_call']} layout copies a call, {len(compiled['breaks'])} breaks")


def check_script_line(fail):
    """python -m layoutprof on a script whose compiled model recompiles for its batches' layout
    (samples/train/compiled_steps.py) ends with one stderr line naming it."""
    out = subprocess.run([sys.executable, "-m", "layoutprof", "--quiet", "samples/train/compiled_steps.py"],
                         cwd=ROOT, capture_output=True, text=True)
    lines = [l for l in out.stderr.splitlines() if "torch.compile recompile" in l]
    if out.returncode != 0 or len(lines) != 1 or "stride mismatch" not in lines[0] or "called at" not in lines[0]:
        fail(f"python -m layoutprof compiled_steps.py: exit {out.returncode}, lines {lines}, "
             f"stderr {out.stderr[-300:]!r}")
    else:
        print(f"python -m layoutprof: {lines[0][:160]}")


def scale_rows(x):
    return x.t().contiguous() * 2


def check_limit_hit(fail):
    """A function recompiled past torch._dynamo.config.recompile_limit (1 here) for its input's
    layout: the report lists the hit (dynamo's own warning record), with the function."""
    torch._dynamo.reset()
    compiled = torch.compile(scale_rows, dynamic=False)
    with torch._dynamo.config.patch(recompile_limit=1, automatic_dynamic_shapes=False):
        p = layoutprof.profile(warmup=1)
        with p:
            for step in range(3):
                x = torch.randn(8, 8)
                compiled(x if step == 0 else x.t())
                p.step()
    hits = (p.report.get("compiled") or {}).get("limit_hits", [])
    if len(hits) != 1 or "scale_rows" not in hits[0]["function"] or hits[0]["step"] != 1:
        fail(f"recompile_limit: hits {hits}, want one in step 2 naming scale_rows")
    else:
        print(f"recompile_limit: {hits[0]['limit']} hit in step {hits[0]['step'] + 1} by {hits[0]['function']}")


def check_precompiled(fail):
    """A model compiled (and called) before the profile began: the report says its decisions were
    not read, and the ops inside its region still carry the user's lines, from inductor's own line
    map of the generated code (layoutprof/_compiled_lines.py)."""
    import sample_compiled
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = torch.compile(sample_compiled.ShuffleNet().eval())
    x = torch.randn(2, 3, 16, 16)
    with torch.no_grad():
        model(x)
        p = layoutprof.profile()
        with p:
            model(x)
    report = p.report
    notes = (report.get("compiled") or {}).get("not_measured", [])
    problems = _op_line_problems("precompiled", {"ops": [{"name": "aten::convolution", "code": "self.a(x)"}]}, report)
    if not any("compiled before the profile began" in n for n in notes):
        problems.append(f"precompiled: the report does not say the graph was compiled before the profile: {notes}")
    for problem in problems:
        fail(problem)
    print(f"precompiled: {len(_region_ops(report))} ops inside the region, each at a user's line")


def check_placeholder_names(fail):
    """Dynamo's placeholder names read back as the user's module paths, underscores in a module's
    own name included (timm's `conv_stem`, `conv_dw`)."""
    from layoutprof import _inductor_code as code
    cases = {"L_self_modules_conv_stem_parameters_weight_": ("parameter `conv_stem.weight`", "conv_stem"),
             "L_self_modules_blocks_modules_0_modules_conv_dw_parameters_weight_":
                 ("parameter `blocks.0.conv_dw.weight`", "blocks.0.conv_dw"),
             "L_self_modules_bn1_buffers_running_mean_": ("buffer `bn1.running_mean`", "bn1"),
             "L_self_parameters_w_": ("parameter `w`", ""), "L_x_": ("x", "")}
    for placeholder, want in cases.items():
        got = (code.tensor_name(placeholder), code.module_of(placeholder))
        if got != want:
            fail(f"placeholder {placeholder}: read as {got}, want {want}")


def check_guard_names(fail):
    """Every guard on a tensor's strides is read as a layout guard, whatever dynamo names the
    tensor (a keyword's entry, a list's item, a shape guard once a dim is dynamic), and no fix
    names an empty tensor."""
    from layoutprof._arguments import guard
    from layoutprof._compile_report import _fix
    cases = {"0/0: tensor 'kw['y']' stride mismatch at index 0. expected 4, actual 1": ("kw['y']", "stride", 0),
             "1/0: tensor 'xs[1]' stride mismatch at index 0. expected 1, actual 8": ("xs[1]", "stride", 0),
             "0/1: L['x'].stride()[1] == 1": ("x", "stride", 1),
             "0/1: Eq(L['kw']['y'].size()[0], 8)": ("kw['y']", "size", 0),
             "2/0: tensor 'x' size mismatch at index 2. expected 4, actual 2": ("x", "size", 2),
             "0/0: ___check_global_state()": ("", "other", -1)}
    for reason, want in cases.items():
        g = guard(reason)
        if (g["tensor"], g["kind"], g["dim"]) != want:
            fail(f"guard {reason!r}: read as {(g['tensor'], g['kind'], g['dim'])}, want {want}")
        fix = _fix(g, "contiguous, f32[8, 8][8, 1]", "permuted(1,0), f32[8, 8][1, 8]", {"called_at": "a.py:3"})
        if "``" in fix or (g["tensor"] and f"`{g['tensor']}`" not in fix):
            fail(f"guard {reason!r}: the fix names no tensor: {fix!r}")


def check_compiled_cases(fail, names=None):
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", os.path.expanduser("~/.cache/layoutprof/inductor"))
    import sample_compiled
    for case in sample_compiled.CASES:
        if names and case.name not in names:
            continue
        try:
            check_case(case, fail)
        except Exception as e:  # noqa: BLE001  # a case that raises is a failure, named
            fail(f"{case.name}: raised {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}")
    if not names:
        check_placeholder_names(fail)
        check_guard_names(fail)
        check_limit_hit(fail)
        check_script_line(fail)
        check_precompiled(fail)


if __name__ == "__main__":
    from check_main import run_alone
    run_alone(check_compiled_cases)
