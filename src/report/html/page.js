"use strict";
(function () {
const D = JSON.parse(document.getElementById("layoutprof-data").textContent);
const app = document.getElementById("app");
const CLASSES = ["contiguous", "channels_last", "channels_last_3d", "permuted", "strided", "broadcast", "overlapping", "unknown"];

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else e.setAttribute(k, v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
}
const mb = b => (b / 1e6).toFixed(3);
const ms = ns => (ns / 1e6).toFixed(3);
function td(text, cls) { return el("td", { class: cls || "", text: String(text) }); }
function section(title, ...kids) { app.append(el("h2", { text: title }), ...kids); }
// The heatmap row a module's ops are in: its own path's row, or that of the deepest module
// above it that has one (the heatmap's depth cuts paths); the top module's row otherwise.
function rowAnchor(module) {
  let best = 0, len = -1;
  D.heatmap.rows.forEach((row, r) => {
    const l = row.label === "(top)" ? "" : row.label;
    if ((module === l || l === "" || module.startsWith(l + ".")) && l.length > len) { best = r; len = l.length; }
  });
  return "hm-" + best;
}

if (D.kind === "comparison") { comparison(); return; }
if (D.kind === "formats") { formats(); return; }

const S = D.strings, SH = D.shapes, O = D.ops;
const pos = new Map();  // op id -> column position
O.id.forEach((id, i) => pos.set(id, i));
const str = i => S[i];
function shapeText(s) { const x = SH[s]; return x[0] + " " + x[2] + " strides " + x[1] + " " + x[3]; }
function opWhere(i) {
  let w = str(O.module[i]) || "(top)";
  if (str(O.source[i])) w += " at " + str(O.source[i]);
  return w;
}
// The layout class of the data an op produces: its first output's, else its first input's.
function opClass(i) {
  const t = O.out[i].length ? O.out[i][0] : (O.in[i].length ? O.in[i][0] : -1);
  return t < 0 ? "none" : SH[t][4];
}
function opTip(i) {
  const lines = [str(O.name[i]) + "  (op " + O.id[i] + ")", "module " + (str(O.module[i]) || "(top)")];
  if (str(O.source[i])) lines.push("at " + str(O.source[i]) + (str(O.text[i]) ? "\n    " + str(O.text[i]) : ""));
  O.in[i].forEach((t, k) => lines.push("in " + k + ":  " + shapeText(t)));
  O.out[i].forEach((t, k) => lines.push("out " + k + ": " + shapeText(t)));
  lines.push("time " + ms(O.dur[i]) + " ms (measured, median over calls)");
  return lines.join("\n");
}
const children = new Map();  // op id -> positions of its direct children (built on first use)
function childrenOf(id) {
  if (!children.size) O.parent.forEach((p, i) => { if (p >= 0) { if (!children.has(p)) children.set(p, []); children.get(p).push(i); } });
  return children.get(id) || [];
}

// --- header -----------------------------------------------------------------------------
const R = D.run, T = D.summary;
app.append(el("h1", { text: "layoutprof " + R.layoutprof + " — " + R.model }));
// --- hazards, first of all: layouts that change what the model computes ---------------------
if (D.hazards.length) {
  const box = el("div", { id: "hazards" });
  const counted = h => h.certainty === "yes" && !h.accepted;
  D.hazards.forEach(h => box.append(el("div", { class: "hazard" + (counted(h) ? "" : " muted") },
    el("div", { class: "bp-title", text: "hazard: " + (h.accepted ? "accepted (--accept " + h.where + "): " : "") + h.text }),
    h.code ? el("div", { class: "mono bp-code", text: h.code }) : null,
    ...h.fixes.map((f, k) => el("div", { class: "fix", text: "→ " + (k ? "" : "fix: ") + f })))));
  section("Hazards: " + D.hazards.filter(counted).length + " (layouts that change what the model computes)", box);
}
// --- torch.compile: recompiles and the layout copies inside compiled graphs -----------------
if (D.compiled) {
  const C = D.compiled, box = el("div", { id: "compiled" });
  C.recompiles.forEach(r => box.append(el("div", { class: "hazard" + (r.layout ? "" : " muted") },
    el("div", { class: "bp-title", text: "recompile of " + r.function + " (" + r.where + ") in step " + (r.step + 1) + ": " + r.reason }),
    el("div", { class: "mono bp-code", text: (r.before || "?") + " then " + (r.after || "?") + (r.called_at ? "; called at " + r.called_at : "") }),
    el("div", { class: "fix", text: "→ fix: " + r.fix }))));
  C.graphs.forEach(g => g.copies.forEach(c => box.append(el("div", { class: "bp" },
    el("div", { class: "bp-title", text: "graph " + g.compile_id + (g.graph ? " " + g.graph : "") + ": " + c.kind + " copy of " + c.tensor +
      ", " + mb(c.bytes) + " MB a call" + (c.before ? ", before " + c.before : "") + (c.module ? " in " + c.module : "") + (c.where ? " (" + c.where + ")" : "") }),
    el("div", { class: "mono bp-code", text: c.from + " → " + c.to + (c.code ? "   " + c.code : "") })))));
  C.breaks.forEach(b => box.append(el("div", { class: "bp" },
    el("div", { class: "bp-title", text: "graph break (" + b.where + ") in step " + (b.step + 1) + ": " + b.reason }),
    el("div", { class: "mono bp-code", text: b.crossing.join("; ") }))));
  section("torch.compile: " + C.summary.recompiles + " recompiles (" + C.summary.layout_recompiles + " by layouts), " +
    C.summary.copies_per_call + " layout copies a call in " + C.graphs.length + " graphs", box);
}
// --- verdict and causes, first: what to act on ----------------------------------------------
const V = D.verdict, call = R.backward ? "training step" : "forward";
{
  const imp = T.copies.implicit_layout, cops = n => n + " cop" + (n === 1 ? "y" : "ies");
  const none = V.no_copies_text || "no implicit layout copies in a call";  // the backend's conversions said (backend_text.h)
  let text = imp === 0 ? none.charAt(0).toUpperCase() + none.slice(1) : cops(imp).replace("cop", "implicit layout cop") + " a call, " + mb(T.copy_bytes.implicit_layout) + " MB";
  if (imp === 0 && V.mixed_ops) text += ", but " + V.mixed_ops + " mixed-format op" + (V.mixed_ops === 1 ? " runs" : "s run") + " in a layout the model's weights are not in (see Causes, by birthplace)";
  if (imp > 0 && V.share) text += ", " + V.share + " of the " + call + "'s time (measured: the copies' own time, " + ms(V.implicit_ns) + " of " + ms(V.wall_ns) + " ms, " + (V.medians ? "medians over " + R.calls + " calls" : "one call") + ")";
  if (R.status !== "ok") text += ", up to where the call stopped";
  const more = [];
  if (V.measured_fix) {  // what applying the fixes measured, first
    more.push("and in the recorded call: " + text);
    text = V.measured_fix;
  }
  app.append(el("div", { id: "verdict", class: "verdict " + (imp || (imp === 0 && none.includes(", but ")) ? "bad" : "good"), text: "Verdict: " + text }));
  if (T.copies.explicit_layout) more.push("and " + cops(T.copies.explicit_layout).replace("cop", "explicit layout cop") + " the model asks for, " + mb(T.copy_bytes.explicit_layout) + " MB");
  const others = ["broadcast", "dtype_device", "same_layout"].filter(c => T.copies[c] > 0);
  const n = others.reduce((a, c) => a + T.copies[c], 0);
  if (n) more.push("and " + cops(n) + " that change" + (n === 1 ? "s" : "") + " no layout (" + others.map(c => T.copies[c] + " " + c).join(", ") + "), " + mb(others.reduce((a, c) => a + T.copy_bytes[c], 0)) + " MB");
  (V.backend_lines || []).forEach(l => more.push(l));
  if (V.copy_gpu_ns >= 0 && V.gpu_share) more.push("on the GPU, layout-copy kernels took " + V.gpu_share + " of the kernels' time (measured, CUPTI: " + ms(V.copy_gpu_ns) + " of " + ms(V.gpu_ns) + " ms)");
  if (V.mixed_ops) more.push("and " + V.mixed_ops + " mixed-format op" + (V.mixed_ops === 1 ? "" : "s") + " (activations in one memory format, weights in another): " +
    (V.mixed_ops - V.mixed_without_copy) + " with a recorded conversion copy, " + V.mixed_without_copy + " without one" +
    (V.mixed_convolutions ? "; " + V.mixed_convolutions + " of " + V.convolutions + " convolutions run in a format the model's weights are not in" + (V.backend_mixed || "") : ""));
  more.forEach(m => app.append(el("div", { class: "muted", text: m })));
}
// Each birthplace (the line to change), its chain birth → carriers → payers, each op linked to
// its module's heatmap row, and the fixes.
if (V.birthplaces.length) {
  const box = el("div", { id: "birthplaces" });
  const stepText = s => s.role + ": " + s.name + " in " + (s.module || "(top)") + (s.source ? " at " + s.source : "");
  const step = s => el("a", { class: "chain-step " + s.role, href: "#" + rowAnchor(s.module), text: stepText(s) });
  V.birthplaces.forEach((b, i) => {
    const chain = el("div", { class: "chain mono" });
    b.chain.forEach((s, k) => { if (k) chain.append(" → "); chain.append(step(s)); });
    const more = b.carriers_total + " carrier" + (b.carriers_total === 1 ? "" : "s") + ", " + b.payers_total + " payer" + (b.payers_total === 1 ? "" : "s") + " in all";
    box.append(el("div", { class: "birthplace" + (b.accepted ? " muted" : "") },
      el("div", { class: "bp-title", text: (b.accepted ? "accepted (--accept " + b.where + "): " : (i + 1) + ". ") + b.text }),
      b.code ? el("div", { class: "mono bp-code", text: b.code }) : null,
      el("div", { text: b.cost }), chain, el("div", { class: "muted", text: more }),
      ...b.fixes.map((f, k) => el("div", { class: "fix", text: "→ " + (k ? "" : "fix: ") + f })),
      ...b.what_if.map(w => el("div", { class: "what-if " + w.saving }, el("div", { text: w.text }),
        ...w.notes.map(n => el("div", { class: "muted", text: n }))))));
  });
  if (V.what_if) box.prepend(el("div", { class: "muted", text: V.what_if }));
  section("Causes, by birthplace (where the layout was born; derived from the strides recorded on " + R.device + "): " + V.birthplaces.filter(b => !b.accepted).length, box);
}
if (V.causes.length) {
  const list = (a, k) => a.length <= k ? a.join(", ") : a.slice(0, k).join(", ") + " and " + (a.length - k) + " more";
  const ct = el("table", { id: "causes" }, el("thead", {}, el("tr", {}, ...["", "copies", "MB", "ms (measured)", "cause", "where", "fix"].map(h => el("th", { class: h === "copies" || h === "MB" || h.startsWith("ms") ? "" : "l", text: h })))));
  const cb = el("tbody");
  V.causes.forEach((k, i) => {
    const where = "in " + list(k.modules.map(m => m || "(top)"), 4) + (k.sources.length ? " at " + list(k.sources, 2) : "") + (k.origin_sources.length ? " (made at " + list(k.origin_sources, 2) + ")" : "");
    cb.append(el("tr", { class: "cause-row" }, td(i + 1), td(k.copies + " " + k.class.replace("_layout", "")), td(mb(k.bytes)), td(k.time_ns > 0 ? ms(k.time_ns) : "-"), td(k.what, "wrap"), td(where, "wrap mono"), td("→ " + k.fix, "wrap fix")));
  });
  ct.append(cb);
  section("Causes of the layout copies, grouped: " + V.causes.length + (V.causes.length === 1 ? " cause" : " causes") + ", most bytes first", el("div", { class: "scroll" }, ct));
}
section("Run: what was measured, derived and modelled");
const hdr = el("div", { class: "header" });
const hline = (k, v, cls) => hdr.append(el("div", { class: "k", text: k }), el("div", { class: cls || "", text: v }));
R.inputs.forEach((x, i) => hline("input " + i, x.spec + "  (" + x.dtype + ", " + x.layout + ")"));
hline("run", R.device + ", " + R.threads + " threads, LibTorch " + R.torch + ", warm-up " + R.warmup + ", recorded calls " + R.calls +
  (R.calls_identical ? " (same op sequence)" : " (calls DIFFER: op list is one call)"));
hline("mode", R.mode);
hline("status", R.status + (R.error ? ": " + R.error : ""), "status-" + R.status);
R.measured.forEach(m => hline("measured", m));
R.counters.filter(c => c.measured).forEach(c => hline("counter", c.event + (c.note ? " (" + c.note + ")" : "") +
  (c.mode === "sampled" ? ": sampled, one every " + c.period + " (" + c.samples + " samples, " + c.lost + " lost)" : ": measured")));
R.counters.filter(c => !c.measured).forEach(c => hline("not measured", c.event + ": " + c.reason));
R.not_measured.forEach(m => hline("not measured", m));
hline("derived", "copies, bytes, split points and layout classes, from the recorded tensor metadata");
hline("bandwidth", R.bandwidth + (R.bandwidth_note ? " (" + R.bandwidth_note + ")" : ""));
hline("modelled", "DTLB walks of every copy's addresses, two-level LRU TLB " + R.tlb);
if (R.gpu) hline("gpu", R.gpu + ": kernel, memcpy and memset times through CUPTI (measured)");
app.append(hdr);
if (R.ops_not_recorded > 0) app.append(el("div", { class: "note", text: "Recording stopped at --max-ops " + R.max_ops + ": " + R.ops_not_recorded + " op events of the call were not recorded; the figures cover the call up to there." }));
if (O.embedded < O.count) app.append(el("div", { class: "note", text: "This page holds " + O.embedded + " of the call's " + O.count + " op events (" + (O.nested_left_out ? "top-level ops only" : "") + "); the JSON report has every one." }));

const implicit = T.copies.implicit_layout, allBytes = Object.values(T.copy_bytes).reduce((a, b) => a + b, 0);
const cards = el("div", { class: "cards" });
const card = (v, l) => cards.append(el("div", { class: "card" }, el("div", { class: "v", text: v }), el("div", { class: "l", text: l })));
card(T.ops, "op events in one call (" + T.top_level_ops + " top-level)");
card(ms(T.wall_ns) + " ms", (R.backward ? "training step" : "forward") + ", measured, median of " + R.calls);
card(implicit, "implicit layout copies (derived)");
card(T.copies.explicit_layout, "explicit layout copies (derived)");
card(mb(allBytes) + " MB", "copied, all classes (derived)");
card(T.split_points, "split points (derived)");
card(T.dtlb.walks, "DTLB walks (modelled)");
if (T.gpu.traced) card(ms(T.gpu.gpu_ns) + " ms", "GPU time (measured, CUPTI)");
T.counters.forEach(c => card(c.value.toPrecision(4) + (c.mode === "sampled" ? " ± " + c.error.toPrecision(2) : ""),
  c.event + (c.mode === "sampled" ? " (sampled estimate" : " (measured") + (c.multiplexed ? ", multiplexed" : "") + ")"));
app.append(cards);

// --- layout lane ---------------------------------------------------------------------------
const top = [];
O.parent.forEach((p, i) => { if (p < 0) top.push(i); });
// Split points: [op, [kind], before, after, copies, copy bytes, suggestion] over the string table.
const splits = D.splits.rows.map(x => ({ op: x[0], kinds: x[1].map(k => S[k]), before: S[x[2]], after: S[x[3]], copies: x[4], copy_bytes: x[5], suggestion: S[x[6]] }));
const splitAt = new Set(splits.map(s => s.op));
const copyBytesAt = new Map();  // top-level op id -> bytes its copies moved
{
  const topOf = id => { let i = pos.get(id); while (i !== undefined && O.parent[i] >= 0) i = pos.get(O.parent[i]); return i === undefined ? -1 : O.id[i]; };
  D.copies.rows.forEach(c => { const t = topOf(c[0]); copyBytesAt.set(t, (copyBytesAt.get(t) || 0) + c[4]); });
}
section("Layout lane: top-level ops in execution order",
  el("div", { class: "muted", text: "Each op is coloured by the layout of the data it produces; ▼ marks a split point; bars below show the bytes its copies moved, to scale. Hover for the op." }));
const legend = el("div", { class: "legend" });
CLASSES.forEach(c => legend.append(el("span", { style: "--c:var(--" + c + ")", text: c })));
app.append(legend);
const laneWrap = el("div", { class: "lane-wrap" });
const canvas = el("canvas", { id: "lane" });
laneWrap.append(canvas);
app.append(laneWrap);
const tip = el("div", { id: "tip" });
document.body.append(tip);
const css = getComputedStyle(document.documentElement);
const colour = c => css.getPropertyValue("--" + c).trim() || "#ccc";
const laneW = Math.max(600, Math.min(30000, Math.max(laneWrap.clientWidth, top.length * 3)));
const laneH = 96, bandY = 14, bandH = 40, barTop = 60, barH = 32;
function drawLane() {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = laneW * dpr; canvas.height = laneH * dpr;
  canvas.style.width = laneW + "px"; canvas.style.height = laneH + "px";
  const g = canvas.getContext("2d");
  g.scale(dpr, dpr);
  const n = Math.max(top.length, 1), w = laneW / n;
  let maxBytes = 1;
  copyBytesAt.forEach(b => { maxBytes = Math.max(maxBytes, b); });
  top.forEach((i, k) => {
    const x = k * w;
    g.fillStyle = colour(opClass(i)); g.fillRect(x, bandY, w >= 4 ? w - 1 : Math.max(w, 1), bandH);
    if (splitAt.has(O.id[i])) { g.fillStyle = colour("strided"); g.beginPath(); g.moveTo(x + w / 2 - 5, 2); g.lineTo(x + w / 2 + 5, 2); g.lineTo(x + w / 2, bandY - 1); g.fill(); }
    const b = copyBytesAt.get(O.id[i]);
    if (b) { g.fillStyle = "#344054"; const h = Math.max(2, barH * b / maxBytes); g.fillRect(x, barTop, Math.max(w, 1.5), h); }
  });
}
drawLane();
canvas.addEventListener("mousemove", ev => {
  const r = canvas.getBoundingClientRect();
  const k = Math.floor((ev.clientX - r.left) / laneW * top.length);
  if (k < 0 || k >= top.length) { tip.style.display = "none"; return; }
  const i = top[k], b = copyBytesAt.get(O.id[i]);
  tip.textContent = opTip(i) + (splitAt.has(O.id[i]) ? "\nsplit point" : "") + (b ? "\ncopies: " + mb(b) + " MB" : "");
  tip.style.display = "block";
  tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - 570) + "px";
  tip.style.top = (ev.clientY + 14) + "px";
});
canvas.addEventListener("mouseleave", () => { tip.style.display = "none"; });

// --- heatmap -------------------------------------------------------------------------------
const H = D.heatmap;
section("Heatmap: " + (H.group_by === "op" ? "top-level ops" : "modules at depth " + H.depth) + " in execution order",
  el("div", { class: "muted", text: "Each cell is shaded by its value relative to its column. Click a row for its ops, an op for its nested ops. (" + H.legend + ")" }));
const colMax = H.columns.map((c, k) => H.rows.reduce((m, r) => Math.max(m, r.values[k]), 0));
const hm = el("table", { id: "heatmap" });
const hhead = el("tr", {}, el("th", { class: "l", text: H.group_by === "op" ? "op" : "module" }));
H.columns.forEach(c => hhead.append(el("th", {}, c.title, el("span", { class: "kind", text: c.kind }))));
hhead.append(el("th", { class: "l", text: "layout lane" }));
hm.append(el("thead", {}, hhead));
const hbody = el("tbody");
const rowOps = H.rows.map(() => []);
top.forEach(i => { if (O.row[i] >= 0) rowOps[O.row[i]].push(i); });
function opRow(i, nested, depth) {
  const tr = el("tr", { class: nested ? "nested-row" : "op-row" });
  const name = el("td", { class: "l mono" });
  name.style.paddingLeft = (18 + 14 * depth) + "px";
  const kids = childrenOf(O.id[i]);
  if (kids.length) name.append(el("span", { class: "expander", text: "▸ " }));
  name.append(str(O.name[i]));
  tr.append(name);
  const cell = el("td", { class: "wrap mono", colspan: String(H.columns.length + 1) });
  cell.textContent = opWhere(i) + "  |  in " + (O.in[i].map(shapeText).join("; ") || "-") + "  →  out " + (O.out[i].map(shapeText).join("; ") || "-") + "  |  " + ms(O.dur[i]) + " ms";
  tr.append(cell);
  tr.addEventListener("click", ev => {
    ev.stopPropagation();
    if (!kids.length) return;
    if (tr.dataset.open) { tr.dataset.open = ""; let n = tr.nextSibling; while (n && n.dataset.under === String(O.id[i])) { const x = n.nextSibling; n.remove(); n = x; } return; }
    tr.dataset.open = "1";
    let after = tr;
    kids.forEach(k => { const c = opRow(k, true, depth + 1); c.dataset.under = String(O.id[i]); after.after(c); after = c; });
  });
  return tr;
}
H.rows.forEach((row, r) => {
  const tr = el("tr", { class: "hm-row", "data-row": String(r), id: "hm-" + r }, td(row.label, "l"));
  row.values.forEach((v, k) => {
    const c = td(row.text[k]);
    const share = colMax[k] > 0 ? v / colMax[k] : 0;
    if (share > 0) c.style.background = "rgba(229, 83, 60, " + (0.08 + 0.6 * share).toFixed(3) + ")";
    tr.append(c);
  });
  tr.append(td(row.lane, "l mono"));
  tr.addEventListener("click", () => {
    if (tr.classList.toggle("open")) {
      let after = tr;
      const ops = rowOps[r];
      const shown = ops.slice(0, 2000);
      shown.forEach(i => { const o = opRow(i, false, 0); o.dataset.row = String(r); after.after(o); after = o; });
      if (ops.length > shown.length) { const more = el("tr", { class: "op-row" }, el("td", { class: "l muted", colspan: String(H.columns.length + 2), text: (ops.length - shown.length) + " more ops in this row (the JSON report has them)" })); more.dataset.row = String(r); after.after(more); }
    } else {
      let n = tr.nextSibling;
      while (n && !n.classList.contains("hm-row")) { const x = n.nextSibling; n.remove(); n = x; }
    }
  });
  hbody.append(tr);
});
hm.append(hbody);
app.append(el("div", { class: "scroll" }, hm));

// --- split points --------------------------------------------------------------------------
const groups = V.split_groups;
section("Split points (where the layout of the data changes): " + D.splits.count + (groups.length < splits.length ? " in " + groups.length + " groups of the same cause and suggestion" : "") + (groups.length > 50 ? ", the 50 with the most bytes copied first" : ""));
const splitBox = el("div", { id: "splits" });
app.append(splitBox);
function drawSplit(g, k) {
  const s = splits[g.points[0]], i = pos.get(s.op);
  const box = el("div", { class: "split" });
  const name = el("b", { text: (k + 1) + ". " + (i === undefined ? "op " + s.op : str(O.name[i])) });
  if (g.points.length === 1) box.append(el("div", {}, name, " in " + (i === undefined ? "?" : opWhere(i))));
  else box.append(el("div", {}, name, " at " + g.points.length + " places, same cause and suggestion: " + g.points.map(p => { const j = pos.get(splits[p].op); return j === undefined ? "op " + splits[p].op : opWhere(j); }).filter((w, n, a) => a.indexOf(w) === n).join("; ")));
  if (i !== undefined && str(O.text[i])) box.append(el("div", { class: "mono", text: str(O.text[i]) }));
  box.append(el("div", { class: "mono", text: s.before + " → " + s.after + "  [" + s.kinds.join(", ") + "]  leads to " + g.copies + " layout cop" + (g.copies === 1 ? "y" : "ies") + ", " + mb(g.copy_bytes) + " MB" + (g.points.length > 1 ? " together" : "") }));
  box.append(el("div", { text: "→ " + s.suggestion }));
  splitBox.append(box);
}
groups.slice(0, 50).forEach(drawSplit);
if (groups.length > 50) {
  const more = el("button", { id: "more-splits", text: "show " + (splits.length < D.splits.count ? "the first " : "all ") + splits.length + " split points" });
  more.addEventListener("click", () => { more.remove(); groups.slice(50).forEach((g, k) => drawSplit(g, k + 50)); });
  app.append(more);
}

// --- copies --------------------------------------------------------------------------------
section("Copies: " + D.copies.count + (D.copies.rows.length < D.copies.count ? " (the " + D.copies.rows.length + " largest shown)" : ""));
const filter = el("select", { id: "copy-filter" }, el("option", { value: "", text: "every class" }));
["implicit_layout", "explicit_layout", "broadcast", "dtype_device", "same_layout"].forEach(c => filter.append(el("option", { value: c, text: c + " (" + T.copies[c] + ")" })));
app.append(el("div", { class: "tools" }, "class ", filter, el("span", { class: "muted", text: "click MB or DTLB walks to sort" })));
const ct = el("table", { id: "copies" });
const heads = ["#", "class", "copy made by", "module and source", "source → destination", "MB", "DTLB walks"];
if (T.gpu.traced) heads.push("GPU ms");
const chead = el("tr");
heads.forEach((h, k) => chead.append(el("th", { class: (k >= 5 ? "sortable" : "l"), text: h, "data-col": String(k) })));
ct.append(el("thead", {}, chead));
const cbody = el("tbody");
ct.append(cbody);
let copies = D.copies.rows.map((c, k) => ({ c, k }));
// The first 1,000 rows of the order and filter chosen are drawn; the rest when asked.
let copyLimit = 1000;
const moreCopies = el("button", { id: "more-copies", onclick: () => { copyLimit = Infinity; drawCopies(); } });
function drawCopies() {
  cbody.textContent = "";
  const chosen = copies.filter(x => !filter.value || x.c[3] === filter.value);
  moreCopies.textContent = "show all " + chosen.length + " copies";
  moreCopies.style.display = chosen.length > copyLimit ? "" : "none";
  chosen.slice(0, copyLimit).forEach(({ c, k }) => {
    const culprit = pos.get(c[1]);
    const tr = el("tr", { class: "copy-row" }, td(k + 1), td(c[3], "l"), td(culprit === undefined ? "op " + c[1] : str(O.name[culprit]), "l mono"),
      td(culprit === undefined ? "" : opWhere(culprit), "l"), td(shapeText(c[5]) + "  →  " + SH[c[6]][3], "l mono"), td(mb(c[4])), td(c[7]));
    if (T.gpu.traced) tr.append(td(c[8] >= 0 ? ms(c[8]) : "-"));
    cbody.append(tr);
  });
}
filter.addEventListener("change", drawCopies);
let sortDir = -1;
chead.querySelectorAll("th.sortable").forEach(th => th.addEventListener("click", () => {
  const key = { 5: 4, 6: 7, 7: 8 }[th.dataset.col];
  sortDir = -sortDir;
  copies.sort((a, b) => sortDir * (a.c[key] - b.c[key]));
  drawCopies();
}));
drawCopies();
app.append(el("div", { class: "scroll" }, ct), moreCopies);

// --- gradient layouts ----------------------------------------------------------------------
if (R.backward) {
  section("Gradient layouts (what DDP will see): " + D.grads.length + " parameters");
  const gt = el("table", { id: "grads" }, el("thead", {}, el("tr", {}, ...["parameter", "verdict", "sizes", "strides", "gradient strides", "what it means"].map(h => el("th", { class: "l", text: h })))));
  const gb = el("tbody");
  D.grads.forEach(g => gb.append(el("tr", {}, td(g.name, "l mono"), td(g.verdict, "l " + (g.verdict === "match" ? "good" : g.verdict === "frozen" || g.verdict === "no_grad" ? "" : "bad")),
    td(g.sizes, "l mono"), td(g.strides, "l mono"), td(g.grad_strides, "l mono"), td(g.suggestion, "wrap"))));
  gt.append(gb);
  app.append(el("div", { class: "scroll" }, gt));
}
// When the page finished drawing, from the start of navigation (scripts/bench-html.py reads it).
document.body.dataset.drawnMs = performance.now().toFixed(1);

// --- compare-formats: the variants side by side ---------------------------------------------
function formats() {
  const V = D.variants;
  app.append(el("h1", { text: "layoutprof compare-formats — " + D.model }));
  app.append(el("div", { id: "verdict", class: D.verdict.clear ? "good" : "", text: D.verdict.summary }));
  const vt = el("table", { id: "variants" }, el("thead", {}, el("tr", {}, ...["variant", "status", "inputs", "converted", "plain calls", "median ms", "min–max ms", "IQR ms (q1–q3)", "against the fastest"].map(h => el("th", { class: "l", text: h })))));
  const vb = el("tbody");
  V.forEach(v => {
    const c = v.conversion, t = v.time;
    const vs = D.verdict.against.find(a => a.variant === v.name);
    vb.append(el("tr", { class: "variant-row" }, td(v.name, "l mono"),
      td(v.ran ? v.status + (v.error ? ": " + v.error : "") : "not run: " + v.skipped, "l " + (v.ok ? "" : "bad")),
      td(v.inputs.join(", "), "l mono"),
      td(c.to ? c.parameters + " of " + c.parameters_total + " parameters, " + c.buffers + " of " + c.buffers_total + " buffers, " + c.inputs + " inputs to " + c.to : "nothing (as given)", "l"),
      td(t.calls), td(t.calls ? ms(t.median) : "-"), td(t.calls ? ms(t.min) + "–" + ms(t.max) : "-"),
      td(t.calls ? ms(t.q3 - t.q1) + " (" + ms(t.q1) + "–" + ms(t.q3) + ")" : "-"),
      td(v.name === D.verdict.fastest ? "fastest" : vs ? vs.ratio.toFixed(2) + "x, +" + ms(vs.difference_ns) + " ms, " + (vs.beyond_noise ? "beyond noise" : "within noise") : "", "l " + (vs && vs.beyond_noise ? "bad" : ""))));
  });
  vt.append(vb);
  section("Variants (plain calls measured without the observer, interleaved across the variants)", el("div", { class: "scroll" }, vt));
  const notes = [...D.verdict.against.map(a => a.variant + ": " + a.why), ...D.verdict.not_timed];
  if (D.verdict.control) notes.push("control: " + D.verdict.control);
  notes.push("noise rule: a difference counts when both variants have at least 5 plain calls, their interquartile ranges do not overlap, and their medians differ by more than either variant's interquartile range");
  app.append(el("ul", {}, ...notes.map(n => el("li", { text: n }))));

  const figs = ["implicit", "MB copied", "MB layout", "split points"];
  const mt = el("table", { id: "format-modules" });
  const h1 = el("tr", {}, el("th", { class: "l", text: "module (depth " + D.depth + ")" }));
  V.forEach(v => h1.append(el("th", { colspan: "4", text: v.name })));
  const h2 = el("tr", {}, el("th", { class: "l", text: "" }));
  V.forEach(() => figs.forEach(f => h2.append(el("th", { text: f }))));
  mt.append(el("thead", {}, h1, h2));
  const mbody = el("tbody");
  const colMax = [0, 0, 0, 0];
  V.forEach(v => v.rows.forEach(r => r.forEach((x, k) => { colMax[k] = Math.max(colMax[k], x); })));
  D.labels.forEach((label, i) => {
    const tr = el("tr", { class: "format-row" }, td(label, "l mono"));
    V.forEach(v => {
      const r = v.rows[i];
      [0, 1, 2, 3].forEach(k => {
        const c = td(!r ? "-" : k === 1 || k === 2 ? mb(r[k]) : r[k]);
        if (r && colMax[k] > 0 && r[k] > 0 && label !== "(total)") c.style.background = "rgba(229, 83, 60, " + (0.08 + 0.6 * r[k] / colMax[k]).toFixed(3) + ")";
        tr.append(c);
      });
    });
    mbody.append(tr);
  });
  mt.append(mbody);
  section("Copies per module and variant (derived)", el("div", { class: "scroll" }, mt));

  D.verdict.copies.forEach(d => {
    const ct = el("table", { class: "copy-changes", "data-variant": d.variant }, el("thead", {}, el("tr", {}, ...["", "class", "op", "module", "source", "layouts", "copies", "MB"].map(h => el("th", { class: "l", text: h })))));
    const cb = el("tbody");
    [["adds", d.added], ["avoids", d.avoided], ["resizes", d.resized]].forEach(([what, list]) => list.forEach(k => cb.append(el("tr", { class: "copy-change " + what },
      td(what, "l " + (what === "adds" ? "bad" : what === "avoids" ? "good" : "")), td(k.class, "l"), td(k.op, "l mono"), td(k.module, "l mono"),
      td(k.source + (k.source_text ? "  " + k.source_text : ""), "wrap mono"), td(k.src + " → " + k.dst, "l mono"),
      td(k.count[0] + " → " + k.count[1]), td(mb(k.bytes[0]) + " → " + mb(k.bytes[1]))))));
    ct.append(cb);
    section(d.variant + " against as_given: adds " + d.added.length + " copy groups (" + mb(d.added_bytes) + " MB), avoids " + d.avoided.length + " (" + mb(d.avoided_bytes) + " MB)",
      d.added.length + d.avoided.length + d.resized.length ? el("div", { class: "scroll" }, ct) : el("div", { class: "muted", text: "the same copies as as_given" }));
  });
  document.body.dataset.drawnMs = performance.now().toFixed(1);
}

// --- a comparison --------------------------------------------------------------------------
function comparison() {
  app.append(el("h1", { text: "layoutprof: " + D.base + " → " + D.new }));
  const failed = D.checks.filter(k => !k.passed);
  app.append(el("div", { class: failed.length ? "bad" : "good", id: "verdict",
    text: failed.length ? "REGRESSED: " + failed.length + " of " + D.checks.length + " checks failed" : "OK: " + D.checks.length + " checks passed" }));
  const checks = el("table", { id: "checks" }, el("thead", {}, el("tr", {}, ...["", "scope", "rule", "baseline", "new", "what changed"].map(h => el("th", { class: "l", text: h })))));
  const cb = el("tbody");
  failed.concat(D.checks.filter(k => k.passed)).forEach(k => cb.append(el("tr", { class: k.passed ? "check-pass" : "check-fail" },
    td(k.passed ? "ok" : "REGRESSION", "l " + (k.passed ? "good" : "bad")), td(k.scope, "l mono"), td(k.rule, "l"), td(k.before), td(k.after), td(k.detail, "wrap"))));
  checks.append(cb);
  section("Checks, regressions first", el("div", { class: "scroll" }, checks));
  if (D.notes.length) section("Notes", el("ul", {}, ...D.notes.map(n => el("li", { text: n }))));
  const figs = [["implicit_copies", "implicit copies", String], ["explicit_copies", "explicit copies", String], ["copy_bytes", "MB copied", mb],
    ["split_points", "split points", String], ["dtlb_walks", "DTLB walks", String], ["time_ns", "time ms", ms]];
  const mt = el("table", { id: "modules" });
  const h1 = el("tr", {}, el("th", { class: "l", text: "module" }));
  figs.forEach(f => h1.append(el("th", { text: f[1] + " (baseline | new)" })));
  mt.append(el("thead", {}, h1));
  const mbody = el("tbody");
  const worse = d => figs.slice(0, 5).some(f => d[f[0]][1] > d[f[0]][0]);
  D.modules.slice().sort((a, b) => worse(b) - worse(a)).forEach(d => {
    const tr = el("tr", { class: "module-row" }, td((d.module || "(top)") + (!d.in_base ? " (new)" : !d.in_new ? " (removed)" : ""), "l mono"));
    figs.forEach(f => { const [a, b] = d[f[0]]; const c = td(f[2](a) + " | " + f[2](b)); if (f[0] !== "time_ns" && b > a) c.className = "bad"; else if (f[0] !== "time_ns" && b < a) c.className = "good"; tr.append(c); });
    mbody.append(tr);
  });
  mt.append(mbody);
  section("Modules side by side, regressions first", el("div", { class: "muted", text: "copies, MB and split points derived, DTLB walks modelled, time measured" }), el("div", { class: "scroll" }, mt));
  document.body.dataset.drawnMs = performance.now().toFixed(1);
}
})();
