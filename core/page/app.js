// rankcraft's league page: reads the service's JSON API and draws its own SVG charts.
"use strict";

const $ = (sel) => document.querySelector(sel);
const COLORS = ["#2f6fde", "#d9480f", "#2b8a3e", "#862e9c", "#c92a2a", "#495057"];
const state = { meta: null, board: [], more: false, offset: 0, asked: 0, seasons: [], customs: 0 };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") node.textContent = v;
    else if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c);
  return node;
}

function svgEl(tag, attrs = {}) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

function fmt(v, digits) {
  if (v === null || v === undefined) return "-";
  if (typeof v !== "number") return String(v);
  if (digits !== undefined) return v.toFixed(digits);
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) < 100 ? v.toFixed(3) : v.toFixed(1);
}

function token() { return $("#token").value.trim() || sessionStorage.getItem("rankcraft-token") || ""; }

async function api(path, options = {}) {
  const headers = { ...(options.headers || {}) };
  const t = token();
  if (t) headers.Authorization = `Bearer ${t}`;
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method: options.method || "GET",
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const data = await response.json();
  if (!response.ok) {
    const err = new Error(data.error ? data.error.message : response.statusText);
    err.data = data;
    throw err;
  }
  return data;
}

function status(text) { $("#status").textContent = text || ""; }

// -- charts --------------------------------------------------------------------------------

// series: {points: [[x, y]], band: [[x, lo, hi]], color, step, label}; marks: [x] (dashed)
function lineChart(svg, series, { marks = [], time = true, width = 900, height = 300,
                                  xmin, xmax, ymin, ymax, labels = [] } = {}) {
  svg.replaceChildren();
  const pad = { l: 60, r: 15, t: 15, b: 30 };
  const xs = [], ys = [];
  for (const s of series) {
    for (const p of s.points) { xs.push(p[0]); ys.push(p[1]); }
    for (const b of s.band || []) { ys.push(b[1], b[2]); }
  }
  if (!xs.length) return;
  let x0 = xmin ?? Math.min(...xs), x1 = xmax ?? Math.max(...xs);
  let y0 = ymin ?? Math.min(...ys), y1 = ymax ?? Math.max(...ys);
  if (x0 === x1) { x0 -= 1; x1 += 1; }
  if (y0 === y1) { y0 -= 1; y1 += 1; }
  const X = (x) => pad.l + (x - x0) / (x1 - x0) * (width - pad.l - pad.r);
  const Y = (y) => height - pad.b - (y - y0) / (y1 - y0) * (height - pad.t - pad.b);
  for (let i = 0; i <= 4; i++) {
    const v = y0 + (y1 - y0) * i / 4;
    svg.append(svgEl("line", { x1: pad.l, x2: width - pad.r, y1: Y(v), y2: Y(v), stroke: "#eee" }));
    const t = svgEl("text", { x: pad.l - 6, y: Y(v) + 4, "text-anchor": "end", "font-size": 11 });
    t.textContent = Math.abs(y1 - y0) < 5 ? v.toFixed(2) : v.toFixed(0);
    svg.append(t);
  }
  for (let i = 0; i <= 4; i++) {
    const v = x0 + (x1 - x0) * i / 4;
    const t = svgEl("text", { x: X(v), y: height - 8, "text-anchor": "middle", "font-size": 11 });
    t.textContent = time ? new Date(v).toISOString().slice(0, 10) : v.toFixed(1);
    svg.append(t);
  }
  for (const m of marks) {
    svg.append(svgEl("line", { x1: X(m), x2: X(m), y1: pad.t, y2: height - pad.b,
      stroke: "#9a5b00", "stroke-dasharray": "4 3", class: "reset-mark" }));
  }
  for (const s of series) {
    if (s.band && s.band.length) {
      const top = s.band.map((b) => `${X(b[0])},${Y(b[2])}`);
      const bottom = s.band.slice().reverse().map((b) => `${X(b[0])},${Y(b[1])}`);
      svg.append(svgEl("polygon", { points: top.concat(bottom).join(" "), fill: s.color,
        "fill-opacity": 0.15, stroke: "none", class: "band" }));
    }
    let d = "";
    s.points.forEach((p, i) => {
      if (i === 0) d += `M${X(p[0])},${Y(p[1])}`;
      else if (s.step) d += `H${X(p[0])}V${Y(p[1])}`;
      else d += `L${X(p[0])},${Y(p[1])}`;
    });
    svg.append(svgEl("path", { d, fill: "none", stroke: s.color, "stroke-width": 2,
      class: "series", "data-label": s.label || "" }));
    if (s.dots) {
      for (const p of s.points) svg.append(svgEl("circle", { cx: X(p[0]), cy: Y(p[1]), r: 3, fill: s.color }));
    }
  }
  for (const [x, y, text] of labels) {
    const t = svgEl("text", { x: X(x) + 3, y: Y(y) - 5, "font-size": 11, fill: "#333" });
    t.textContent = text;
    svg.append(t);
  }
}

function bars(counts, color, width = 260, height = 120) {
  const svg = svgEl("svg", { viewBox: `0 0 ${width} ${height}`, class: "chart", width, height });
  const max = Math.max(1, ...counts);
  const w = width / Math.max(1, counts.length);
  counts.forEach((c, i) => {
    const h = c / max * (height - 10);
    svg.append(svgEl("rect", { x: i * w + 1, y: height - h, width: w - 2, height: h, fill: color }));
  });
  return svg;
}

// -- league --------------------------------------------------------------------------------


const PAGE = 100;

// The board's filters and the search box are the query parameters of GET /leaderboard (what
// League.placed takes): the server searches the board, and players found keep their places.
function boardQuery() {
  const params = new URLSearchParams();
  if ($("#league-active").checked) params.set("active_days", String(Number($("#league-days").value) || 30));
  else params.set("all", "true");
  const tier = $("#league-tier").value;
  if (tier) params.set("tier", tier);
  const q = $("#league-search").value.trim();
  if (q) params.set("holding", q.slice(0, 100));
  params.set("offset", String(state.offset));
  params.set("top", String(PAGE + 1)); // one more: is there a next page?
  return params;
}

async function showLeague() {
  status("loading the leaderboard…");
  const meta = await api("/web/meta");
  state.meta = meta;
  const pick = $("#league-tier");
  const chosen = pick.value;
  pick.replaceChildren(el("option", { value: "", text: "all" }),
    ...meta.tiers.map((t) => el("option", { value: t, text: t })));
  pick.value = meta.tiers.includes(chosen) ? chosen : "";
  pick.parentElement.hidden = !meta.tiers.length;
  await loadBoard();
  status("");
  // asked after the board is drawn: the season archive reads every player's rank, and
  // a worker answers one request at a time
  state.seasons = await api("/web/seasons");
  renderSeasons();
}

async function loadBoard() {
  const ticket = ++state.asked;  // only the latest request's answer is drawn
  const rows = await api(`/leaderboard?${boardQuery()}`);
  if (ticket !== state.asked) return;
  state.more = rows.length > PAGE;
  state.board = state.more ? rows.slice(0, PAGE) : rows;
  renderBoard();
}

function refilter() {
  state.offset = 0;
  loadBoard().catch((e) => status(`error: ${e.message}`));
}

function turnPage(step) {
  state.offset = Math.max(0, state.offset + step * PAGE);
  loadBoard().catch((e) => status(`error: ${e.message}`));
}

function renderBoard() {
  const f = state.meta.fields;
  const q = $("#league-search").value.trim();
  const rows = state.board;
  const hasStanding = state.board.some((r) => r.standing);
  // [display] conservative: the value the board is sorted by differs from the location
  const shown = (r) => (r.display ? r.display.value : null);
  const hasConservative = !f.rank && state.board.some(
    (r) => shown(r) !== null && f.location && shown(r) !== r.skill[f.location]);
  const head = ["#", "player"];
  if (hasStanding) head.push("standing");
  if (f.rank) head.push(f.rank);
  if (hasConservative) head.push("conservative");
  head.push(f.location || "skill");
  if (f.spread) head.push(`± ${f.spread}`);
  head.push("matches", "last played");
  $("#leaderboard thead").replaceChildren(el("tr", {}, ...head.map((h) => el("th", { text: h }))));
  const body = rows.map((r) => {
    const link = el("a", { href: `#player/${encodeURIComponent(r.id)}`, text: r.id });
    const cells = [el("td", { class: "num", text: r.place }), el("td", {}, link)];
    if (hasStanding) cells.push(el("td", { text: r.standing || "-" }));
    if (f.rank) cells.push(el("td", { class: "num", text: fmt(r.rank && r.rank[f.rank]) }));
    if (hasConservative) cells.push(el("td", { class: "num conservative", text: fmt(shown(r)) }));
    cells.push(el("td", { class: "num", text: fmt(f.location ? r.skill[f.location] : null) }));
    if (f.spread) cells.push(el("td", { class: "num", text: fmt(r.skill[f.spread]) }));
    cells.push(el("td", { class: "num", text: r.matches }),
      el("td", { text: r.last_played ? r.last_played.slice(0, 10) : "-" }));
    return el("tr", { "data-player": r.id }, ...cells);
  });
  $("#leaderboard tbody").replaceChildren(...body);
  const first = state.board.length ? state.board[0].place : 0;
  const last = state.board.length ? state.board[state.board.length - 1].place : 0;
  const found = q ? ` holding “${q}”` : "";
  $("#league-count").textContent = q
    ? (rows.length ? `players ${state.offset + 1} to ${state.offset + rows.length}${found} (places ${first} to ${last})`
      : `no players${found}`)
    : (rows.length ? `places ${first} to ${last}` : "no players");
  $("#league-prev").hidden = state.offset === 0;
  $("#league-next").hidden = !state.more;
}

function renderSeasons() {
  const block = $("#seasons");
  block.hidden = !state.seasons.length;
  if (!state.seasons.length) return;
  const pick = $("#season-pick");
  const chosen = pick.value;
  pick.replaceChildren(...state.seasons.map((s, i) =>
    el("option", { value: i, text: s.ago === 1 ? "the last season ended" : `${s.ago} seasons ago` })));
  if (chosen) pick.value = chosen;
  const season = state.seasons[Number(pick.value) || 0];
  $("#season-table tbody").replaceChildren(...season.players.slice(0, 200).map((r, i) =>
    el("tr", {}, el("td", { class: "num", text: i + 1 }), el("td", { text: r.id }),
      el("td", { text: r.tier }), el("td", { class: "num", text: fmt(r.score) }))));
}

let suggestTimer = null;
function suggest(input) {
  clearTimeout(suggestTimer);
  suggestTimer = setTimeout(async () => {
    const q = input.value.trim();
    if (!q) return;
    const ids = await api(`/web/search?q=${encodeURIComponent(q)}`);
    $("#player-suggestions").replaceChildren(...ids.map((id) => el("option", { value: id })));
  }, 120);
}

// -- player --------------------------------------------------------------------------------

async function showPlayer(id) {
  if (!id) { $("#player-title").textContent = "Choose a player"; return; }
  $("#player-id").value = id;
  status(`loading ${id}…`);
  let data;
  try {
    data = await api(`/web/players/${encodeURIComponent(id)}`);
  } catch (e) {
    $("#player-title").textContent = e.message;
    $("#player-summary").textContent = "";
    $("#player-matches tbody").replaceChildren();
    $("#rating-chart").replaceChildren();
    status("");
    return;
  }
  const p = data.player, f = data.fields, ms = data.matches;
  $("#player-title").textContent = p.id;
  const resets = ms.filter((m) => m.reset_before);
  $("#player-summary").textContent =
    `${p.matches} ${p.matches === 1 ? "match" : "matches"}` +
    (f.location ? `, ${f.location} ${fmt(p.skill[f.location])}` : "") +
    (f.spread ? ` ± ${fmt(p.skill[f.spread])}` : "") +
    (data.standing ? `, ${data.standing}` : "") +
    (resets.length ? `; ${resets.length} season ${resets.length === 1 ? "reset" : "resets"} marked` : "") +
    ` (${data.ruleset})`;
  const t = ms.map((m) => Date.parse(m.played_at));
  const marks = ms.filter((m) => m.reset_before).map((m) => Date.parse(m.played_at));
  const series = [{
    label: f.location, color: COLORS[0],
    points: ms.map((m, i) => [t[i], m.skill_after]),
    band: f.spread ? ms.map((m, i) => [t[i], m.skill_after - 2 * m.spread_after, m.skill_after + 2 * m.spread_after]) : [],
  }];
  $("#rating-legend").textContent = `${f.location}` + (f.spread ? `, band ± 2 ${f.spread}` : "") +
    (marks.length ? "; dashed lines: season resets" : "");
  lineChart($("#rating-chart"), series, { marks });
  const ranked = ms.filter((m) => m.rank_after !== null);
  $("#rank-block").hidden = !ranked.length;
  if (ranked.length) {
    const labels = [];
    let tier = null;
    for (const m of ranked) {
      if (m.tier_after && m.tier_after !== tier) labels.push([Date.parse(m.played_at), m.rank_after, m.tier_after]);
      tier = m.tier_after;
    }
    lineChart($("#rank-chart"), [{ label: f.rank, color: COLORS[1], step: true,
      points: ranked.map((m) => [Date.parse(m.played_at), m.rank_after]) }],
      { marks, height: 260, labels: labels.slice(-12) });
  }
  const rows = ms.slice().reverse().slice(0, 300).map((m) => {
    const vs = m.teams.filter((_, i) => i !== m.side).map((s) => s.join(",")).join(" / ");
    const delta = (a, b) => {
      if (a === null || b === null) return "-";
      const d = b - a;
      return `${fmt(a)} → ${fmt(b)} (${d >= 0 ? "+" : ""}${fmt(d)})`;
    };
    const why = Object.entries(m.factors).map(([k, v]) => `${k} ${Number(v).toPrecision(4)}`).join(", ");
    const tr = el("tr", { "data-match": m.id },
      el("td", { text: m.played_at.slice(0, 10) }), el("td", { text: m.id }),
      el("td", { text: m.result, class: m.result === "won" ? "up" : m.result === "lost" ? "down" : "" }),
      el("td", { text: vs }), el("td", { class: "num", text: fmt(m.expected, 3) }),
      el("td", { text: delta(m.skill_before, m.skill_after) }),
      el("td", { text: delta(m.rank_before, m.rank_after) + (m.tier_after ? ` ${m.tier_after}` : "") }),
      el("td", { text: why }));
    if (m.reset_before) tr.append(el("td", { class: "reset", text: "after a season reset" }));
    return tr;
  });
  $("#player-matches tbody").replaceChildren(...rows);
  status("");
}

// -- lab -----------------------------------------------------------------------------------

function labBundled() {
  const box = $("#lab-bundled");
  const own = state.meta.bundled.includes(state.meta.ruleset) ? state.meta.ruleset : "elo";
  const other = own === "glicko1" ? "elo" : "glicko1";
  box.replaceChildren(...state.meta.bundled.map((name) => el("label", {},
    Object.assign(el("input", { type: "checkbox", value: name, class: "lab-bundled" }),
      { checked: name === own || name === other }), ` ${name}`)));
}

function addCustom(text) {
  const n = state.customs++;
  const area = el("textarea", { class: "toml", id: `lab-toml-${n}`, spellcheck: "false" });
  area.value = text || `name = "custom-${n + 1}"\nextends = "${state.meta.ruleset}"\n\n[update.params]\n`;
  const lines = el("div", { class: "lines" });
  const error = el("p", { class: "field-error", role: "alert" });
  const box = el("div", { class: "editor", "data-editor": n }, area, lines, error);
  const remove = el("button", { type: "button", text: "remove" });
  remove.addEventListener("click", () => box.remove());
  box.append(remove);
  $("#lab-custom").append(box);
  let timer = null;
  area.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => checkToml(box), 250); });
  checkToml(box);
  return box;
}

async function checkToml(box) {
  const area = box.querySelector("textarea"), error = box.querySelector(".field-error");
  const result = await api("/web/lab/check", { method: "POST", body: { toml: area.value } });
  box.classList.toggle("invalid", !result.ok);
  const lines = box.querySelector(".lines");
  if (result.ok) {
    error.textContent = "";
    error.removeAttribute("data-field");
    lines.textContent = `ruleset ${result.name}: valid`;
    return true;
  }
  const e = result.error;
  error.setAttribute("data-field", e.field || "");
  error.textContent = (e.line ? `line ${e.line}` : "") + (e.field ? ` [${e.field}]` : "") + `: ${e.message}`;
  if (e.line) {
    const text = area.value.split("\n")[e.line - 1] || "";
    lines.textContent = `${e.line} | ${text}`;
  } else lines.textContent = "";
  return false;
}

async function readHistory(file) {
  let stream = file.stream();
  if (file.name.endsWith(".gz")) stream = stream.pipeThrough(new DecompressionStream("gzip"));
  const text = await new Response(stream).text();
  const out = [];
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    try { out.push(JSON.parse(line)); } catch (e) { throw new Error(`${file.name} line ${i + 1}: ${e.message}`); }
  });
  return out;
}

async function runLab() {
  $("#lab-error").textContent = "";
  const rulesets = [...document.querySelectorAll(".lab-bundled:checked")].map((c) => ({ name: c.value }));
  for (const box of document.querySelectorAll("#lab-custom .editor")) {
    if (!(await checkToml(box))) { $("#lab-error").textContent = "fix the ruleset errors shown above"; return; }
    rulesets.push({ toml: box.querySelector("textarea").value });
  }
  if (rulesets.length < 2) { $("#lab-error").textContent = "choose two or more rulesets"; return; }
  const body = { rulesets };
  const testFrom = $("#lab-test-from").value.trim();
  if (testFrom) body.test_from = testFrom;
  if (document.querySelector("input[name=lab-source]:checked").value === "file") {
    const file = $("#lab-file").files[0];
    if (!file) { $("#lab-error").textContent = "choose a match file"; return; }
    try { body.matches = await readHistory(file); } catch (e) { $("#lab-error").textContent = e.message; return; }
  }
  status("replaying…");
  let data;
  try {
    data = await api("/web/lab/compare", { method: "POST", body });
  } catch (e) {
    status("");
    $("#lab-error").textContent = e.message;
    return;
  }
  status("");
  renderLab(data);
}

function renderLab(data) {
  $("#lab-results").hidden = false;
  const rs = data.results;
  $("#lab-scores thead").replaceChildren(el("tr", {}, el("th", { text: `${data.matches} matches, scored from ${data.test_from.slice(0, 10)}` }),
    ...rs.map((r) => el("th", { text: r.name }))));
  const best = Math.min(...rs.map((r) => r.evaluation.log_loss));
  const row = (label, f) => el("tr", {}, el("th", { text: label }), ...rs.map((r) => el("td", { class: "num", text: f(r) })));
  $("#lab-scores tbody").replaceChildren(
    row("log loss (95 % interval)", (r) => `${fmt(r.evaluation.log_loss, 4)} [${fmt(r.log_loss_interval[0], 4)}, ${fmt(r.log_loss_interval[1], 4)}]` + (r.evaluation.log_loss === best ? " best" : "")),
    row("Brier", (r) => fmt(r.evaluation.brier, 4)),
    row("accuracy", (r) => fmt(r.evaluation.accuracy, 3)),
    row("scored items", (r) => r.evaluation.n),
    row(`players in another tier than ${data.baseline}`, (r) => r.tier_changes === null ? "-" : r.tier_changes));
  lineChart($("#lab-calibration"), [
    { label: "ideal", color: "#bbb", points: [[0, 0], [1, 1]] },
    ...rs.map((r, i) => ({ label: r.name, color: COLORS[i % COLORS.length], dots: true,
      points: r.evaluation.calibration.filter((b) => b.n).map((b) => [b.predicted, b.observed]) })),
  ], { time: false, width: 420, height: 420, xmin: 0, xmax: 1, ymin: 0, ymax: 1 });
  const legend = rs.map((r) => el("span", { text: `■ ${r.name} ` }));
  legend.forEach((s, i) => { s.style.color = COLORS[i % COLORS.length]; });
  $("#lab-ratings").replaceChildren(...rs.map((r, i) => el("div", { class: "card" },
    el("strong", { text: r.name }), el("p", { class: "muted", text: `${r.location}: ${fmt(r.ratings.low)} to ${fmt(r.ratings.high)}` }),
    bars(r.ratings.counts, COLORS[i % COLORS.length]))));
  const tiers = [...new Set(rs.flatMap((r) => Object.keys(r.tiers)))];
  $("#lab-tiers thead").replaceChildren(el("tr", {}, el("th", { text: "tier" }), ...rs.map((r) => el("th", { text: r.name }))));
  $("#lab-tiers tbody").replaceChildren(...(tiers.length ? tiers : ["(no tiers)"]).map((t) =>
    el("tr", {}, el("td", { text: t }), ...rs.map((r) => el("td", { class: "num", text: r.tiers[t] || 0 })))));
  // each season at its end: the ratings of its players (bins shared by a ruleset's
  // seasons) and the tiers of the league then
  $("#lab-seasons").replaceChildren(...rs.map((r, k) => {
    const names = [...new Set(r.seasons.flatMap((x) => Object.keys(x.tiers)))];
    const span = r.seasons.length ? r.seasons[0].ratings : null;
    return el("table", { class: "lab-seasons", "data-ruleset": r.name },
      el("caption", { text: `${r.name}: each season at its end` +
        (span ? ` (${r.location} ${fmt(span.low)} to ${fmt(span.high)})` : "") }),
      el("thead", {}, el("tr", {}, ...["season", "from", "to", "matches", "players", r.location || "rating",
        ...names].map((n) => el("th", { text: n })))),
      el("tbody", {}, ...r.seasons.map((x) => el("tr", { "data-season": x.season },
        el("td", { class: "num", text: x.season }),
        el("td", { text: x.start.slice(0, 10) }), el("td", { text: x.end.slice(0, 10) }),
        el("td", { class: "num", text: x.matches }), el("td", { class: "num", text: x.players }),
        el("td", { class: "season-ratings" }, bars(x.ratings.counts, COLORS[k % COLORS.length], 160, 40)),
        ...names.map((n) => el("td", { class: "num", text: x.tiers[n] || 0 }))))));
  }));
  $("#lab-top").replaceChildren(...rs.map((r) => {
    const table = el("table", { class: "lab-top", "data-ruleset": r.name },
      el("caption", { text: r.name }),
      el("tbody", {}, ...r.top.map((p, i) => el("tr", {}, el("td", { class: "num", text: i + 1 }),
        el("td", { text: p.id }), el("td", { text: p.standing || "" }), el("td", { class: "num", text: fmt(p.rating) })))));
    return table;
  }));
  $("#lab-top").prepend(el("div", {}, ...legend));
}

// -- matches -------------------------------------------------------------------------------

function sidesOf(text) {
  return text.split("\n").map((l) => l.split(",").map((p) => p.trim()).filter(Boolean)).filter((s) => s.length);
}

async function recordMatch(event) {
  event.preventDefault();
  sessionStorage.setItem("rankcraft-token", $("#token").value.trim());
  const match = {
    id: $("#rec-id").value.trim(),
    played_at: $("#rec-at").value.trim() || new Date().toISOString().slice(0, 19) + "Z",
    teams: sidesOf($("#rec-teams").value),
    scores: $("#rec-scores").value.split(",").map((s) => Number(s.trim())),
  };
  const out = $("#record-result");
  out.className = "";
  try {
    const data = await api("/matches", { method: "POST", body: match });
    const changes = data.report.changes.map((c) => {
      const f = state.meta.fields.location;
      return f ? `${c.player} ${fmt(c.skill_before[f])} → ${fmt(c.skill_after[f])}` : c.player;
    });
    out.textContent = `recorded ${data.match.id}: ${changes.join("; ")}`;
  } catch (e) {
    out.className = "error";
    out.textContent = e.message;
  }
}

async function predict(event) {
  event.preventDefault();
  const body = { sides: sidesOf($("#pred-teams").value) };
  const home = $("#pred-home").value;
  if (home !== "") body.home = Number(home);
  try {
    const data = await api("/predict", { method: "POST", body });
    $("#predict-result tbody").replaceChildren(...data.sides.map((s, i) =>
      el("tr", {}, el("td", { text: s.join(",") }), el("td", { class: "num", text: fmt(data.probabilities[i], 4) }))));
  } catch (e) {
    $("#predict-result tbody").replaceChildren(el("tr", {}, el("td", { class: "error", text: e.message })));
  }
}

// -- routing -------------------------------------------------------------------------------

async function route() {
  const hash = decodeURIComponent(location.hash.slice(1)) || "league";
  const [page, ...rest] = hash.split("/");
  const name = ["league", "player", "lab", "matches"].includes(page) ? page : "league";
  for (const s of document.querySelectorAll("main > section")) s.hidden = s.id !== `page-${name}`;
  for (const a of document.querySelectorAll("nav a[data-page]")) a.classList.toggle("current", a.dataset.page === name);
  try {
    if (name === "league") await showLeague();
    else if (name === "player") await showPlayer(rest.join("/"));
  } catch (e) {
    status(`error: ${e.message}`);
  }
  document.body.dataset.page = name;
  document.body.dataset.ready = "1";
}

async function start() {
  $("#token").value = sessionStorage.getItem("rankcraft-token") || "";
  state.meta = await api("/web/meta");
  if (state.meta.active_days !== null) {  // the ruleset's [display] active_days
    $("#league-active").checked = true;
    $("#league-days").value = state.meta.active_days;
  }
  $("#ruleset-name").textContent = `${state.meta.ruleset}: ${state.meta.players} players, ${state.meta.matches} matches`;
  for (const id of ["#league-tier", "#league-active", "#league-days"]) {
    $(id).addEventListener("input", refilter);
  }
  let searchTimer = null;
  $("#league-search").addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(refilter, 200);
  });
  $("#league-prev").addEventListener("click", () => turnPage(-1));
  $("#league-next").addEventListener("click", () => turnPage(1));
  $("#league-filters").addEventListener("submit", (e) => e.preventDefault());
  $("#league-search").addEventListener("input", (e) => suggest(e.target));
  $("#player-id").addEventListener("input", (e) => suggest(e.target));
  $("#season-pick").addEventListener("change", renderSeasons);
  $("#player-form").addEventListener("submit", (e) => {
    e.preventDefault();
    location.hash = `player/${encodeURIComponent($("#player-id").value.trim())}`;
  });
  $("#lab-add").addEventListener("click", () => addCustom());
  $("#lab-run").addEventListener("click", runLab);
  $("#record-form").addEventListener("submit", recordMatch);
  $("#predict-form").addEventListener("submit", predict);
  labBundled();
  window.addEventListener("hashchange", route);
  await route();
}

start().catch((e) => status(`error: ${e.message}`));
