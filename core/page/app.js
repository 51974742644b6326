// rankcraft's league page: reads the service's JSON API and draws its own SVG charts.
"use strict";

const $ = (sel) => document.querySelector(sel);
const COLORS = ["#2f6fde", "#d9480f", "#2b8a3e", "#862e9c", "#c92a2a", "#495057"];
const state = { meta: null, board: [], more: false, offset: 0, asked: 0, seasons: [], customs: 0,
  picks: 0, job: null, player: null, playerPage: 0 };

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
  return v.toFixed(digits !== undefined ? digits : digitsFor([v]));
}

// One format per column, as the command line writes its tables (rankcraft.cli.output's
// digits_for): no decimals when every value is whole, 1 where the column reaches 100, else 3
function digitsFor(values) {
  const xs = values.filter((v) => typeof v === "number" && Number.isFinite(v));
  if (xs.every(Number.isInteger)) return 0;
  return Math.max(...xs.map(Math.abs)) >= 100 ? 1 : 3;
}
function columnFormat(values) {
  const digits = digitsFor(values);
  return (v) => fmt(v, digits);
}

// a match's factor: a whole number as it is ("streak 1"), else 4 significant digits
function factor(v) {
  return typeof v === "number" && !Number.isInteger(v) ? String(Number(v.toPrecision(4))) : String(v);
}

// a skill state as a match report keeps it, on the scale players see (meta.scales)
function shownSkill(skill, role) {
  const s = state.meta.scales[role];
  return s && skill ? s.offset + s.factor * skill[s.field] : null;
}

// a count, with thousands separators as the command line writes them (49,520)
const COUNT = new Intl.NumberFormat("en-US");
function count(n) { return n === null || n === undefined ? "-" : COUNT.format(n); }

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

// Nice ticks: steps of 1, 2, 2.5 or 5 times a power of ten (0, 0.25, 0.5 ...; 1500, 1550 ...)
function niceStep(span, most) {
  const raw = span / Math.max(1, most);
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

function niceTicks(lo, hi, most) {
  const step = niceStep(hi - lo, most);
  const out = [];
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) {
    out.push(Number(v.toFixed(10)));
  }
  return { step, ticks: out };
}

function tickText(v) { return String(Number(v.toFixed(6))); }

// Time ticks on whole days, months or years (UTC), at most `most` of them.
const DAY = 86400000;
function timeTicks(t0, t1, most) {
  const days = (t1 - t0) / DAY;
  const choices = [[1, "d"], [2, "d"], [7, "d"], [14, "d"], [1, "m"], [2, "m"], [3, "m"], [6, "m"],
    [1, "y"], [2, "y"], [5, "y"], [10, "y"], [20, "y"], [25, "y"], [50, "y"], [100, "y"]];
  const length = { d: 1, m: 30.4, y: 365.25 };
  const [n, unit] = choices.find(([k, u]) => days / (k * length[u]) <= most) || [200, "y"];
  const out = [];
  const first = new Date(t0);
  if (unit === "y") {
    for (let y = Math.ceil(first.getUTCFullYear() / n) * n; ; y += n) {
      const t = Date.UTC(y, 0, 1);
      if (t > t1) break;
      if (t >= t0) out.push([t, String(y)]);
    }
  } else if (unit === "m") {
    let y = first.getUTCFullYear(), m = Math.ceil(first.getUTCMonth() / n) * n;
    for (;;) {
      const t = Date.UTC(y, m, 1);
      if (t > t1) break;
      if (t >= t0) out.push([t, new Date(t).toISOString().slice(0, 7)]);
      m += n;
    }
  } else {
    for (let t = Math.ceil(t0 / DAY) * DAY; t <= t1; t += n * DAY) out.push([t, new Date(t).toISOString().slice(0, 10)]);
  }
  return out;
}

// Charts are drawn at the width they are shown at (their box's), and drawn again when
// the window's width changes: text stays 11 px on a phone as on a desktop.
const drawn = new Map();
function redrawn(svg, draw) { drawn.set(svg, draw); draw(); }
let resizeTimer = null;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    for (const [svg, draw] of drawn) if (svg.isConnected && svg.getClientRects().length) draw();
  }, 100);
});

function shownWidth(svg, fallback, most) {
  const box = svg.parentElement ? svg.parentElement.clientWidth : 0;
  return Math.max(240, Math.min(most || 100000, Math.round(box || fallback)));
}

const CHAR = 6.3;  // about the width of a character of 11 px text

// A time axis that skips idle spans: the times are cut where no point falls for longer
// than a fifth of the whole span (and a month at least); each stretch of play gets a
// width by its length (12 px at least) and each span skipped a break of BREAK px.
// Returns [{t0, t1, p0, p1}] (a stretch's times and pixels), one when nothing is skipped.
const BREAK = 26;
function timeStretches(xs, x0, x1, left, right) {
  const times = [...new Set(xs)].sort((a, b) => a - b);
  const idle = Math.max(30 * DAY, (x1 - x0) / 5);
  const cuts = [];
  for (let i = 1; i < times.length; i++) if (times[i] - times[i - 1] > idle) cuts.push(i);
  if (!cuts.length) return [{ t0: x0, t1: x1, p0: left, p1: right }];
  const spans = [];
  let start = 0;
  for (const cut of [...cuts, times.length]) { spans.push([times[start], times[cut - 1]]); start = cut; }
  spans[0][0] = Math.min(spans[0][0], x0);
  spans[spans.length - 1][1] = Math.max(spans[spans.length - 1][1], x1);
  const least = 12, room = right - left - BREAK * (spans.length - 1) - least * spans.length;
  const played = spans.reduce((sum, [a, b]) => sum + (b - a), 0);
  const out = [];
  let at = left;
  for (const [a, b] of spans) {
    const w = least + room * (played ? (b - a) / played : 1 / spans.length);
    out.push({ t0: a, t1: b, p0: at, p1: at + w });
    at += w + BREAK;
  }
  return out;
}

function stretchX(stretches) {
  return (x) => {
    let s = stretches[0];
    for (const c of stretches) if (x >= c.t0) s = c;
    if (x > s.t1) x = s.t1;
    return s.t1 === s.t0 ? (s.p0 + s.p1) / 2 : s.p0 + (x - s.t0) / (s.t1 - s.t0) * (s.p1 - s.p0);
  };
}

// How long a span skipped is, in words (the break's title)
function spanText(ms) {
  const days = ms / DAY;
  return days >= 730 ? `${Math.round(days / 365.25)} years` : days >= 60 ? `${Math.round(days / 30.4)} months` : `${Math.round(days)} days`;
}

// series: {points: [[x, y]], band: [[x, lo, hi]], color, step, label}; marks: [x] (dashed);
// labels: [[x, y, text]] (a tier where it changes), set in a lane above the plot
function lineChart(svg, series, { marks = [], time = true, width: wanted = 900, height = 300,
                                  xmin, xmax, ymin, ymax, labels = [], square = false } = {}) {
  const width = shownWidth(svg, wanted, square ? 420 : 900);
  if (square) height = width;
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.replaceChildren();
  const LANE = 14;
  const pad = { l: 52, r: 14, t: labels.length ? 12 + 2 * LANE : 12, b: 28 };
  const xs = [], ys = [];
  for (const s of series) {
    for (const p of s.points) { xs.push(p[0]); ys.push(p[1]); }
    for (const b of s.band || []) { ys.push(b[1], b[2]); }
  }
  if (!xs.length) return;
  let x0 = xmin ?? Math.min(...xs), x1 = xmax ?? Math.max(...xs);
  let y0 = ymin ?? Math.min(...ys), y1 = ymax ?? Math.max(...ys);
  if (x0 === x1) { x0 -= time ? DAY : 1; x1 += time ? DAY : 1; }
  if (y0 === y1) { y0 -= 1; y1 += 1; }
  const rows = Math.max(3, Math.min(6, Math.floor((height - pad.t - pad.b) / 45)));
  const { step } = niceTicks(y0, y1, rows);
  if (ymin === undefined) y0 = Math.floor(y0 / step + 1e-9) * step;
  if (ymax === undefined) y1 = Math.ceil(y1 / step - 1e-9) * step;
  const yTicks = [];
  for (let v = Math.ceil(y0 / step - 1e-9) * step; v <= y1 + step * 1e-9; v += step) yTicks.push(v);
  const stretches = time ? timeStretches(xs, x0, x1, pad.l, width - pad.r)
    : [{ t0: x0, t1: x1, p0: pad.l, p1: width - pad.r }];
  const X = stretchX(stretches);
  const Y = (v) => height - pad.b - (v - y0) / (y1 - y0) * (height - pad.t - pad.b);
  for (const v of yTicks) {
    svg.append(svgEl("line", { x1: pad.l, x2: width - pad.r, y1: Y(v), y2: Y(v), stroke: "#eee" }));
    const t = svgEl("text", { x: pad.l - 6, y: Y(v) + 4, "text-anchor": "end", "font-size": 11, class: "tick y" });
    t.textContent = tickText(v);
    svg.append(t);
  }
  // the spans skipped: a shaded break across the plot, its length in its title
  stretches.slice(1).forEach((s, i) => {
    const before = stretches[i];
    const brk = svgEl("rect", { x: before.p1 + 3, y: pad.t, width: BREAK - 6, height: height - pad.t - pad.b,
      fill: "#f1f3f7", class: "axis-break", "data-from": new Date(before.t1).toISOString(), "data-to": new Date(s.t0).toISOString() });
    const title = svgEl("title");
    title.textContent = `no matches for ${spanText(s.t0 - before.t1)} (${new Date(before.t1).toISOString().slice(0, 10)} to ${new Date(s.t0).toISOString().slice(0, 10)}): skipped`;
    brk.append(title);
    svg.append(brk);
    for (const dx of [BREAK / 2 - 3, BREAK / 2 + 3]) {
      svg.append(svgEl("line", { x1: before.p1 + dx - 3, x2: before.p1 + dx + 3, y1: height - pad.b + 5, y2: height - pad.b - 5,
        stroke: "#889", class: "break-mark" }));
    }
  });
  let shownTo = -Infinity;  // x labels left to right, none over another
  for (const s of stretches) {
    const columns = Math.max(1, Math.floor((s.p1 - s.p0) / (time ? 70 : 60)));
    const ticks = time ? timeTicks(s.t0, s.t1, Math.max(columns, stretches.length > 1 ? 1 : 2))
      : niceTicks(s.t0, s.t1, Math.max(2, columns)).ticks.map((v) => [v, tickText(v)]);
    if (time && !ticks.length && stretches.length > 1) ticks.push([s.t0, new Date(s.t0).toISOString().slice(0, stretches.length > 1 ? 7 : 10)]);
    for (const [v, text] of ticks) {
      const half = text.length * CHAR / 2;
      const at = X(v);
      const anchor = at + half > width - 2 ? "end" : at - half < 2 ? "start" : "middle";
      const from = anchor === "end" ? at - 2 * half : anchor === "start" ? at : at - half;
      if (from < shownTo + 6) continue;
      shownTo = from + 2 * half;
      const t = svgEl("text", { x: at, y: height - 8, "text-anchor": anchor, "font-size": 11, class: "tick x" });
      t.textContent = text;
      svg.append(t);
    }
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
  // labels (a tier where it changes): in two lanes above the plot, off the line; none
  // drawn over another (the latest always kept), each tied to its point by a thin tick
  const placed = [];
  for (const [x, v, text] of labels.slice().reverse()) {
    const w = text.length * CHAR + 6;
    let left = X(x) - 2;
    if (left + w > width - pad.r) left = width - pad.r - w;
    if (left < 2) left = 2;
    const lane = [0, 1].find((k) => placed.every((p) => p.lane !== k || left + w <= p.left || left >= p.left + p.w));
    if (lane === undefined) continue;
    placed.push({ left, w, lane });
    const y = 12 + lane * LANE;
    svg.append(svgEl("line", { x1: X(x), x2: X(x), y1: y + 3, y2: Y(v), stroke: "#bbb", "stroke-dasharray": "1 2", class: "label-tick" }));
    const t = svgEl("text", { x: left, y, "font-size": 11, fill: "#333", class: "chart-label" });
    t.textContent = text;
    svg.append(t);
  }
}

// A legend beside a chart: a colored mark and a name per item ({label, color, dashed}).
function legend(items) {
  return el("ul", { class: "legend" }, ...items.map((item) => {
    const mark = el("span", { class: item.dashed ? "swatch dashed" : item.band ? "swatch band" : "swatch" });
    mark.style.borderColor = item.color;
    if (!item.dashed) mark.style.background = item.color;
    return el("li", {}, mark, ` ${item.label}`);
  }));
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
  await showHeader();  // (the league's counts may have moved)
  const meta = state.meta;
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
  await showLive();
}

// -- champion vs challenger (a service started with --challenger) --------------------------

const LIVE_EVERY = 30000;  // ms between two readings of the comparison while it is shown

async function showLive() {
  if (!state.meta.challenger) return;  // (a service without --challenger)
  // (400 while the two leagues hold no match in common yet: nothing to show)
  const data = await api("/web/compare-live").catch(() => null);
  $("#live").hidden = !data;
  if (data) renderLive(data);
}

function renderLive(data) {
  const labels = [data.champion, data.challenger];
  const rs = labels.map((label) => data.results[label]);
  const left = data.champion_only || data.challenger_only
    ? ` (left out: ${count(data.champion_only)} only the champion holds, ${count(data.challenger_only)} only the challenger)` : "";
  $("#live-summary").textContent = `this league (${data.champion}) against the challenger (${data.challenger}): ${count(data.common)} matches both hold${left}, one step ahead from ${data.test_from}`;
  // the columns of rankcraft evaluate's table, a row per league
  const three = rs.some((r) => r.three_way);
  const headers = ["ruleset", "scored", "matches", "log loss", "Brier", "accuracy", "decisive", "draws",
    ...(three ? ["3-way log loss", "RPS"] : [])];
  $("#live-scores thead").replaceChildren(el("tr", {}, ...headers.map((h, i) => el("th", { class: i ? "num" : "", text: h }))));
  $("#live-scores tbody").replaceChildren(...rs.map((r, i) => {
    const cells = [count(r.n), count(r.matches), fmt(r.log_loss, 4), fmt(r.brier, 4), fmt(r.accuracy, 4),
      count(r.decisive), count(r.draws)];
    if (three) cells.push(r.three_way ? fmt(r.three_way.log_loss, 4) : "-", r.three_way ? fmt(r.three_way.rps, 4) : "-");
    return el("tr", { "data-league": i ? "challenger" : "champion" }, el("td", { text: labels[i] }),
      ...cells.map((text) => el("td", { class: "num", text })));
  }));
  const diffs = data.differences || [];
  $("#live-differences").hidden = !diffs.length;
  const d0 = diffs[0];
  $("#live-paired-note").textContent = d0
    ? `against ${data.champion}, the same items (negative: the challenger is better); 95 % interval of ${count(d0.samples)} bootstrap resamples of ${d0.block_days}-day blocks, seed ${d0.seed}` : "";
  const signed = (v) => (v === null ? "-" : (v >= 0 ? "+" : "") + v.toFixed(4));
  $("#live-differences tbody").replaceChildren(...diffs.map((d) => el("tr", { "data-score": d.score },
    el("td", { text: d.ruleset }), el("td", { text: d.score }),
    el("td", { class: "num", text: signed(d.difference) }),
    el("td", { class: "num nowrap", text: `[${signed(d.low)}, ${signed(d.high)}]` }),
    el("td", { class: "num", text: count(d.blocks) }))));
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
  const skill = (r, name) => (name && r.display ? r.display.skill[name] : null);  // as players see it
  const hasConservative = !f.rank && state.board.some(
    (r) => shown(r) !== null && f.location && shown(r) !== skill(r, f.location));
  const rankFmt = columnFormat(rows.map((r) => r.rank && r.rank[f.rank]));
  const shownFmt = columnFormat(rows.map(shown));
  const locationFmt = columnFormat(rows.map((r) => skill(r, f.location)));
  const spreadFmt = columnFormat(rows.map((r) => skill(r, f.spread)));
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
    if (f.rank) cells.push(el("td", { class: "num", text: rankFmt(r.rank && r.rank[f.rank]) }));
    if (hasConservative) cells.push(el("td", { class: "num conservative", text: shownFmt(shown(r)) }));
    cells.push(el("td", { class: "num", text: locationFmt(skill(r, f.location)) }));
    if (f.spread) cells.push(el("td", { class: "num", text: spreadFmt(skill(r, f.spread)) }));
    cells.push(el("td", { class: "num", text: count(r.matches) }),
      el("td", { text: r.last_played ? r.last_played.slice(0, 10) : "-" }));
    return el("tr", { "data-player": r.id }, ...cells);
  });
  $("#leaderboard tbody").replaceChildren(...body);
  const first = state.board.length ? state.board[0].place : 0;
  const last = state.board.length ? state.board[state.board.length - 1].place : 0;
  const found = q ? ` holding “${q}”` : "";
  $("#league-count").textContent = q
    ? (rows.length ? `players ${count(state.offset + 1)} to ${count(state.offset + rows.length)}${found} (places ${count(first)} to ${count(last)})`
      : `no players${found}`)
    : (rows.length ? `places ${count(first)} to ${count(last)}` : "no players");
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
  const shown = season.players.slice(0, 200), score = columnFormat(shown.map((r) => r.score));
  $("#season-table tbody").replaceChildren(...shown.map((r, i) =>
    el("tr", {}, el("td", { class: "num", text: count(i + 1) }), el("td", { text: r.id }),
      el("td", { text: r.tier }), el("td", { class: "num", text: score(r.score) }))));
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

const MATCH_PAGE = 100;

function clearPlayer(title, summary) {
  $("#player-title").textContent = title;
  $("#player-summary").textContent = summary;
  $("#player-matches thead").replaceChildren();
  $("#player-matches tbody").replaceChildren();
  $("#player-count").textContent = "";
  $("#player-prev").hidden = $("#player-next").hidden = true;
  $("#rating-legend").replaceChildren();
  $("#rank-block").hidden = true;
  $("#corrections-block").hidden = true;
  $("#player-corrections").replaceChildren();
  drawn.delete($("#rating-chart"));
  drawn.delete($("#rank-chart"));
}

function chartNote(svg, text) {
  const width = shownWidth(svg, 900, 900);
  svg.setAttribute("viewBox", `0 0 ${width} 300`);
  svg.setAttribute("width", width);
  svg.setAttribute("height", 300);
  const t = svgEl("text", { x: width / 2, y: 150, "text-anchor": "middle", "font-size": 14, fill: "#667", class: "chart-note" });
  t.textContent = text;
  svg.replaceChildren(t);
}

async function showPlayer(id) {
  if (!id) { clearPlayer("Choose a player", ""); chartNote($("#rating-chart"), "no player chosen"); return; }
  $("#player-id").value = id;
  // what is shown while the player's matches come: their name and a note in the chart
  clearPlayer(id, "loading…");
  chartNote($("#rating-chart"), `loading ${id}'s matches…`);
  let data;
  try {
    data = await api(`/web/players/${encodeURIComponent(id)}`);
  } catch (e) {
    clearPlayer(e.message, "");
    chartNote($("#rating-chart"), "no such player");
    return;
  }
  if ($("#player-id").value !== id) return;  // another player was asked meanwhile
  state.player = data;
  state.playerPage = 0;
  const p = data.player, f = data.fields, ms = data.matches;
  const resets = ms.filter((m) => m.reset_before);
  const shown = data.display.skill, both = columnFormat([shown[f.location], shown[f.spread]]);
  $("#player-summary").textContent =
    `${count(p.matches)} ${p.matches === 1 ? "match" : "matches"}` +
    (f.location ? `, ${f.location} ${both(shown[f.location])}` : "") +
    (f.spread ? ` ± ${both(shown[f.spread])}` : "") +
    (data.standing ? `, ${data.standing}` : "") +
    (resets.length ? `; ${count(resets.length)} season ${resets.length === 1 ? "reset" : "resets"} marked` : "") +
    ` (${data.ruleset})`;
  const t = ms.map((m) => Date.parse(m.played_at));
  const marks = resets.map((m) => Date.parse(m.played_at));
  const series = [{
    label: f.location, color: COLORS[0],
    points: ms.map((m, i) => [t[i], m.skill_after]),
    band: f.spread ? ms.map((m, i) => [t[i], m.skill_after - 2 * m.spread_after, m.skill_after + 2 * m.spread_after]) : [],
  }];
  const items = [{ label: f.location, color: COLORS[0] }];
  if (f.spread) items.push({ label: `± 2 ${f.spread}`, color: "#c5d6f6", band: true });
  // a whole-history model's smoothed curve: what the fit of every match says now
  const curve = data.curve || [];
  if (curve.length) {
    series.push({ label: "smoothed", color: COLORS[2], points: curve.map((c) => [Date.parse(c[0]), c[1]]) });
    items.push({ label: `smoothed ${f.location} (whole-history fit)`, color: COLORS[2] });
  }
  if (marks.length) items.push({ label: "season reset", color: "#9a5b00", dashed: true });
  $("#rating-legend").replaceChildren(legend(items));
  redrawn($("#rating-chart"), () => lineChart($("#rating-chart"), series, { marks }));
  const ranked = ms.filter((m) => m.rank_after !== null);
  $("#rank-block").hidden = !ranked.length;
  if (ranked.length) {
    const labels = [];
    let tier = null;
    for (const m of ranked) {
      if (m.tier_after && m.tier_after !== tier) labels.push([Date.parse(m.played_at), m.rank_after, m.tier_after]);
      tier = m.tier_after;
    }
    const rankSeries = [{ label: f.rank, color: COLORS[1], step: true,
      points: ranked.map((m) => [Date.parse(m.played_at), m.rank_after]) }];
    redrawn($("#rank-chart"), () => lineChart($("#rank-chart"), rankSeries, { marks, height: 260, labels }));
  }
  renderPlayerMatches();
  renderCorrections(data.corrections || [], p.id);
}

// The edits of the player's matches, newest first: what was done to which match, why,
// by whom, and how the player's shown value moved
const EDITED = { void: "voided", correct: "corrected", late: "recorded late" };

function renderCorrections(edits, id) {
  $("#corrections-block").hidden = !edits.length;
  const items = edits.slice().reverse().map((e) => {
    const mine = e.changes.find((c) => c.player === id);
    const moved = mine && mine.before && mine.after && mine.before.value !== null && mine.after.value !== null
      ? `; ${fmt(mine.before.value, 1)} → ${fmt(mine.after.value, 1)}` : "";
    const was = e.kind === "correct" && e.old && e.new ? ` (${changedFields(e.old, e.new)})` : "";
    return el("li", { "data-edit": e.n },
      el("span", { class: e.kind === "void" ? "down" : "reset", text: EDITED[e.kind] || e.kind }),
      ` ${e.match_id}${was} on ${e.made_at.slice(0, 10)}${e.by ? ` by ${e.by}` : ""}: `,
      el("q", { text: e.reason }), moved);
  });
  $("#player-corrections").replaceChildren(...items);
}

function changedFields(old, now) {
  const keys = [...new Set([...Object.keys(old), ...Object.keys(now)])];
  const changed = keys.filter((k) => JSON.stringify(old[k]) !== JSON.stringify(now[k]));
  return changed.length ? `${changed.join(", ")} changed` : "unchanged";
}

// The player's matches, newest first, a page at a time (every one of them, not the latest
// few): the rank column only where the ruleset has rank points
function renderPlayerMatches() {
  const data = state.player, f = data.fields;
  const ms = data.matches.slice().reverse();
  const ranked = data.matches.some((m) => m.rank_after !== null);
  const head = ["date", "match", "result", "vs", "expected", f.location || "rating"];
  if (ranked) head.push(f.rank || "rank");
  head.push("why (factors)");
  $("#player-matches thead").replaceChildren(el("tr", {}, ...head.map((h) => el("th", { text: h }))));
  const first = state.playerPage * MATCH_PAGE;
  const page = ms.slice(first, first + MATCH_PAGE);
  // one format per column: the before, after and change of every row alike
  const figures = (key) => page.flatMap((m) => [m[`${key}_before`], m[`${key}_after`],
    m[`${key}_before`] === null || m[`${key}_after`] === null ? null : m[`${key}_after`] - m[`${key}_before`]]);
  const delta = (a, b, format) => {
    if (a === null || b === null) return "-";
    const d = b - a;
    return `${format(a)} → ${format(b)} (${d >= 0 ? "+" : ""}${format(d)})`;
  };
  const skillFmt = columnFormat(figures("skill")), rankFmt = columnFormat(figures("rank"));
  const rows = page.map((m) => {
    const vs = m.teams.filter((_, i) => i !== m.side).map((s) => s.join(", ")).join(" / ");
    const mine = m.teams[m.side].filter((x) => x !== data.player.id);
    const why = el("td", { class: "factors" }, ...Object.entries(m.factors).flatMap(([k, v], i) =>
      [...(i ? [", "] : []), el("span", { text: `${k} ${factor(v)}` })]));
    const date = el("td", { class: "nowrap", text: m.played_at.slice(0, 10) });
    if (m.reset_before) date.append(" ", el("span", { class: "reset", title: "after a season reset", text: "reset" }));
    const cells = [date, el("td", { text: m.id }),
      el("td", { text: m.result, class: m.result === "won" ? "up" : m.result === "lost" ? "down" : "" }),
      vsCell((mine.length ? `with ${mine.join(", ")} vs ` : "") + vs),
      el("td", { class: "num", text: fmt(m.expected, 3) }),
      el("td", { class: "nowrap num", text: delta(m.skill_before, m.skill_after, skillFmt) })];
    if (ranked) cells.push(el("td", { class: "nowrap", text: delta(m.rank_before, m.rank_after, rankFmt) + (m.tier_after ? ` ${m.tier_after}` : "") }));
    cells.push(why);
    return el("tr", { "data-match": m.id }, ...cells);
  });
  $("#player-matches tbody").replaceChildren(...rows);
  const all = data.player.matches;
  $("#player-count").textContent = ms.length
    ? `matches ${count(first + 1)} to ${count(first + rows.length)} of ${count(ms.length)}, newest first` +
      (all > ms.length ? ` (the latest ${count(ms.length)} of ${count(all)} are listed)` : "")
    : "no matches";
  $("#player-prev").hidden = first === 0;
  $("#player-next").hidden = first + MATCH_PAGE >= ms.length;
  scrollCue();
}

// Who the player met: on one line, cut with an ellipsis past its width (the whole text
// in its title): a long line-up no longer makes each row a column of names
function vsCell(text) { return el("td", { class: "vs", title: text, text }); }

// A table wider than the window scrolls in its own box; the cue under it names the
// columns out of sight, until they are scrolled into view
function scrollCue() {
  const table = $("#player-matches"), cue = $("#player-scroll-cue");
  const seen = table.scrollLeft + table.clientWidth;
  const hidden = [...table.querySelectorAll("thead th")].filter((th) => th.offsetLeft + th.offsetWidth > seen + 1);
  cue.hidden = !hidden.length || table.scrollWidth <= table.clientWidth + 1;
  cue.textContent = `scroll the table sideways for ${hidden.map((th) => th.textContent).join(", ")} →`;
}
window.addEventListener("resize", () => { if (state.player) scrollCue(); });

function turnMatches(step) {
  state.playerPage = Math.max(0, state.playerPage + step);
  renderPlayerMatches();
}

// -- lab -----------------------------------------------------------------------------------

// Rulesets are compared in the order they were picked: the first is the baseline. None
// is picked for the user.
function labBundled() {
  $("#lab-bundled").replaceChildren(...state.meta.bundled.map((name) => {
    const box = el("input", { type: "checkbox", value: name, class: "lab-bundled" });
    box.addEventListener("change", () => {
      if (box.checked) box.dataset.picked = ++state.picks;
      else delete box.dataset.picked;
      showBaseline();
    });
    return el("label", {}, box, ` ${name}`);
  }));
}

function picked() {
  const chosen = [...document.querySelectorAll(".lab-bundled:checked, #lab-custom .editor")];
  return chosen.sort((a, b) => Number(a.dataset.picked) - Number(b.dataset.picked));
}

function showBaseline() {
  const first = picked()[0];
  const name = !first ? null : first.classList.contains("editor")
    ? (first.querySelector("textarea").value.match(/^\s*name\s*=\s*"([^"]*)"/m) || [null, "your TOML"])[1]
    : first.value;
  $("#lab-baseline").textContent = name ? `baseline: ${name} (the first picked)` : "pick two or more; the first is the baseline";
}

function addCustom(text) {
  const n = state.customs++;
  const area = el("textarea", { class: "toml", id: `lab-toml-${n}`, spellcheck: "false" });
  area.value = text || `name = "custom-${n + 1}"\nextends = "${state.meta.ruleset}"\n\n[update.params]\n`;
  const lines = el("div", { class: "lines" });
  const error = el("p", { class: "field-error", role: "alert" });
  const box = el("div", { class: "editor", "data-editor": n }, area, lines, error);
  box.dataset.picked = ++state.picks;
  const remove = el("button", { type: "button", text: "remove" });
  remove.addEventListener("click", () => { box.remove(); showBaseline(); });
  box.append(remove);
  $("#lab-custom").append(box);
  let timer = null;
  area.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => { checkToml(box); showBaseline(); }, 250); });
  checkToml(box);
  showBaseline();
  return box;
}

async function checkToml(box) {
  const area = box.querySelector("textarea"), error = box.querySelector(".field-error");
  // (answers can come back out of order: only the latest check's answer is shown)
  const asked = String((Number(box.dataset.checks) || 0) + 1);
  box.dataset.checks = asked;
  const result = await api("/web/lab/check", { method: "POST", body: { toml: area.value } });
  if (box.dataset.checks !== asked) return !box.classList.contains("invalid");
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

// A history the lab could not read: the service's reason (naming the file, its line and
// column, and the formats it reads, as the command line says them), and a link to them.
function formatError(message) {
  return el("span", {}, `${message} `, "The match formats are written in docs/matches.md and in the API's ",
    el("a", { href: "/docs", text: "Match schema" }), ".");
}

// The file's text, as uploaded: the service reads it with the command line's reader
// (one reader: rankcraft.io.read_match_text); a .gz file is unpacked here first.
async function readHistory(file) {
  let stream = file.stream();
  if (file.name.endsWith(".gz")) stream = stream.pipeThrough(new DecompressionStream("gzip"));
  return await new Response(stream).text();
}

function labError(content) {
  const box = $("#lab-error");
  if (content instanceof Node) box.replaceChildren(content);
  else box.textContent = content || "";
}

async function runLab() {
  labError("");
  const rulesets = [];
  for (const item of picked()) {
    if (item.classList.contains("editor")) {
      if (!(await checkToml(item))) { labError("fix the ruleset errors shown above"); return; }
      rulesets.push({ toml: item.querySelector("textarea").value });
    } else rulesets.push({ name: item.value });
  }
  if (rulesets.length < 2) { labError("choose two or more rulesets"); return; }
  const body = { rulesets };
  const testFrom = $("#lab-test-from").value.trim();
  if (testFrom) body.test_from = testFrom;
  const homeFrom = $("#lab-home-from").value.trim();
  if (homeFrom) body.home_from = homeFrom;
  $("#lab-run").disabled = true;
  $("#lab-job").hidden = false;
  // Cancel works from the click on: while the file is read, while it is sent (the
  // request is dropped), and once the job is queued (the job is cancelled)
  const asking = state.asking = { cancelled: false, xhr: null, sent: false };
  const cancelled = () => { endJob(); labError("the comparison was cancelled"); };
  const bar = $("#lab-progress"), said = $("#lab-progress-text");
  if (document.querySelector("input[name=lab-source]:checked").value === "file") {
    const file = $("#lab-file").files[0];
    if (!file) { endJob(); labError("choose a match file"); return; }
    bar.removeAttribute("value");
    said.textContent = `reading ${file.name} (${megabytes(file.size)})…`;
    try { body.history = await readHistory(file); } catch (e) { endJob(); labError(`${file.name}: ${e.message}`); return; }
    body.history_name = file.name;
    if (asking.cancelled) { cancelled(); return; }
  }
  let job;
  try {
    job = await send("/web/lab/jobs", body, asking, (sent, total) => {
      bar.max = total; bar.value = sent;
      said.textContent = sent >= total ? `sent ${megabytes(total)}; the service is queueing the job…`
        : `sending the request: ${megabytes(sent)} of ${megabytes(total)} (${Math.floor(100 * sent / Math.max(1, total))} %)`;
    });
  } catch (e) {
    if (asking.cancelled) { cancelled(); return; }
    endJob();
    labError(e.message);
    return;
  }
  sessionStorage.setItem("rankcraft-lab-job", job.id);
  watchJob(job);
  if (asking.cancelled) cancelJob();
}

function megabytes(n) { return n < 1e6 ? `${count(Math.ceil(n / 1000))} kB` : `${(n / 1e6).toFixed(1)} MB`; }

// POST a JSON body, telling `progress(sent, total)` as its bytes go (fetch cannot)
function send(path, body, asking, progress) {
  return new Promise((resolve, reject) => {
    const xhr = asking.xhr = new XMLHttpRequest();
    xhr.open("POST", path);
    xhr.setRequestHeader("Content-Type", "application/json");
    const t = token();
    if (t) xhr.setRequestHeader("Authorization", `Bearer ${t}`);
    xhr.upload.onprogress = (e) => { if (e.lengthComputable) progress(e.loaded, e.total); };
    xhr.upload.onload = () => { asking.sent = true; };
    xhr.onerror = () => reject(new Error("the service did not answer"));
    xhr.onabort = () => reject(new Error("the comparison was cancelled"));
    xhr.onload = () => {
      let data = null;
      try { data = JSON.parse(xhr.responseText); } catch (e) { /* said below */ }
      if (xhr.status >= 200 && xhr.status < 300 && data) resolve(data);
      else reject(new Error(data && data.error ? data.error.message : `${xhr.status} ${xhr.statusText}`));
    };
    xhr.send(JSON.stringify(body));
  });
}

// A lab job runs on the service; the page asks how far it is twice a second: a
// progress bar with its counts, a cancel button, and the result once it is done.
function watchJob(job) {
  state.job = job.id;
  $("#lab-run").disabled = true;
  $("#lab-job").hidden = false;
  const show = (j) => {
    const bar = $("#lab-progress");
    if (j.total) { bar.max = j.total; bar.value = j.done; } else bar.removeAttribute("value");
    const where = j.state === "queued"
      ? `queued: ${count(j.queued_behind)} ${j.queued_behind === 1 ? "job" : "jobs"} ahead`
      : j.total ? `${count(j.done)} of ${count(j.total)} matches replayed (${Math.floor(100 * j.done / j.total)} %), ${j.stage}`
        : j.stage;
    $("#lab-progress-text").textContent = where + (j.seconds ? `; ${Math.round(j.seconds)} s` : "");
  };
  show(job);
  const poll = async () => {
    if (state.job !== job.id) return;
    let j;
    try { j = await api(`/web/lab/jobs/${encodeURIComponent(job.id)}`); } catch (e) {
      endJob(); labError(e.message); return;
    }
    show(j);
    if (j.state === "queued" || j.state === "running") { setTimeout(poll, 500); return; }
    endJob();
    if (j.state === "done") renderLab(j.result);
    else if (j.state === "cancelled") labError("the comparison was cancelled");
    else if (j.error && j.error.field === "history") labError(formatError(j.error.message));
    else labError(j.error ? j.error.message : "the comparison failed");
  };
  setTimeout(poll, 300);
}

function endJob() {
  state.job = null;
  state.asking = null;
  sessionStorage.removeItem("rankcraft-lab-job");
  $("#lab-run").disabled = false;
  $("#lab-job").hidden = true;
}

async function cancelJob() {
  const id = state.job;
  if (!id) {  // not queued yet: dropped while it is read or sent, else cancelled once queued
    const asking = state.asking;
    if (asking) {
      asking.cancelled = true;
      if (asking.xhr && !asking.sent) asking.xhr.abort();
    }
    return;
  }
  try { await api(`/web/lab/jobs/${encodeURIComponent(id)}/cancel`, { method: "POST", body: {} }); }
  catch (e) { labError(e.message); }
}

// Back on the lab after a reload: the job asked for in this tab, if the service still has it
async function resumeJob() {
  const id = sessionStorage.getItem("rankcraft-lab-job");
  if (!id || state.job) return;
  try { watchJob(await api(`/web/lab/jobs/${encodeURIComponent(id)}`)); } catch (e) { endJob(); }
}

const SEASONS_SHOWN = 12;

function renderLab(data) {
  $("#lab-results").hidden = false;
  const rs = data.results;
  const color = (i) => COLORS[i % COLORS.length];
  $("#lab-summary").textContent = `${count(data.matches)} matches, scored from ${data.test_from.slice(0, 10)}; baseline ${data.baseline}`;
  $("#lab-warnings").replaceChildren(...(data.warnings || []).map((w) => el("p", { class: "warning", text: w })));
  $("#lab-scores thead").replaceChildren(el("tr", {}, el("th", { text: "" }),
    ...rs.map((r) => el("th", { text: r.label || r.name }))));
  const best = Math.min(...rs.map((r) => r.evaluation.log_loss));
  const row = (label, f) => el("tr", {}, el("th", { text: label }), ...rs.map((r) => el("td", { class: "num", text: f(r) })));
  const rows = [
    row("log loss", (r) => fmt(r.evaluation.log_loss, 4) + (r.evaluation.log_loss === best ? " best" : "")),
    row("Brier", (r) => fmt(r.evaluation.brier, 4)),
    row("accuracy", (r) => fmt(r.evaluation.accuracy, 3)),
    row("scored items", (r) => count(r.evaluation.n))];
  // a ruleset with a draw model is scored three ways too (win, draw, loss), as evaluate does
  if (rs.some((r) => r.evaluation.three_way)) {
    const three = (r, k) => (r.evaluation.three_way ? fmt(r.evaluation.three_way[k], 4) : "-");
    rows.push(row("3-way log loss", (r) => three(r, "log_loss")), row("RPS", (r) => three(r, "rps")));
  }
  if (rs.some((r) => r.evaluation.draw_fit)) {
    rows.push(row("draw parameters fitted", (r) => (r.evaluation.draw_fit
      ? Object.entries(r.evaluation.draw_fit.values).map(([k, v]) => `${k} ${Number(v).toPrecision(4)}`).join(", ") : "-")));
  }
  rows.push(row(`players in another tier than ${data.baseline}`, (r) => r.tier_changes === null ? "-" : count(r.tier_changes)));
  $("#lab-scores tbody").replaceChildren(...rows);
  // evaluate's paired differences against the baseline (the first ruleset), with the
  // 95 % interval of a block bootstrap: an interval that holds 0 is no difference shown
  const diffs = data.differences || [];
  $("#lab-paired").hidden = !diffs.length;
  if (diffs.length) {
    const d0 = diffs[0];
    $("#lab-paired-note").textContent = `each ruleset's score less ${data.baseline}'s on the same items (negative: better); 95 % interval of ${count(d0.samples)} bootstrap resamples of ${d0.block_days}-day blocks, seed ${d0.seed}`;
    const signed = (v) => (v === null ? "-" : (v >= 0 ? "+" : "") + v.toFixed(4));
    $("#lab-differences tbody").replaceChildren(...diffs.map((d) => el("tr", { "data-ruleset": d.ruleset, "data-score": d.score },
      el("td", { text: d.ruleset }), el("td", { text: d.score }),
      el("td", { class: "num", text: signed(d.difference) }),
      el("td", { class: "num nowrap", text: `[${signed(d.low)}, ${signed(d.high)}]` }),
      el("td", { class: "num", text: count(d.blocks) }))));
  }
  const calibration = [
    { label: "ideal", color: "#bbb", points: [[0, 0], [1, 1]] },
    ...rs.map((r, i) => ({ label: r.name, color: color(i), dots: true,
      points: r.evaluation.calibration.filter((b) => b.n).map((b) => [b.predicted, b.observed]) })),
  ];
  $("#lab-calibration-legend").replaceChildren(legend(calibration.map((s) => ({ label: s.label, color: s.color }))));
  redrawn($("#lab-calibration"), () => lineChart($("#lab-calibration"), calibration,
    { time: false, square: true, width: 420, xmin: 0, xmax: 1, ymin: 0, ymax: 1 }));
  $("#lab-ratings").replaceChildren(...rs.map((r, i) => el("div", { class: "card" },
    el("strong", { text: r.name }), el("p", { class: "muted", text: rangeText(r.location, r.ratings) }),
    bars(r.ratings.counts, color(i)))));
  // one table per tier system (the rank plugin the tiers come from), its rulesets side
  // by side, tiers best first; a ruleset without tiers has none to count
  const systems = new Map();
  for (const r of rs) {
    if (!r.tier_order.length) continue;
    if (!systems.has(r.tier_system)) systems.set(r.tier_system, []);
    systems.get(r.tier_system).push(r);
  }
  $("#lab-tiers").hidden = !systems.size;
  const untiered = rs.filter((r) => !r.tier_order.length).map((r) => r.label || r.name);
  $("#lab-no-tiers").textContent = systems.size
    ? (untiered.length ? `without tiers: ${untiered.join(", ")}` : "")
    : "none of these rulesets has tiers";
  $("#lab-tiers").replaceChildren(...[...systems].map(([system, members]) => {
    const tiers = [...new Set(members.flatMap((r) => r.tier_order))];
    return el("table", { class: "lab-tier-table", "data-system": system },
      el("caption", { text: `tiers of ${system}` }),
      el("thead", {}, el("tr", {}, el("th", { text: "tier" }), ...members.map((r) => el("th", { text: r.label || r.name })))),
      el("tbody", {}, ...tiers.map((t) => el("tr", {}, el("td", { text: t }),
        ...members.map((r) => el("td", { class: "num", text: count(r.tiers[t] || 0) }))))));
  }));
  // each season at its end: the ratings of its players (bins shared by a ruleset's
  // seasons) and the tiers of the league then; the last dozen, the others on request
  $("#lab-seasons").replaceChildren(...rs.map((r, k) => {
    const names = r.tier_order.filter((n) => r.seasons.some((x) => x.tiers[n]));
    const span = r.seasons.length ? r.seasons[0].ratings : null;
    const body = el("tbody", {});
    const table = el("table", { class: "lab-seasons", "data-ruleset": r.name },
      el("caption", { text: `${r.name}: each season at its end` +
        (span ? ` (${rangeText(r.location, span)})` : "") }),
      el("thead", {}, el("tr", {}, ...["season", "from", "to", "matches", "players", r.location || "rating",
        ...names].map((n) => el("th", { text: n })))), body);
    const fill = (all) => body.replaceChildren(...(all ? r.seasons : r.seasons.slice(-SEASONS_SHOWN)).map((x) =>
      el("tr", { "data-season": x.season },
        el("td", { class: "num", text: x.season }),
        el("td", { class: "nowrap", text: x.start.slice(0, 10) }), el("td", { class: "nowrap", text: x.end.slice(0, 10) }),
        el("td", { class: "num", text: count(x.matches) }), el("td", { class: "num", text: count(x.players) }),
        el("td", { class: "season-ratings" }, bars(x.ratings.counts, color(k), 160, 40)),
        ...names.map((n) => el("td", { class: "num", text: count(x.tiers[n] || 0) })))));
    fill(false);
    const block = el("div", { class: "season-block" }, table);
    if (r.seasons.length > SEASONS_SHOWN) {
      const more = el("button", { type: "button", class: "more-seasons",
        text: `show all ${count(r.seasons.length)} seasons (the last ${SEASONS_SHOWN} are shown)` });
      more.addEventListener("click", () => {
        const all = more.dataset.all !== "1";
        more.dataset.all = all ? "1" : "0";
        fill(all);
        more.textContent = all ? `show the last ${SEASONS_SHOWN} seasons only` : `show all ${count(r.seasons.length)} seasons (the last ${SEASONS_SHOWN} are shown)`;
      });
      block.append(more);
    }
    return block;
  }));
  // each ruleset's top 20, in its leaderboard's order, shown by what it sorts by
  $("#lab-top").replaceChildren(...rs.map((r, i) => {
    const caption = el("caption", {}, legend([{ label: r.name, color: color(i) }]));
    const valueFmt = columnFormat(r.top.map((p) => p.value));
    return el("table", { class: "lab-top", "data-ruleset": r.name }, caption,
      el("thead", {}, el("tr", {}, ...["#", "player", "standing", r.value || "rating"].map((h) => el("th", { text: h })))),
      el("tbody", {}, ...r.top.map((p, n) => el("tr", {}, el("td", { class: "num", text: n + 1 }),
        el("td", { text: p.id }), el("td", { text: p.standing || "" }), el("td", { class: "num", text: valueFmt(p.value) })))));
  }));
}

// "rating: 1402.5 to 1851.0": a range of a lab's histogram, both ends written alike
function rangeText(name, span) {
  const format = columnFormat([span.low, span.high]);
  return `${name}: ${format(span.low)} to ${format(span.high)}`;
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
  out.textContent = "";
  $("#record-confirm").hidden = true;
  // a time far past the league's latest match (a historical league, "now" by default):
  // say which season events would run first, and record only when asked again
  let check = null;
  try {
    check = await api(`/web/played-at?at=${encodeURIComponent(match.played_at)}`);
  } catch (e) { out.className = "error"; out.textContent = e.message; return; }
  if (check.far) { askToRecord(match, check); return; }
  await recordNow(match);
}

function eventText(e) {
  const when = e.runs === 1 ? `on ${e.first.slice(0, 10)}` : `${count(e.runs)} times, ${e.first.slice(0, 10)} to ${e.last.slice(0, 10)}`;
  return `${e.kind} reset ${when}` + (e.every_days === null ? " (a long gap in play)" : ` (every ${fmt(e.every_days)} days)`);
}

function askToRecord(match, check) {
  const box = $("#record-confirm");
  const days = Math.round(check.days_after_latest);
  const events = check.events.length
    ? el("ul", { class: "events" }, ...check.events.map((e) => el("li", { text: eventText(e) })))
    : el("p", { text: "No scheduled season event would run first." });
  const yes = el("button", { type: "button", class: "confirm", text: "Record it anyway" });
  const no = el("button", { type: "button", class: "cancel", text: "Cancel" });
  box.replaceChildren(
    el("p", { text: `“${match.played_at}” is ${count(days)} days after the league's latest match (${check.latest.slice(0, 10)}).` +
      (check.events.length ? " Recording it first runs these season events, which cannot be undone:" : "") }),
    events, el("p", { class: "row" }, yes, no));
  box.hidden = false;
  yes.addEventListener("click", () => { box.hidden = true; recordNow(match); });
  no.addEventListener("click", () => {
    box.hidden = true;
    $("#record-result").textContent = "not recorded: set “Played at” to when the match was played";
  });
}

async function recordNow(match) {
  const out = $("#record-result");
  try {
    const data = await api("/matches", { method: "POST", body: match });
    const changes = data.report.changes.map((c) => {
      const before = shownSkill(c.skill_before, "location"), after = shownSkill(c.skill_after, "location");
      const format = columnFormat([before, after]);
      return before !== null ? `${c.player} ${format(before)} → ${format(after)}` : c.player;
    });
    out.textContent = `recorded ${data.match.id}: ${changes.join("; ")}`;
    await showHeader();  // the league's counts, now one match more
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
  const table = $("#predict-result"), note = $("#predict-note");
  note.replaceChildren();
  try {
    const data = await api("/predict", { method: "POST", body });
    const two = data.sides.length === 2;
    const wins = !two || data.win;  // two sides without a draw model: expected scores only
    const head = ["side", ...(wins ? [two ? "P(win)" : "P(first)"] : []), "expected score"];
    if (!two && data.places) head.push("predicted place");
    table.querySelector("thead").replaceChildren(el("tr", {}, ...head.map((h) => el("th", { text: h }))));
    const win = (i) => (data.win ? data.win[i] : data.probabilities[i]);
    const rows = data.sides.map((s, i) => el("tr", {}, el("td", { text: s.join(", ") }),
      ...(wins ? [el("td", { class: "num", text: fmt(win(i), 4) })] : []),
      el("td", { class: "num", text: fmt(data.expected_score[i], 4) }),
      ...(!two && data.places ? [el("td", { class: "num", text: data.order.indexOf(i) + 1 })] : [])));
    if (data.draw !== null && data.draw !== undefined) {
      rows.push(el("tr", { class: "draw" }, el("td", { text: "draw" }), el("td", { class: "num", text: fmt(data.draw, 4) }), el("td", {})));
    }
    table.querySelector("tbody").replaceChildren(...rows);
    const lines = [];
    if (two && !data.win) lines.push("this ruleset has no draw model: the expected score (a draw counts ½) is what it predicts");
    for (const p of data.new_players || []) {
      lines.push(`“${p.id}” is new to the league: predicted as a new player` +
        (p.similar.length ? ` (did you mean ${p.similar.map((x) => `“${x}”`).join(" or ")}?)` : ""));
    }
    note.replaceChildren(...lines.map((text) => el("p", { class: text.includes("new to") ? "warning" : "muted", text })));
  } catch (e) {
    table.querySelector("thead").replaceChildren();
    table.querySelector("tbody").replaceChildren(el("tr", {}, el("td", { class: "error", text: e.message })));
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
    else if (name === "lab") await resumeJob();
  } catch (e) {
    status(`error: ${e.message}`);
  }
  document.body.dataset.page = name;
  document.body.dataset.ready = "1";
}

async function showHeader(known) {
  const meta = known || await api("/web/meta");
  state.meta = meta;
  $("#ruleset-name").textContent = meta.ruleset;
  $("#league-size").textContent = `${count(meta.players)} players, ${count(meta.matches)} matches`;
}

async function start() {
  $("#token").value = sessionStorage.getItem("rankcraft-token") || "";
  state.meta = await api("/web/meta");
  if (state.meta.active_days !== null) {  // the ruleset's [display] active_days
    $("#league-active").checked = true;
    $("#league-days").value = state.meta.active_days;
  }
  showHeader(state.meta);
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
  $("#lab-cancel").addEventListener("click", cancelJob);
  $("#player-prev").addEventListener("click", () => turnMatches(-1));
  $("#player-next").addEventListener("click", () => turnMatches(1));
  $("#player-matches").addEventListener("scroll", scrollCue);
  $("#record-form").addEventListener("submit", recordMatch);
  $("#predict-form").addEventListener("submit", predict);
  labBundled();
  showBaseline();
  window.addEventListener("hashchange", route);
  // the comparison moves as matches arrive: read again while the league's page shows it
  setInterval(() => {
    if (document.body.dataset.page === "league" && state.meta.challenger) showLive();
  }, LIVE_EVERY);
  await route();
}

start().catch((e) => status(`error: ${e.message}`));
