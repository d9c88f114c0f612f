#!/usr/bin/python3
"""Every sample's HTML page, and a comparison's, in a real browser (Debian's chromium, headless,
driven through chromedriver by Debian's python3-selenium).

    html_browser_test.py LAYOUTPROF SAMPLES_DIR MANIFEST OUT_DIR [NAME...]

For each sample of the manifest (the large ones too where SAMPLES_DIR has them) the test runs
layoutprof with --json and --html, opens the page from file:// and checks, against the JSON
report written by the same run:
  - the browser logged no error (console errors and uncaught exceptions);
  - the heatmap's rows are the JSON's: each top-level op's module at the page's depth, in
    order of first appearance (backward rows after the forward ones), decoded here from the
    JSON's op list; the page's depth is the automatic one, computed here from the modules;
  - the verdict says the JSON's implicit copies, and the grouped causes count its layout copies;
  - one block per birthplace of the JSON, its chain linked to the heatmap's rows;
  - the copies table has one row per copy of the JSON, the filter by class keeps that class's;
  - opening a heatmap row that has ops shows as many op rows as the JSON's top-level ops of
    that row, and opening an op with nested ops shows them;
  - hovering the layout lane shows an op of the call;
  - a screenshot PNG is written to OUT_DIR.
Then `layoutprof diff --format html` of gate_base against gate_regressed: the page's checks are
the JSON comparison's, regressions first; and `compare-formats --html` of broadcast_matmul: its
variants, module rows, copy changes and verdict are the --json document's.
The default sample's page (resnet18 as scripts/profile-default.sh runs it) is checked too:
its screenshot, default.png, is the README's.
Prints one line per page; exits 1 if any check failed (or chromium is missing).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

LAYOUTPROF, SAMPLES, MANIFEST, OUT = sys.argv[1:5]
ONLY = set(sys.argv[5:])

if not (shutil.which("chromium") and shutil.which("chromedriver")):
    print("FAIL: chromium and chromium-driver are not installed (scripts/setup.sh installs them)")
    sys.exit(1)
from selenium import webdriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("  FAIL " + what)
    return ok


def module_at_depth(module, depth):
    """The heatmap row of a module path (README, "Heatmap"): its first `depth` components."""
    if not module:
        return "(top)"
    return ".".join(module.split(".")[:depth])


def auto_depth(modules, max_rows=40):
    """The deepest depth whose rows stay within max_rows (at least 1)."""
    deepest = max([1] + [m.count(".") + 1 for m in modules if m])
    best = 1
    for d in range(1, min(deepest, 64) + 1):
        if len({module_at_depth(m, d) for m in modules}) > max_rows:
            break
        best = d
    return best


def top_level_rows(doc, depth):
    """Each top-level op's heatmap row, in execution order, decoded from the report's op list
    (schema 2's rows: [parent, name, module, ...], parent null for top-level ops): the module
    at `depth`, and in a training step the backward pass's rows after the forward's."""
    ops = doc["ops"]
    backward_from = ops.get("backward_from")
    rows = []
    for index, row in enumerate(ops["rows"]):
        if row[0] is None:
            label = module_at_depth(ops["modules"][row[2]], depth)
            if backward_from is not None and index >= backward_from:
                label += " (backward)"
            rows.append((label, ops["names"][row[1]]))
    return rows


def browser():
    options = webdriver.ChromeOptions()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--window-size=1500,1100", "--allow-file-access-from-files"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path=shutil.which("chromedriver")) \
        if hasattr(webdriver, "ChromeService") else None
    return webdriver.Chrome(options=options, service=service) if service else webdriver.Chrome(options=options)


def errors_logged(driver):
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def open_page(driver, path):
    driver.get("file://" + os.path.abspath(path))
    # The page draws itself synchronously on load; an exception leaves #app without an h1.
    return driver.find_elements(By.CSS_SELECTOR, "#app h1")


def report_page(driver, name, sample, tmp):
    model = os.path.join(SAMPLES, sample["file"])
    page, report = os.path.join(tmp, name + ".html"), os.path.join(tmp, name + ".json")
    args = [LAYOUTPROF, model, "--warmup", "1", "--iters", "1", "--json", report, "--html", page]
    for spec in sample["inputs"]:
        args += ["--input", spec]
    if "grads" in sample:
        args.append("--backward")
    run = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if run.returncode not in (0, 4) or not os.path.exists(page):  # 4: the model raised (view_fails)
        check(False, f"{name}: layoutprof exited {run.returncode}: {run.stderr.strip()[-300:]}")
        return
    doc = json.load(open(report))
    size = os.path.getsize(page)
    check(open_page(driver, page), f"{name}: the page drew its header")
    errors = errors_logged(driver)
    check(not errors, f"{name}: console errors: {errors[:3]}")

    depth = int(driver.execute_script("return JSON.parse(document.getElementById('layoutprof-data').textContent).heatmap.depth"))
    check(depth == auto_depth([m["module"] for m in doc["modules"]]), f"{name}: heatmap depth {depth} is the automatic one")
    rows = driver.find_elements(By.CSS_SELECTOR, "#heatmap tr.hm-row")
    tops = top_level_rows(doc, depth)
    want = list(dict.fromkeys(label for label, _ in tops))
    got = [r.find_element(By.CSS_SELECTOR, "td").text for r in rows]
    check(got == want, f"{name}: heatmap rows {got} == the JSON's modules at depth {depth} {want}")

    # The verdict and the grouped causes lead the page: the JSON's implicit copies, and one row
    # per cause whose counts add up to the JSON's layout copies.
    verdict = driver.find_element(By.ID, "verdict").text
    implicit = doc["summary"]["copies"]["implicit_layout"]
    check(verdict.startswith("Verdict: " + (f"{implicit} implicit layout cop" if implicit else "No implicit layout copies")),
          f"{name}: the verdict {verdict[:60]!r} says the JSON's {implicit} implicit copies")
    backend = doc.get("backend", {})
    activation = sum(1 for p in backend.get("primitives", []) if p.get("role") == "activation")
    if not implicit and activation:  # the backend's conversions counted, never "no copies" alone
        check(f"but {activation} activation reorder" in verdict,
              f"{name}: the verdict {verdict[:120]!r} counts oneDNN's {activation} activation reorders")
    causes = driver.find_elements(By.CSS_SELECTOR, "#causes tr.cause-row")
    counted = sum(int(r.find_elements(By.CSS_SELECTOR, "td")[1].text.split()[0]) for r in causes)
    layout = implicit + doc["summary"]["copies"]["explicit_layout"]
    check(counted == layout, f"{name}: the causes count {counted} copies == the JSON's {layout} layout copies")

    # The birthplaces: one block per cause of the JSON, each with its chain, whose first link
    # leads to the heatmap row of the birth op's module.
    births = driver.find_elements(By.CSS_SELECTOR, "#birthplaces .birthplace")
    check(len(births) == len(doc["causes"]), f"{name}: {len(births)} birthplaces == {len(doc['causes'])} causes in the JSON")
    for block, cause in zip(births, doc["causes"]):
        check(cause["text"] in block.text, f"{name}: the birthplace block says {cause['text']!r}")
        links = block.find_elements(By.CSS_SELECTOR, ".chain a")
        target = links[0].get_attribute("href").split("#")[-1] if links else ""
        check(bool(links) and driver.find_elements(By.ID, target), f"{name}: the chain links to a heatmap row ({target!r})")

    more = driver.find_element(By.ID, "more-copies")
    if more.is_displayed():  # past 1,000 copies the rest are drawn when asked
        driver.execute_script("arguments[0].click()", more)
    copies = driver.find_elements(By.CSS_SELECTOR, "#copies tr.copy-row")
    check(len(copies) == len(doc["copies"]), f"{name}: {len(copies)} copy rows == {len(doc['copies'])} copies in the JSON")
    classes = sorted({c["class"] for c in doc["copies"]})
    if classes:
        Select(driver.find_element(By.ID, "copy-filter")).select_by_value(classes[0])
        kept = len(driver.find_elements(By.CSS_SELECTOR, "#copies tr.copy-row"))
        want_kept = sum(c["class"] == classes[0] for c in doc["copies"])
        check(kept == want_kept, f"{name}: filter {classes[0]} keeps {kept} == {want_kept}")

    # Open the row with the most top-level ops: its op rows are the JSON's top-level ops there.
    counts = {}
    for label, _ in tops:
        counts[label] = counts.get(label, 0) + 1
    if rows:
        label = max(want, key=lambda l: counts.get(l, 0))
        row = rows[want.index(label)]
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", row)
        row.click()
        ops = driver.find_elements(By.CSS_SELECTOR, f"#heatmap tr.op-row[data-row='{want.index(label)}']")
        shown = min(counts[label], 2000) + (counts[label] > 2000)
        check(len(ops) == shown, f"{name}: row {label} opens into {len(ops)} op rows == {shown} top-level ops")
        expanders = driver.find_elements(By.CSS_SELECTOR, "#heatmap tr.op-row .expander")
        if expanders:
            before = len(driver.find_elements(By.CSS_SELECTOR, "#heatmap tr.nested-row"))
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", expanders[0])
            expanders[0].click()
            after = len(driver.find_elements(By.CSS_SELECTOR, "#heatmap tr.nested-row"))
            check(after > before, f"{name}: an op opens into its nested ops ({after - before})")

    lane = driver.find_element(By.ID, "lane")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", lane)
    # The pointer over the lane's first pixel: the first top-level op.
    driver.execute_script("""const r = arguments[0].getBoundingClientRect();
        arguments[0].dispatchEvent(new MouseEvent('mousemove', {clientX: r.left + 1, clientY: r.top + 30, bubbles: true}));""", lane)
    tip = driver.find_element(By.ID, "tip")
    first_top = tops[0][1] if tops else None
    check(tip.is_displayed() and (first_top is None or first_top in tip.text),
          f"{name}: hovering the lane's first op shows it ({first_top!r} in {tip.text[:60]!r})")
    driver.execute_script("window.scrollTo(0, 0)")
    check(not errors_logged(driver), f"{name}: no console errors after the clicks")
    shot = os.path.join(OUT, name + ".png")
    driver.save_screenshot(shot)
    check(os.path.getsize(shot) > 1000, f"{name}: screenshot {shot}")
    print(f"{name}: {len(rows)} heatmap rows, {len(copies)} copies, page {size} bytes")


def comparison_page(driver, tmp):
    reports = {}
    for name in ("gate_base", "gate_regressed"):
        sample = next(s for s in manifest["samples"] if s["name"] == name)
        reports[name] = os.path.join(tmp, name + ".json")
        args = [LAYOUTPROF, os.path.join(SAMPLES, sample["file"]), "--warmup", "1", "--iters", "1",
                "--json", reports[name]]
        for spec in sample["inputs"]:
            args += ["--input", spec]
        subprocess.run(args, stdout=subprocess.DEVNULL, check=True)
    page, comparison = os.path.join(tmp, "diff.html"), os.path.join(tmp, "diff.json")
    diff = [LAYOUTPROF, "diff", reports["gate_base"], reports["gate_regressed"]]
    subprocess.run(diff + ["--format", "html", "-o", page], check=True)
    subprocess.run(diff + ["--format", "json", "-o", comparison], check=True)
    doc = json.load(open(comparison))
    check(open_page(driver, page), "diff: the page drew its header")
    check(not errors_logged(driver), "diff: no console errors")
    rows = driver.find_elements(By.CSS_SELECTOR, "#checks tbody tr")
    failed = sum(not k["passed"] for k in doc["checks"])
    check(len(rows) == len(doc["checks"]), f"diff: {len(rows)} check rows == {len(doc['checks'])} checks")
    classes = [r.get_attribute("class") for r in rows]
    check(failed > 0 and classes == ["check-fail"] * failed + ["check-pass"] * (len(rows) - failed),
          f"diff: the {failed} regressions come first")
    modules = driver.find_elements(By.CSS_SELECTOR, "#modules tr.module-row")
    check(len(modules) == len(doc["modules"]), f"diff: {len(modules)} module rows == {len(doc['modules'])}")
    driver.save_screenshot(os.path.join(OUT, "diff.png"))
    print(f"diff: {len(rows)} checks, {failed} regressions, {len(modules)} modules")


def formats_page(driver, tmp):
    """compare-formats --html of broadcast_matmul (channels_last adds a copy) against its --json."""
    sample = next(s for s in manifest["samples"] if s["name"] == "broadcast_matmul")
    page, doc_path = os.path.join(tmp, "formats.html"), os.path.join(tmp, "formats.json")
    args = [LAYOUTPROF, "compare-formats", os.path.join(SAMPLES, sample["file"]), "--warmup", "1", "--iters", "1",
            "--timed-calls", "5", "--json", doc_path, "--html", page]
    for spec in sample["inputs"]:
        args += ["--input", spec]
    subprocess.run(args, stdout=subprocess.DEVNULL, check=True)
    doc = json.load(open(doc_path))
    check(open_page(driver, page), "compare-formats: the page drew its header")
    check(not errors_logged(driver), "compare-formats: no console errors")
    variants = driver.find_elements(By.CSS_SELECTOR, "#variants tr.variant-row")
    check([v.find_element(By.CSS_SELECTOR, "td").text for v in variants] == [v["name"] for v in doc["variants"]],
          "compare-formats: one row per variant, in the JSON's order")
    rows = driver.find_elements(By.CSS_SELECTOR, "#format-modules tr.format-row")
    want = [r["module"] for r in doc["variants"][0]["rows"]] + ["(total)"]
    check([r.find_element(By.CSS_SELECTOR, "td").text for r in rows] == want, f"compare-formats: module rows {want}")
    for delta in doc["verdict"]["copies"]:
        shown = driver.find_elements(By.CSS_SELECTOR, f"table.copy-changes[data-variant='{delta['variant']}'] tr.copy-change")
        want_n = len(delta["added"]) + len(delta["avoided"]) + len(delta["resized"])
        check(len(shown) == want_n, f"compare-formats: {delta['variant']} shows {len(shown)} copy changes == {want_n}")
    verdict = driver.find_element(By.ID, "verdict").text
    check(verdict == doc["verdict"]["summary"], "compare-formats: the verdict line is the JSON's")
    driver.save_screenshot(os.path.join(OUT, "compare-formats.png"))
    print(f"compare-formats: {len(variants)} variants, {len(rows)} module rows")


manifest = json.load(open(MANIFEST))
os.makedirs(OUT, exist_ok=True)
driver = browser()
try:
    with tempfile.TemporaryDirectory() as tmp:
        default = {"name": "default", "file": "resnet18.pt", "inputs": ["8x3x224x224:f32:channels_last"]}
        for sample in manifest["samples"] + [default]:
            name = sample["name"]
            if ONLY and name not in ONLY:
                continue
            if not os.path.exists(os.path.join(SAMPLES, sample["file"])):
                continue  # a large sample this build did not make, or one this torch cannot script
            try:
                report_page(driver, name, sample, tmp)
            except Exception as e:  # a driver error fails this page and the test, not the others
                check(False, f"{name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
        for name, page in (("diff", comparison_page), ("compare-formats", formats_page)):
            if ONLY and name not in ONLY:
                continue
            try:
                page(driver, tmp)
            except Exception as e:
                check(False, f"{name}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
finally:
    driver.quit()
if failures:
    print(f"{len(failures)} checks FAILED")
    sys.exit(1)
print("every page passed")
