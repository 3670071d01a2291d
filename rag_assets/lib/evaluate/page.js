"use strict";
// The evaluation page: reads the data embedded in #page-data (gzip, base64), draws every section.
// Everything is built with DOM calls and textContent: nothing from the corpus is ever parsed as HTML.

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"];
const TOP = 6;  // configurations drawn against the budget
let D = null;
let byKey = {};

// the view's state in the address (?a=...&b=...): a link opens the same pair, runs, chart and filters
const state = Object.fromEntries(new URLSearchParams(location.search));
function saveState(changes) {
  Object.assign(state, changes);
  for (const k of Object.keys(state)) if (state[k] === "" || state[k] === null || state[k] === undefined) delete state[k];
  const query = new URLSearchParams(state).toString();
  try {
    history.replaceState(null, "", (query ? "?" + query : location.pathname) + location.hash);
  } catch (error) { /* a page opened from a file may refuse: the view still changes */ }
}

// a change that can take a moment (hundreds of needles to draw) shows that it is working first
function busy(work) {
  const flag = document.getElementById("busy");
  flag.hidden = false;
  document.body.setAttribute("aria-busy", "true");
  setTimeout(() => {
    try { work(); } finally { flag.hidden = true; document.body.removeAttribute("aria-busy"); }
  }, 20);
}

function csv(rows) {
  return rows.map(row => row.map(v => {
    const t = v === null || v === undefined ? "" : String(v);
    return /[",\n\r]/.test(t) ? '"' + t.replace(/"/g, '""') + '"' : t;
  }).join(",")).join("\n") + "\n";
}

function download(name, text) {
  const link = el("a", {href: URL.createObjectURL(new Blob([text], {type: "text/csv"})), download: name});
  document.body.append(link);
  link.click();
  link.remove();
}

async function load() {
  const text = document.getElementById("page-data").textContent.trim();
  const bytes = Uint8Array.from(atob(text), c => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

function el(tag, attributes, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === null || value === undefined) continue;
    if (name === "class") node.className = value;
    else if (name === "on") for (const [event, handler] of Object.entries(value)) node.addEventListener(event, handler);
    else node.setAttribute(name, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function svgEl(tag, attributes, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [name, value] of Object.entries(attributes || {})) if (value !== null && value !== undefined) node.setAttribute(name, value);
  for (const child of children.flat()) if (child) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
}

const f3 = v => (v === null || v === undefined) ? "-" : Number(v).toFixed(3);
const f2 = v => (v === null || v === undefined) ? "-" : Number(v).toFixed(2);
const f0 = v => (v === null || v === undefined) ? "-" : Math.round(Number(v)).toLocaleString("en");
const pv = v => (v === null || v === undefined) ? "-" : (v < 0.001 ? Number(v).toExponential(1) : Number(v).toPrecision(2));
const interval = (row, name) => row[name] === null || row[name] === undefined ? "-" :
  `${f3(row[name])} [${f2(row[name + "_low"])}, ${f2(row[name + "_high"])}]`;
const budgetName = b => `success_at_${b}_tokens`;
const nameOf = key => byKey[key] ? byKey[key].name : key;

// ---------------------------------------------------------------------------------------------- the decision

function decisionSection() {
  const body = document.getElementById("decision-body");
  body.textContent = "";
  const d = D.decision, M = D.measure;
  if (!d.pick) {
    body.append(el("pre", {}, D.verdict));
    return;
  }
  const pick = byKey[d.pick];
  body.append(el("p", {class: "ship", "data-testid": "winner"}, "Ship ", el("b", {"data-testid": "winner-name"}, pick.name),
    ` at ${D.budget} context tokens (${D.tokenizer})`));
  body.append(el("p", {class: "figure"},
    `Success within ${D.budget} tokens ${interval(pick, M)}, MRR ${interval(pick, "mrr")} over ${pick.needles} needles `
    + `(${pick.queries} queries); ${f0(pick["context_at_" + D.budget + "_tokens"])} context tokens a question; `
    + `median ${f2(pick.median_latency_ms)} ms a query.`));
  if (d.runner_up) {
    const second = byKey[d.runner_up], t = d.test, m = d.margin;
    body.append(el("p", {class: "figure", "data-testid": "runner-up"}, "Runner-up ", el("b", {}, second.name),
      `: ${interval(second, M)}. Margin ${m.value >= 0 ? "+" : ""}${f3(m.value)} [${f2(m.low)}, ${f2(m.high)}] over `
      + `${m.needles} needles`,
      t ? `; paired test +${t.wins}/-${t.losses} needles, adjusted p = ${pv(t.p_adjusted)} (raw ${pv(t.p_value)}, ${D.adjustment})` : "",
      t ? el("span", {class: t.p_adjusted < D.alpha ? "significant" : "not-significant"},
        t.p_adjusted < D.alpha ? " : the pick is better" : " : not distinguishable") : ""));
    body.append(el("p", {class: "muted"},
      `${d.equal.length} of ${d.competing - 1} other competing configurations cannot be told apart from the pick `
      + `(adjusted p >= ${D.alpha}); ${d.not_competing} do not compete (whole documents larger than the budget). `
      + `${d.significant} of ${d.tests} difference tests significant after ${D.adjustment} (${d.significant_raw} at raw p < ${D.alpha})`
      + (d.non_inferiority_tests ? `; ${d.non_inferiority_tests} non-inferiority tests of cheaper configurations in the same family.` : ".")));
  }
  if ((d.choice || []).length) {  // the tie and how it was broken, the cheaper equivalent, what the needles can tell
    body.append(el("ul", {class: "lines", "data-testid": "choice"}, d.choice.map(line => el("li", {}, line))));
  }
  needleChanges(body);
  if (d.questions.length) {
    body.append(el("h3", {}, "The questions"));
    body.append(el("ul", {class: "lines", "data-testid": "questions"}, d.questions.map(t => {
      const better = t.p_adjusted < D.alpha;
      return el("li", {}, el("b", {}, t.asks), ` ${t.a} vs ${t.b}: ${f3(t.a_value)} vs ${f3(t.b_value)}, `
        + `+${t.wins}/-${t.losses} needles, adjusted p = ${pv(t.p_adjusted)} `,
        el("span", {class: better ? "significant" : "not-significant"},
          better ? (t.a_value > t.b_value ? `(${t.a} is better)` : `(${t.b} is better)`) : "(no difference shown)"));
    })));
  }
  body.append(el("details", {}, el("summary", {}, "The verdict as `evaluate` prints it"), el("pre", {}, D.verdict)));
}

// the needles a corpus edit lost (left out of this evaluation, each with what happened and its successor) or moved
function needleChanges(body) {
  const changes = D.needle_changes || [];
  const lost = changes.filter(c => c.status !== "kept" && c.status !== "moved");
  const moved = changes.filter(c => c.status === "moved");
  if (!changes.length) return;
  const box = el("div", {class: "needle-changes", "data-testid": "needle-changes"});
  if (lost.length) {
    const one = lost.length === 1;
    box.append(el("p", {class: "warning"}, `${lost.length} needle${one ? "" : "s"} left out of this evaluation: the `
      + `corpus no longer holds ${one ? "it" : "them"} as written (rag-assets needles repair offers `
      + `${one ? "its successor" : "their successors"}).`));
    box.append(el("ul", {class: "lines"}, lost.map(c => el("li", {"data-needle": c.needle_id}, el("b", {}, c.needle_id),
      `: ${c.reason}`, c.successor ? el("span", {}, "; successor offered: ", el("q", {}, c.successor)) : ""))));
  }
  if (moved.length) {
    box.append(el("p", {class: "muted"}, `${moved.length} needle${moved.length === 1 ? "" : "s"} moved to another `
      + "page and kept: " + moved.map(c => `${c.needle_id} (${c.previous_doc_id} -> ${c.doc_id})`).join(", ")));
  }
  body.append(box);
}

// ---------------------------------------------------------------------------------------------- the charts

function chart(target, {series, xs, logX, xLabel, yLabel, marker, onPick, onRemove, yMax}) {
  const W = 760, H = 300, L = 48, R = 28, T = 12, B = 40;
  const x0 = Math.min(...xs), x1 = Math.max(...xs);
  const X = v => x0 === x1 ? (L + W - R) / 2 :
    L + 10 + (W - L - R - 10) * (logX ? (Math.log(v) - Math.log(x0)) / (Math.log(x1) - Math.log(x0)) : (v - x0) / (x1 - x0));
  const top = yMax || 1;
  const Y = v => T + (H - T - B) * (1 - v / top);
  const svg = svgEl("svg", {width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img"});
  for (let g = 0; g <= 5; g++) {
    const v = top * g / 5;
    svg.append(svgEl("line", {class: "grid", x1: L, x2: W - R, y1: Y(v), y2: Y(v)}),
      svgEl("text", {x: L - 6, y: Y(v) + 4, "text-anchor": "end"}, top === 1 ? v.toFixed(1) : Math.round(v)));
  }
  let lastLabel = -Infinity;  // x labels never run together: one that would touch the previous is left out
  for (const x of xs) {
    const at = X(x), label = String(x);
    if (at - lastLabel < Math.max(30, 7 * label.length + 8)) continue;
    lastLabel = at;
    svg.append(svgEl("text", {x: at, y: H - B + 16, "text-anchor": "middle"}, label));
  }
  svg.append(svgEl("line", {class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B}),
    svgEl("line", {class: "axis", x1: L, x2: L, y1: T, y2: H - B}),
    svgEl("text", {x: (L + W) / 2, y: H - 6, "text-anchor": "middle"}, xLabel),
    svgEl("text", {x: 12, y: (T + H - B) / 2, transform: `rotate(-90 12 ${(T + H - B) / 2})`, "text-anchor": "middle"}, yLabel));
  if (marker) svg.append(svgEl("line", {x1: X(marker), x2: X(marker), y1: T, y2: H - B, stroke: "#8b93a5", "stroke-dasharray": "4 3"}));
  const colorOf = (s, i) => s.color || COLORS[i % COLORS.length];
  // the emphasised series (the pick) is drawn last, over any identical line, and wider
  const drawOrder = series.map((s, i) => [s, i]).sort((p, q) => (p[0].emphasis ? 1 : 0) - (q[0].emphasis ? 1 : 0));
  for (const [s, i] of drawOrder) {
    const color = colorOf(s, i), nudge = (i - series.length / 2) * 3, width = s.emphasis ? 4 : 2;
    const points = s.points.filter(p => p.y !== null && p.y !== undefined);
    const group = svgEl("g", {class: "series" + (s.emphasis ? " emphasis" : ""), "data-key": s.key || ""});
    group.append(svgEl("title", {}, s.name));
    group.append(svgEl("path", {d: points.map((p, j) => `${j ? "L" : "M"}${X(p.x) + nudge},${Y(p.y)}`).join(" "),
      fill: "none", stroke: color, "stroke-width": width}));
    for (const p of points) {
      if (p.lo !== null && p.lo !== undefined) group.append(svgEl("line", {x1: X(p.x) + nudge, x2: X(p.x) + nudge,
        y1: Y(p.lo), y2: Y(p.hi), stroke: color, "stroke-width": s.emphasis ? 2.5 : 1.5}));
      group.append(svgEl("circle", {cx: X(p.x) + nudge, cy: Y(p.y), r: s.emphasis ? 4.5 : 3, fill: color}));
    }
    if (onPick && s.key) group.addEventListener("click", () => onPick(s.key));
    svg.append(group);
  }
  target.textContent = "";
  target.append(svg, el("div", {class: "legend"}, series.map((s, i) => el("span", {
    "data-key": s.key || "", class: s.emphasis ? "emphasis" : null, on: onPick && s.key ? {click: () => onPick(s.key)} : null},
    el("i", {style: `background:${colorOf(s, i)}`}), s.name,
    onRemove && s.key ? el("button", {class: "remove", title: "remove from the chart", "data-testid": "remove-series",
      on: {click: e => { e.stopPropagation(); onRemove(s.key); }}}, "\u00d7") : ""))));
}

let chartKeys = null;  // the configurations drawn against the budget: the top ones, then as the reader chooses

function curves() {
  if (!chartKeys) chartKeys = state.chart ? state.chart.split(",").filter(k => byKey[k])
    : D.configurations.filter(c => c.rank !== null).sort((a, b) => a.rank - b.rank).slice(0, TOP).map(c => c.key);
  const drawn = chartKeys.map(k => byKey[k]).filter(Boolean);
  chart(document.getElementById("budget-chart"), {
    xs: D.budgets, logX: true, marker: D.budget, xLabel: `context budget (tokens, ${D.tokenizer})`,
    yLabel: "success within the budget",
    series: drawn.map(c => ({key: c.key, name: (c.rank ? `#${c.rank} ` : "") + c.name + (c.key === D.decision.pick ? " (the pick)" : ""),
      emphasis: c.key === D.decision.pick, points: D.budgets.map(b => ({
      x: b, y: c[budgetName(b)], lo: c[budgetName(b) + "_low"], hi: c[budgetName(b) + "_high"]}))})),
    onPick: key => { setSide(key, D.decision.pick === key ? D.decision.runner_up : D.decision.pick); location.hash = "#side-by-side"; },
    onRemove: key => { chartKeys = chartKeys.filter(k => k !== key); saveState({chart: chartKeys.join(",")}); curves(); },
  });
  const add = el("select", {"data-testid": "add-series", on: {change: e => {
    if (e.target.value) { chartKeys = [...chartKeys, e.target.value]; saveState({chart: chartKeys.join(",")}); curves(); } }}},
    el("option", {value: ""}, "add a configuration to the chart..."),
    D.configurations.filter(c => !chartKeys.includes(c.key)).map(c => el("option", {value: c.key}, (c.rank ? `#${c.rank} ` : "") + c.name)));
  document.getElementById("budget-chart").append(el("div", {class: "pickers"}, add));
  const pick = byKey[D.decision.pick];
  if (!pick) return;
  const ks = [1, 4, 8, 20];
  const rows = D.configurations.filter(c => c.model === pick.model && c.retriever === pick.retriever);
  chart(document.getElementById("k-chart"), {
    xs: ks, logX: true, xLabel: "k (chunks)", yLabel: "success@k",
    series: rows.map(c => ({key: c.key, name: c.strategy, points: ks.map(k => ({x: k, y: c["success_at_" + k],
      lo: c[`success_at_${k}_low`], hi: c[`success_at_${k}_high`]}))})),
    onPick: key => { setSide(key, D.decision.pick); location.hash = "#side-by-side"; },
  });
}

function sizeSeries(points, value) {
  // one line per family and overlap, in the unit most points are in
  const units = points.map(p => p.unit);
  const unit = units.filter(u => u === "tokens").length >= units.length / 2 ? "tokens" : "characters";
  const lines = {};
  for (const p of points.filter(p => p.unit === unit)) {
    const name = `${p.family} (${p.kind})` + (p.overlap ? `, overlap ${p.overlap}` : "");
    (lines[name] = lines[name] || []).push({x: p.size, y: p[value], lo: p[value + "_low"], hi: p[value + "_high"]});
  }
  return {unit, series: Object.entries(lines).map(([name, pts]) => ({name, points: pts.sort((a, b) => a.x - b.x)}))};
}

function sizes() {
  const section = document.getElementById("sizes");
  const points = (D.sizes && D.sizes.points) || [];
  if (!points.length) { section.hidden = true; return; }
  const k = D.sizes.k;
  const within = sizeSeries(points, "success"), atK = sizeSeries(points, `success_at_${k}`);
  const xs = [...new Set(points.filter(p => p.unit === within.unit).map(p => p.size))].sort((a, b) => a - b);
  chart(document.getElementById("size-chart"), {xs, logX: true, series: within.series,
    xLabel: `chunk size (${within.unit})`, yLabel: `success within ${D.budget} tokens`});
  chart(document.getElementById("size-k-chart"), {xs, logX: true, series: atK.series,
    xLabel: `chunk size (${within.unit})`, yLabel: `success@${k}`});
  const table = document.getElementById("size-table");
  table.textContent = "";
  table.append(el("tr", {}, ["family", "kind", "strategy", "size", "overlap", `S@${D.budget}t`, `S@${k}`,
    "tokens embedded", "embedding s"].map(h => el("th", {}, h))));
  const figure = (p, name) => p[name] === null || p[name] === undefined ? "-" :
    `${p[name].toFixed(3)} [${p[name + "_low"].toFixed(2)}, ${p[name + "_high"].toFixed(2)}]`;
  for (const p of points) {
    table.append(el("tr", {"data-strategy": p.strategy}, [p.family, p.kind, p.strategy, `${p.size} ${p.unit}`,
      String(p.overlap), figure(p, "success"), figure(p, `success_at_${k}`),
      p.tokens_embedded === null ? "-" : p.tokens_embedded.toLocaleString("en"),
      p.embedding_seconds === null || p.embedding_seconds === undefined ? "-" : p.embedding_seconds.toFixed(1)]
      .map(v => el("td", {}, v))));
  }
}

function refusal() {
  const target = document.getElementById("refusal-body");
  target.textContent = "";
  const r = D.refusal || {};
  for (const line of r.lines || []) target.append(el("p", {}, line));
  if (!r.points || !r.points.length) return;
  const cuts = r.points.map(p => p.cut);
  const div = el("div");
  target.append(el("p", {class: "hint"}, `Against the cut on ${r.gate}'s distance: the share of in-domain questions answered with `
    + "their needle, and of out-of-domain questions answered anyway (bluffs). The dashed line is the suggested cut."), div);
  const suggested = r.points.find(p => p.suggested);
  const drawn = r.points.filter((p, i) => i % Math.ceil(r.points.length / 40) === 0 || p.suggested);
  chart(div, {xs: drawn.map(p => Number(p.cut.toFixed(2))), logX: false, marker: suggested ? Number(suggested.cut.toFixed(2)) : null,
    xLabel: `cut (${r.gate} distance)`, yLabel: "share of questions",
    series: [
      {name: "answered with the needle (in-domain)", points: drawn.map(p => ({x: Number(p.cut.toFixed(2)), y: p.in_domain ? p.answered_with_needle / p.in_domain : null}))},
      {name: "bluffs (out-of-domain answered)", points: drawn.map(p => ({x: Number(p.cut.toFixed(2)), y: p.out_of_domain ? p.bluffs / p.out_of_domain : null}))},
    ]});
}

// ---------------------------------------------------------------------------------------------- the table

const COLUMNS = () => [
  ["rank", "rank", c => c.rank === null ? (c.external ? "external" : "-") : c.rank],
  ["model", "model", c => c.model, true], ["strategy", "strategy", c => c.strategy, true], ["retriever", "retriever", c => c.retriever, true],
  ["needles", "needles", c => c.needles],
  [D.measure, `S@${D.budget}t`, c => interval(c, D.measure)],
  ["context_at_" + D.budget + "_tokens", `context@${D.budget}t`, c => f0(c["context_at_" + D.budget + "_tokens"])],
  ["mrr", "MRR", c => interval(c, "mrr")],
  ["success_at_1", "S@1", c => interval(c, "success_at_1")], ["success_at_4", "S@4", c => interval(c, "success_at_4")],
  ["success_at_20", "S@20", c => interval(c, "success_at_20")], ["ndcg_at_10", "nDCG@10", c => interval(c, "ndcg_at_10")],
  ["tokens_to_needle", "tokens to needle", c => f0(c.tokens_to_needle)],
  ["median_latency_ms", "median ms", c => f2(c.median_latency_ms)],
];
let sortState = {column: null, descending: true};
const filterState = {model: "", strategy: "", retriever: "", text: ""};

function tableSection() {
  sortState.column = D.measure;
  const filters = document.getElementById("filters");
  for (const dim of ["model", "strategy", "retriever"]) {
    const values = [...new Set(D.configurations.map(c => c[dim]))].sort();
    filters.append(el("label", {}, dim + " ", el("select", {"data-testid": "filter-" + dim, on: {change: e => { filterState[dim] = e.target.value; saveState({["f" + dim]: e.target.value}); drawTable(); }}},
      el("option", {value: ""}, "all"), values.map(v => el("option", {value: v}, v)))));
  }
  filters.append(el("label", {}, "search ", el("input", {type: "search", "data-testid": "filter-text",
    on: {input: e => { filterState.text = e.target.value.toLowerCase(); saveState({t: e.target.value}); drawTable(); }}})));
  filters.append(el("span", {class: "muted", id: "table-count"}));
  filters.append(el("button", {"data-testid": "export-comparison", on: {click: exportComparison}}, "export CSV"));
  for (const dim of ["model", "strategy", "retriever"]) {  // the filters the address holds
    const value = state["f" + dim];
    if (value) { filterState[dim] = value; filters.querySelector(`[data-testid=filter-${dim}]`).value = value; }
  }
  if (state.t) { filterState.text = state.t.toLowerCase(); filters.querySelector("[data-testid=filter-text]").value = state.t; }
  drawTable();
}

let tableRows = [];

function exportComparison() {  // the rows shown (filtered, in their order), every column's value and its interval
  const keys = COLUMNS().map(([key]) => key);
  const bounded = keys.filter(key => D.configurations.some(c => (key + "_low") in c));
  download("configurations.csv", csv([
    ["name", ...keys, ...bounded.flatMap(key => [key + "_low", key + "_high"])],
    ...tableRows.map(c => [c.name, ...keys.map(key => c[key]), ...bounded.flatMap(key => [c[key + "_low"], c[key + "_high"]])])]));
}

function drawTable() {
  const table = document.getElementById("comparison-table");
  table.textContent = "";
  const columns = COLUMNS();
  table.append(el("thead", {}, el("tr", {}, columns.map(([key, label, , text]) => el("th", {
    class: (text ? "text " : "") + (sortState.column === key ? (sortState.descending ? "sorted-desc" : "sorted-asc") : ""),
    "data-column": key, on: {click: () => { sortState = {column: key, descending: sortState.column === key ? !sortState.descending : !text}; drawTable(); }}}, label)))));
  const rows = D.configurations.filter(c => ["model", "strategy", "retriever"].every(d => !filterState[d] || c[d] === filterState[d])
    && (!filterState.text || c.name.toLowerCase().includes(filterState.text)));
  const k = sortState.column, sign = sortState.descending ? -1 : 1;
  rows.sort((a, b) => {
    const x = a[k], y = b[k];
    if (x === null || x === undefined) return (y === null || y === undefined) ? 0 : 1;
    if (y === null || y === undefined) return -1;
    return (typeof x === "string" ? x.localeCompare(y) : x - y) * sign;
  });
  table.append(el("tbody", {}, rows.map(c => el("tr", {class: c.key === D.decision.pick ? "pick" : c.key === D.decision.runner_up ? "runner-up" : null, "data-key": c.key},
    columns.map(([, , value, text]) => el("td", {class: text ? "text" : null}, value(c)))))));
  tableRows = rows;
  document.getElementById("table-count").textContent = ` ${rows.length} of ${D.configurations.length} configurations `;
}

// ---------------------------------------------------------------------------------------------- chunks

function chunkView(ref, needleIndex, rank, distance, score) {
  const [id, doc, section, shown, length] = D.chunks[ref];
  const key = `${ref}:${needleIndex}`;
  const highlight = D.highlights[key], snippet = D.snippets[key];
  const holds = highlight || snippet;
  const label = el("span", {class: "label"}, (rank === null ? "" : `#${rank} `) + id + (section ? ` (${section})` : "")
    + (distance !== null && distance !== undefined ? `, distance ${f3(distance)}` : score !== null && score !== undefined ? `, score ${f3(score)}` : "")
    + (holds ? ": holds the needle" : ""));
  const box = el("div", {class: "chunk" + (holds ? " holds" : ""), "data-testid": holds ? "needle-chunk" : "chunk"}, label);
  if (highlight) {
    box.append(shown.slice(0, highlight[0]), el("mark", {}, shown.slice(highlight[0], highlight[1])), shown.slice(highlight[1]),
      length > shown.length ? ` ... (${length.toLocaleString("en")} characters)` : "");
  } else if (snippet) {
    box.append(shown.slice(0, 200), ` ... [character ${snippet[0].toLocaleString("en")} of ${length.toLocaleString("en")}] ...`,
      snippet[1].slice(0, snippet[2]), el("mark", {}, snippet[1].slice(snippet[2], snippet[3])), snippet[1].slice(snippet[3]), " ...");
  } else {
    box.append(shown, length > shown.length ? ` ... (${length.toLocaleString("en")} characters)` : "");
  }
  return box;
}

function answerView(key, answer, needleIndex) {
  const list = [];
  answer.c.forEach((ref, i) => { if (ref !== null) list.push(chunkView(ref, needleIndex, i + 1, answer.d[i], answer.s[i])); });
  if (answer.o !== undefined) list.push(chunkView(answer.o, needleIndex, answer.r, answer.od, null));
  const where = answer.r ? `the needle's chunk at rank ${answer.r}` + (answer.t !== undefined ? ` (context up to it: ${f0(answer.t)} tokens)` : "")
    : "no chunk holding the needle in its list";
  return el("div", {}, el("div", {class: "muted"}, `${answer.in ? "inside" : "not inside"} the ${D.budget}-token context; ${where}`), list);
}

// ---------------------------------------------------------------------------------------------- side by side

function fillConfigSelect(select, chosen) {
  select.textContent = "";
  for (const c of D.configurations) select.append(el("option", {value: c.key}, (c.rank ? `#${c.rank} ` : "") + c.name));
  select.value = chosen;
}

function setSide(a, b) {
  const A = document.getElementById("side-a"), B = document.getElementById("side-b");
  if (a) A.value = a;
  if (b) B.value = b;
  drawSide();
}

const score = ch => ch === "1" ? 1 : ch === "h" ? 0.5 : ch === "0" ? 0 : null;

function drawSide() {
  const a = document.getElementById("side-a").value, b = document.getElementById("side-b").value;
  const summary = document.getElementById("side-summary"), list = document.getElementById("side-needles");
  summary.textContent = ""; list.textContent = "";
  const va = D.needle_values[a], vb = D.needle_values[b];
  if (!va || !vb) { summary.append("One of the two has no needle answers in this run."); return; }
  const wins = [], losses = [];
  D.needles.forEach((n, i) => {
    const x = score(va[i]), y = score(vb[i]);
    if (x === null || y === null) return;
    if (x > y) wins.push(i); else if (y > x) losses.push(i);
  });
  summary.append(el("p", {}, `Within ${D.budget} tokens: A ${interval(byKey[a], D.measure)}, B ${interval(byKey[b], D.measure)}. `,
    el("b", {"data-testid": "wins"}, `A wins ${wins.length} needles`), ", ", el("b", {"data-testid": "losses"}, `B wins ${losses.length}`),
    `; the other ${D.needles.length - wins.length - losses.length} are tied.`));
  const byNeedle = answersByNeedle();
  const ties = D.needles.map((n, i) => i).filter(i => !wins.includes(i) && !losses.includes(i) && score(va[i]) !== null && score(vb[i]) !== null);
  const {phrasing, outcome, text} = sideFilter;
  const asked = i => !phrasing || [a, b].some(key => ((byNeedle[key] || {})[D.needles[i].id] || []).some(answer => D.questions[answer.q].phrasing === phrasing));
  const said = i => !text || D.needles[i].text.toLowerCase().includes(text) || D.needles[i].id.toLowerCase().includes(text)
    || [a, b].some(key => ((byNeedle[key] || {})[D.needles[i].id] || []).some(answer => D.questions[answer.q].question.toLowerCase().includes(text)));
  const shown = [];
  for (const [title, needles, winner, kind] of [["Needles A wins", wins, "a", "a"], ["Needles B wins", losses, "b", "b"], ["Tied needles", ties, null, "tie"]]) {
    if (outcome ? outcome !== kind : kind === "tie") continue;  // the tied ones only when asked for
    const kept = needles.filter(i => asked(i) && said(i));
    list.append(el("h3", {}, `${title} (${kept.length}${kept.length !== needles.length ? ` of ${needles.length}` : ""})`));
    for (const i of kept) { list.append(needleView(i, a, b, winner, byNeedle, phrasing)); shown.push([i, kind]); }
  }
  sideRows = shown.map(([i, kind]) => [D.needles[i].id, D.needles[i].text, score(va[i]), score(vb[i]),
    kind === "a" ? "A wins" : kind === "b" ? "B wins" : "tied"]);
}

const sideFilter = {phrasing: "", outcome: "", text: ""};
let sideRows = [];

function sideFilters() {
  const box = document.getElementById("side-filters");
  const phrasings = [...new Set(D.questions.filter(q => q.query_kind === "needle").map(q => q.phrasing))].sort();
  Object.assign(sideFilter, {phrasing: state.sp || "", outcome: state.so || "", text: (state.st || "").toLowerCase()});
  box.append(
    el("label", {}, "phrasing ", el("select", {"data-testid": "side-phrasing", on: {change: e => { sideFilter.phrasing = e.target.value; saveState({sp: e.target.value}); busy(drawSide); }}},
      el("option", {value: ""}, "all"), phrasings.map(v => el("option", {value: v}, v)))),
    el("label", {}, " outcome ", el("select", {"data-testid": "side-outcome", on: {change: e => { sideFilter.outcome = e.target.value; saveState({so: e.target.value}); busy(drawSide); }}},
      el("option", {value: ""}, "the needles they differ on"), el("option", {value: "a"}, "A wins"), el("option", {value: "b"}, "B wins"),
      el("option", {value: "tie"}, "tied"))),
    el("label", {}, " search ", el("input", {type: "search", "data-testid": "side-text", on: {input: e => { sideFilter.text = e.target.value.toLowerCase(); saveState({st: e.target.value}); busy(drawSide); }}})),
    el("button", {"data-testid": "export-needles", on: {click: () => download("needles.csv", csv([["needle_id", "needle", "A", "B", "outcome"], ...sideRows]))}}, "export CSV"));
  box.querySelector("[data-testid=side-phrasing]").value = sideFilter.phrasing;
  box.querySelector("[data-testid=side-outcome]").value = sideFilter.outcome;
  box.querySelector("[data-testid=side-text]").value = state.st || "";
}

let answerIndex = null;
function answersByNeedle() {
  if (answerIndex) return answerIndex;
  answerIndex = {};
  for (const [key, answers] of Object.entries(D.answers)) for (const answer of answers) {
    const q = D.questions[answer.q];
    if (!q || q.query_kind !== "needle") continue;
    ((answerIndex[key] = answerIndex[key] || {})[q.needle_id] = answerIndex[key][q.needle_id] || []).push(answer);
  }
  return answerIndex;
}

function needleView(i, a, b, winner, byNeedle, phrasing = "") {
  const needle = D.needles[i];
  const box = el("div", {class: "needle", "data-testid": "needle", "data-needle": needle.id},
    el("div", {}, el("b", {}, needle.id), " ", el("span", {class: "text"}, `"${needle.text}"`)));
  const sides = el("div", {class: "sides"});
  for (const [side, key] of [["a", a], ["b", b]]) {
    const answers = ((byNeedle[key] || {})[needle.id] || []).filter(answer => !phrasing || D.questions[answer.q].phrasing === phrasing);
    sides.append(el("div", {class: "side" + (side === winner ? " winner" : ""), "data-testid": "side-" + side},
      el("h4", {}, `${side.toUpperCase()}: ${nameOf(key)}` + (side === winner ? " (wins)" : "")),
      answers.map(answer => el("div", {}, el("div", {}, el("b", {}, `${D.questions[answer.q].phrasing}: `), D.questions[answer.q].question),
        answerView(key, answer, i)))));
  }
  box.append(sides);
  return box;
}

// ---------------------------------------------------------------------------------------------- misses

const REASONS = {
  over_budget: (w, a) => `its chunk ranked ${a.r}, past the budget: the context up to it is ${f0(w.tokens)} tokens, over ${D.budget}`,
  not_in_list: w => `no chunk holding the needle is in its top ${w.depth}`,
  destroyed: () => "no chunk of this strategy holds the needle whole: the cut destroyed it",
  not_returned: () => "the retriever returned no passage that holds it",
};

function drawMisses() {
  const key = document.getElementById("miss-config").value;
  const target = document.getElementById("miss-list");
  target.textContent = "";
  const answers = (D.answers[key] || []).filter(a => D.questions[a.q] && D.questions[a.q].query_kind === "needle" && !a.in);
  target.append(el("p", {}, `${answers.length} of ${(D.answers[key] || []).filter(a => D.questions[a.q] && D.questions[a.q].query_kind === "needle").length} `
    + `needle questions of ${nameOf(key)} missed the ${D.budget}-token context.`));
  const needleIndex = Object.fromEntries(D.needles.map((n, i) => [n.id, i]));
  for (const answer of answers) {
    const q = D.questions[answer.q], w = answer.why || {kind: "not_in_list"};
    const reason = REASONS[w.kind] ? REASONS[w.kind](w, answer) : w.kind;
    const extra = w.truncated ? `; the chunk that holds it (${w.truncated}) is ${f0(w.tokens)} tokens, longer than the encoder's `
      + `window: the model reads only its beginning, and the needle lies ${w.at !== null && w.at !== undefined ? Math.round(w.at * 100) + " % of the way" : "somewhere"} into it` : "";
    const box = el("div", {class: "why", "data-testid": "miss", "data-query": q.query_id},
      el("div", {}, el("b", {}, q.query_id), ` (${q.phrasing}) `, q.question),
      el("div", {class: "text"}, `Needle: "${q.needle}"`),
      el("div", {class: "reason", "data-testid": "miss-reason"}, reason + extra));
    if (answer.c.length && answer.c[0] !== null) box.append(el("div", {class: "muted"}, "What ranked first instead:"),
      chunkView(answer.c[0], needleIndex[q.needle_id], 1, answer.d[0], answer.s[0]));
    if (answer.o !== undefined) box.append(chunkView(answer.o, needleIndex[q.needle_id], answer.r, answer.od, null));
    if (w.holder !== undefined && w.holder !== null) box.append(el("div", {class: "muted"}, "The chunk that holds the needle, not retrieved:"),
      chunkView(w.holder, needleIndex[q.needle_id], null, null, null));
    target.append(box);
  }
}

// ---------------------------------------------------------------------------------------------- history

function drawHistory() {
  const key = document.getElementById("history-config").value;
  const c = byKey[key];
  const rows = D.history.filter(h => `${h.model}|${h.strategy}|${h.retriever}` === key);
  const order = Object.fromEntries(D.runs.map((r, i) => [r.run_id, i]));
  rows.sort((x, y) => order[x.run_id] - order[y.run_id]);
  const M = D.measure;
  const chartBox = document.getElementById("history-chart");
  if (rows.length) chart(chartBox, {xs: rows.map((r, i) => i + 1), logX: false, xLabel: "evaluation run (oldest first)", yLabel: "figure",
    series: [{name: `success within ${D.budget} tokens`, points: rows.map((r, i) => ({x: i + 1, y: r[M], lo: r[M + "_low"], hi: r[M + "_high"]}))},
             {name: "MRR", points: rows.map((r, i) => ({x: i + 1, y: r.mrr, lo: r.mrr_low, hi: r.mrr_high}))}]});
  else chartBox.textContent = c ? "No stored run of this configuration." : "";
  const table = document.getElementById("history-table");
  table.textContent = "";
  table.append(el("thead", {}, el("tr", {}, ["#", "run", "created (UTC)", "snapshot", `S@${D.budget}t`, "MRR", "needles"].map(h => el("th", {}, h)))),
    el("tbody", {}, rows.map((r, i) => { const run = D.runs[order[r.run_id]]; return el("tr", {},
      el("td", {}, i + 1), el("td", {class: "text"}, r.run_id), el("td", {class: "text"}, run.created_at), el("td", {class: "text"}, run.snapshot_id || "-"),
      el("td", {}, interval(r, M)), el("td", {}, interval(r, "mrr")), el("td", {}, r.needles)); })));
  drawRuns();
}

function words(value) {  // a setting's value as a person writes it: 1024, dense, 256, 1024; [] as "none"
  if (Array.isArray(value)) return value.length ? value.map(words).join(", ") : "none";
  if (value === null) return "none";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

function flatten(settings, prefix = "") {  // {decision: {budget: 1024}} as {"decision.budget": "1024"}
  const out = {};
  for (const [name, value] of Object.entries(settings)) {
    if (value && typeof value === "object" && !Array.isArray(value)) Object.assign(out, flatten(value, prefix + name + "."));
    else out[prefix + name] = words(value);
  }
  return out;
}

function pickOf(runId) {  // the configuration the decision's rule picks from one run's stored figures
  const M = D.measure;
  const rows = D.history.filter(h => h.run_id === runId && h[M] !== null && h[M] !== undefined).map(h => [h, byKey[`${h.model}|${h.strategy}|${h.retriever}`]])
    .filter(([, c]) => c && c.rank !== null);
  const latency = c => c.median_latency_ms === null || c.median_latency_ms === undefined ? Infinity : c.median_latency_ms;
  rows.sort(([x, cx], [y, cy]) => (y[M] - x[M]) || ((y.mrr || 0) - (x.mrr || 0)) || (latency(cx) - latency(cy)) || cx.key.localeCompare(cy.key));
  return rows.length ? rows[0][1].key : null;
}

function drawRuns() {
  const a = document.getElementById("run-a").value, b = document.getElementById("run-b").value;
  const changes = document.getElementById("run-changes"), flips = document.getElementById("run-flips");
  changes.textContent = ""; flips.textContent = "";
  const A = D.runs.find(r => r.run_id === a), B = D.runs.find(r => r.run_id === b);
  if (!A || !B) { changes.append("One stored run so far: nothing to compare."); return; }
  const changed = [];
  for (const field of ["snapshot_id", "eval_hash", "pipeline_version"]) if (A[field] !== B[field]) changed.push(`${field}: ${A[field]} -> ${B[field]}`);
  for (const model of new Set([...Object.keys(A.revisions || {}), ...Object.keys(B.revisions || {})])) {
    if ((A.revisions || {})[model] !== (B.revisions || {})[model]) changed.push(`${model} weights: ${(A.revisions || {})[model] || "absent"} -> ${(B.revisions || {})[model] || "absent"}`);
  }
  const a_ = flatten(A.settings || {}), b_ = flatten(B.settings || {});
  for (const name of [...new Set([...Object.keys(a_), ...Object.keys(b_)])].sort()) {
    if (a_[name] !== b_[name]) changed.push(`${name}: ${a_[name] === undefined ? "unset" : a_[name]} -> ${b_[name] === undefined ? "unset" : b_[name]}`);
  }
  const pickA = pickOf(a), pickB = pickOf(b);
  const picks = pickA && pickB ? (pickA === pickB ? `The pick at ${D.budget} tokens is ${nameOf(pickA)} in both runs.`
    : `The pick at ${D.budget} tokens changed from ${nameOf(pickA)} in run A to ${nameOf(pickB)} in run B.`) : "";
  changes.append(el("p", {}, `Run A ${A.run_id} (${A.created_at}) against run B ${B.run_id} (${B.created_at}): `,
    changed.length ? "what changed:" : "the same snapshot, evaluation set, pipeline, weights and settings."),
    changed.length ? el("ul", {class: "lines"}, changed.map(line => el("li", {}, line))) : "",
    picks ? el("p", {"data-testid": "run-picks"}, el("b", {}, picks),
      " (each run's figures at this page's budget, by the decision's rule: success, then MRR, then latency)") : "");
  // the needles both runs asked with the same text; the others are said, with why (edited, removed, changed, new)
  const na = (D.run_needles || {})[a], nb = (D.run_needles || {})[b];
  let unchanged = null;
  if (na && nb) {
    const why = {};
    for (const n of [...new Set([...Object.keys(na), ...Object.keys(nb)])].sort()) {
      const reason = n in na && n in nb ? (na[n] === nb[n] ? null : "changed")
        : n in na ? (((D.run_changes || {})[b] || {})[n] || "dropped") : "new";
      if (reason) (why[reason] = why[reason] || []).push(n);
    }
    unchanged = new Set(Object.keys(na).filter(n => nb[n] === na[n]));
    const count = Object.values(why).reduce((sum, list) => sum + list.length, 0);
    if (count) changes.append(el("p", {"data-testid": "run-left-out"}, `${count} needle${count === 1 ? "" : "s"} not `
      + "compared, not present and unchanged in both runs: "
      + Object.entries(why).map(([reason, list]) => `${reason}: ${list.join(", ")}`).join("; ")));
  }
  const compared = i => unchanged === null || unchanged.has(D.needles[i].id);
  const key = document.getElementById("history-config").value;
  const counts = [];
  for (const c of D.configurations) {
    const x = D.run_values[`${a}|${c.key}`], y = D.run_values[`${b}|${c.key}`];
    if (!x || !y) continue;
    let n = 0;
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (compared(i) && score(x[i]) !== null && score(y[i]) !== null && x[i] !== y[i]) n++;
    if (n) counts.push([c.key, n]);
  }
  const x = D.run_values[`${a}|${key}`], y = D.run_values[`${b}|${key}`];
  const flipped = [];
  if (x && y) D.needles.forEach((n, i) => { if (compared(i) && score(x[i]) !== null && score(y[i]) !== null && x[i] !== y[i]) flipped.push([n, score(x[i]), score(y[i])]); });
  flips.append(el("p", {}, `Needles that flipped for ${nameOf(key)} (inside the ${D.budget}-token context in one run, not in the other): ${flipped.length}`),
    el("ul", {class: "lines", "data-testid": "flipped"}, flipped.map(([n, p, q]) => el("li", {class: q > p ? "flip-up" : "flip-down", "data-needle": n.id},
      `${n.id} "${n.text}": ${p} in A -> ${q} in B`))));
  if (counts.length) flips.append(el("p", {class: "muted"}, "Flips by configuration: " +
    counts.sort((p, q) => q[1] - p[1]).slice(0, 12).map(([k, n]) => `${nameOf(k)} ${n}`).join("; ")));
}

// ---------------------------------------------------------------------------------------------- start

async function main() {
  D = await load();
  byKey = Object.fromEntries(D.configurations.map(c => [c.key, c]));
  document.getElementById("run-meta").textContent =
    `run ${D.run.run_id}, ${D.run.created_at} UTC; corpus snapshot ${D.run.snapshot_id}; ${D.configurations.length} configurations, `
    + `${D.needles.length} needles; the needle is the unit; p adjusted by ${D.adjustment}`;
  decisionSection();
  curves();
  sizes();
  refusal();
  tableSection();
  const known = key => key && byKey[key] ? key : null;
  const first = D.decision.pick || (D.configurations[0] || {}).key, second = D.decision.runner_up || (D.configurations[1] || {}).key;
  fillConfigSelect(document.getElementById("side-a"), known(state.a) || first);
  fillConfigSelect(document.getElementById("side-b"), known(state.b) || second);
  for (const id of ["side-a", "side-b"]) document.getElementById(id).addEventListener("change", () => {
    saveState({a: document.getElementById("side-a").value, b: document.getElementById("side-b").value});
    busy(drawSide);
  });
  sideFilters();
  drawSide();
  fillConfigSelect(document.getElementById("miss-config"), known(state.m) || first);
  document.getElementById("miss-config").addEventListener("change", e => { saveState({m: e.target.value}); busy(drawMisses); });
  drawMisses();
  fillConfigSelect(document.getElementById("history-config"), known(state.h) || first);
  document.getElementById("history-config").addEventListener("change", e => { saveState({h: e.target.value}); busy(drawHistory); });
  for (const [id, offset, name] of [["run-a", 2, "ra"], ["run-b", 1, "rb"]]) {
    const select = document.getElementById(id);
    for (const run of D.runs) select.append(el("option", {value: run.run_id}, `${run.run_id} (${run.created_at})`));
    const chosen = D.runs.find(r => r.run_id === state[name]);
    select.value = chosen ? chosen.run_id : (D.runs[D.runs.length - offset] || D.runs[0] || {}).run_id || "";
    select.addEventListener("change", e => { saveState({[name]: e.target.value}); busy(drawRuns); });
  }
  drawHistory();
  const header = document.querySelector("header");  // a section the navigation jumps to lands below the header
  const fit = () => document.documentElement.style.setProperty("--header-height", `${header.offsetHeight + 8}px`);
  fit();
  window.addEventListener("resize", fit);
  if (location.hash && document.getElementById(location.hash.slice(1))) document.getElementById(location.hash.slice(1)).scrollIntoView();
  document.body.setAttribute("data-ready", "true");
}

main().catch(error => {
  document.getElementById("decision-body").textContent = "This page could not be read: " + error;
  document.body.setAttribute("data-ready", "error");
});
