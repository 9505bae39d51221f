/* bootscope report: draws the charts from the JSON block and fills the log view.
 * Log text only ever reaches the page through textContent, or through esc() for Plotly labels
 * (Plotly reads a small HTML subset in labels; esc() turns every < > & into entities it prints). */
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("bootscope-data").textContent);
  const CONFIG = { displaylogo: false, responsive: true, modeBarButtonsToRemove: ["select2d", "lasso2d"] };
  const FONT = { family: "system-ui, 'DejaVu Sans', sans-serif", size: 13, color: "#1d2433" };
  const PALETTE = ["#2f6fdb", "#e08a1e", "#2a9d6e", "#8e5bd6", "#d1495b", "#3aa4c9", "#9c7a3c", "#5b6475"];

  // Control characters shown as their Unicode "control pictures", so they are visible and inert.
  function visible(s) {
    return String(s).replace(/[\u0000-\u0008\u000b-\u001f]/g, (c) => String.fromCharCode(0x2400 + c.charCodeAt(0)))
      .replace(/\u007f/g, "\u2421");
  }
  function esc(s) {
    return visible(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  function short(s, n) {
    const t = String(s).trim();
    return t.length > n ? t.slice(0, n - 1) + "…" : t;
  }
  function dur(s) {
    if (s >= 1) return s.toFixed(s < 100 ? 2 : 0) + " s";
    if (s >= 0.001) return (s * 1e3).toFixed(1) + " ms";
    return Math.round(s * 1e6) + " us";
  }
  const stamp = (t) => "[" + t.toFixed(6).padStart(12, " ") + "]";

  const boot = DATA.boot;
  let logApi = null;
  let timelineShapes = [];

  function drawTimeline(el) {
    const phaseLane = "phases", gapLane = "largest gaps", msLane = "milestones";
    const cpuLanes = boot.cpus.map((c) => "CPU " + c[0]);
    const units = boot.units || [];
    const unitLanes = units.map((u) => esc(u[0]));
    const lanes = [phaseLane, msLane].concat(boot.lanes, cpuLanes, [gapLane], unitLanes);
    const lineOf = (i) => (i >= 0 ? boot.lines.x[i] : "");
    const phases = {
      type: "bar", orientation: "h", name: "phases", y: boot.phases.map(() => phaseLane),
      base: boot.phases.map((p) => p[1]), x: boot.phases.map((p) => p[2] - p[1]),
      text: boot.phases.map((p) => esc(p[0])), textposition: "inside", insidetextanchor: "middle",
      marker: { color: boot.phases.map((_, i) => PALETTE[i % PALETTE.length]) },
      hovertext: boot.phases.map((p) => "<b>" + esc(p[0]) + "</b><br>" + p[1].toFixed(6) + " s → " +
        p[2].toFixed(6) + " s<br>" + dur(p[2] - p[1]) + (p[3] === null ? "" : " (" + (100 * p[3]).toFixed(1) + " %)")),
      hoverinfo: "text",
    };
    const calls = boot.initcalls;
    const initcalls = {
      type: "bar", orientation: "h", name: "initcalls", y: calls.map((c) => c[4]),
      base: calls.map((c) => c[1]), x: calls.map((c) => c[2] / 1e6),
      marker: { color: calls.map((c) => (c[3] === 0 || c[3] === null ? "#2f6fdb" : "#c8372d")),
        line: { width: 0 } },
      customdata: calls.map((c) => c[5]),
      hovertext: calls.map((c) => "<b>" + esc(c[0]) + "</b><br>" + esc(short(lineOf(c[5]) || ("initcall " + c[0]), 110)) +
        "<br>start " + c[1].toFixed(6) + " s · " + c[2].toLocaleString("en") + " us · ret " + c[3]),
      hoverinfo: "text",
    };
    const cpus = {
      type: "bar", orientation: "h", name: "CPU bring-up", y: cpuLanes, base: boot.cpus.map((c) => c[1]),
      x: boot.cpus.map((c) => c[2]), marker: { color: "#2a9d6e" },
      hovertext: boot.cpus.map((c) => "<b>CPU " + c[0] + "</b><br>start " + c[1].toFixed(6) + " s · " + dur(c[2])),
      hoverinfo: "text",
    };
    const gaps = {
      type: "bar", orientation: "h", name: "largest gaps", y: boot.gaps.map(() => gapLane),
      base: boot.gaps.map((g) => g[0]), x: boot.gaps.map((g) => g[1]), marker: { color: "#c8372d" },
      hovertext: boot.gaps.map((g) => "<b>silence of " + dur(g[1]) + "</b><br>before: " + esc(short(g[2], 110)) +
        "<br>after: " + esc(short(g[3], 110)) + "<br>from " + g[0].toFixed(6) + " s"),
      hoverinfo: "text",
    };
    const milestones = {
      type: "scatter", mode: "markers", name: "milestones", y: boot.milestones.map(() => msLane),
      x: boot.milestones.map((m) => m[1]), marker: { symbol: "diamond", size: 11, color: "#1d2433" },
      hovertext: boot.milestones.map((m) => "<b>" + esc(m[0]) + "</b><br>" + m[1].toFixed(6) + " s"),
      hoverinfo: "text",
    };
    // systemd's units, one lane each as `systemd-analyze plot` draws them: activating -> active
    // (a unit with no active time, or an instant one, is a thin mark at its start).
    const unitBars = {
      type: "bar", orientation: "h", name: "systemd units", y: unitLanes, base: units.map((u) => u[1]),
      x: units.map((u) => (u[2] === null ? 0 : Math.max(u[2] - u[1], 0))),
      marker: { color: units.map((u) => (u[2] === null ? "#9aa3b5" : "#d1495b")), line: { width: 1, color: "#8c2f3c" } },
      hovertext: units.map((u) => "<b>" + esc(u[0]) + "</b><br>activating " + u[1].toFixed(6) + " s" +
        (u[2] === null ? "<br>never active" : " → active " + u[2].toFixed(6) + " s<br>" + dur(u[2] - u[1]))),
      hoverinfo: "text",
    };
    timelineShapes = boot.phases.map((p, i) => ({
      type: "rect", xref: "x", yref: "paper", x0: p[1], x1: p[2], y0: 0, y1: 1, layer: "below",
      line: { width: 0 }, fillcolor: PALETTE[i % PALETTE.length], opacity: 0.07,
    })).concat(boot.gaps.map((g) => ({
      type: "rect", xref: "x", yref: "paper", x0: g[0], x1: g[0] + g[1], y0: 0, y1: 1, layer: "below",
      line: { width: 0 }, fillcolor: "#c8372d", opacity: 0.12,
    })));
    const labelled = boot.gaps.slice().sort((a, b) => b[1] - a[1]).slice(0, 5);
    const annotations = labelled.map((g, i) => ({
      x: g[0] + g[1] / 2, y: gapLane, text: esc(short(g[2], 48)) + " <b>" + dur(g[1]) + "</b>",
      showarrow: true, arrowhead: 0, ax: 0, ay: -28 - 22 * i, bgcolor: "rgba(255,255,255,0.92)",
      bordercolor: "#c8372d", font: { size: 12 },
    }));
    const layout = {
      font: FONT, barmode: "overlay", showlegend: false, hovermode: "closest", dragmode: "zoom",
      height: Math.max(300, 100 + 26 * (lanes.length - unitLanes.length) + 17 * unitLanes.length),
      margin: { l: unitLanes.length ? 270 : 150, r: 20, t: 10, b: 48 },
      xaxis: { title: { text: "time since kernel start (s)" }, zeroline: false, showgrid: true },
      // dtick 1: every lane keeps its label (Plotly thins dense category ticks, and unit lanes are dense)
      yaxis: { type: "category", categoryorder: "array", categoryarray: lanes, autorange: "reversed", fixedrange: true,
        dtick: 1, tickfont: { size: unitLanes.length ? 11 : 13 } },
      shapes: timelineShapes, annotations: annotations, hoverlabel: { align: "left", font: { size: 13 } },
    };
    if (calls.length < boot.initcalls_all) {
      layout.title = { text: "the " + calls.length + " longest of " + boot.initcalls_all + " initcalls are drawn",
        font: { size: 12 }, x: 0.01 };
      layout.margin.t = 30;
    }
    if (units.length < (boot.units_all || 0)) {
      layout.title = { text: "the " + units.length + " longest-activating of " + boot.units_all + " units are drawn",
        font: { size: 12 }, x: 0.01 };
      layout.margin.t = 30;
    }
    Plotly.newPlot(el, [phases, initcalls, cpus, gaps, milestones, unitBars], layout, CONFIG);
    el.on("plotly_click", (ev) => {
      const p = ev.points[0];
      if (p && p.data.name === "initcalls" && p.customdata >= 0 && logApi) logApi.reveal(p.customdata);
    });
  }

  function showOnTimeline(t) {
    const el = document.getElementById("timeline");
    if (!el || !el.layout) return;
    const span = Math.max(0.05, ((boot.last_s || t) - (boot.first_s || 0)) / 20);
    const cursor = { type: "line", xref: "x", yref: "paper", x0: t, x1: t, y0: 0, y1: 1,
      line: { color: "#e08a1e", width: 2 } };
    Plotly.relayout(el, { "xaxis.range": [t - span / 2, t + span / 2], shapes: timelineShapes.concat([cursor]) });
    el.scrollIntoView({ behavior: "instant", block: "center" });
  }

  function drawGaps(el) {
    const g = boot.gapbars;
    const text = g.i.map((i) => boot.lines.x[i]);
    const order = g.d.map((_, k) => k).sort((a, b) => g.d[b] - g.d[a]).slice(0, 6);
    const trace = {
      type: "bar", x: g.t, y: g.d.map((d) => d * 1e3), width: g.d, offset: 0, marker: { color: "#2f6fdb", line: { width: 0 } },
      hovertext: g.t.map((t, k) => esc(short(text[k], 110)) + "<br>at " + t.toFixed(6) + " s, next line " + dur(g.d[k]) + " later"),
      hoverinfo: "text",
    };
    const annotations = order.map((k, n) => ({
      x: g.t[k] + g.d[k] / 2, y: g.d[k] * 1e3, text: esc(short(text[k], 44)) + " <b>" + dur(g.d[k]) + "</b>",
      showarrow: true, arrowhead: 0, ax: n % 2 ? 40 : -40, ay: -24 - 14 * n, bgcolor: "rgba(255,255,255,0.92)",
      font: { size: 12 },
    }));
    const note = g.shown < g.all ? " (the " + g.shown + " largest of " + g.all + " shown)" : "";
    Plotly.newPlot(el, [trace], {
      font: FONT, showlegend: false, height: 380, margin: { l: 70, r: 20, t: 30, b: 48 }, bargap: 0,
      xaxis: { title: { text: "time of the line since kernel start (s)" } },
      yaxis: { title: { text: "time until the next line (ms)" }, rangemode: "tozero" },
      annotations: annotations, hoverlabel: { align: "left" },
      title: { text: "Every bar is one timestamped line" + note, font: { size: 13 }, x: 0.01 },
    }, CONFIG);
  }

  function drawDeltas(el, deltas) {
    const rows = deltas.rows.slice().sort((a, b) => Math.abs(b[3] - b[2]) - Math.abs(a[3] - a[2])).slice(0, 20).reverse();
    const names = rows.map((r) => esc(short(r[0] + ": " + r[1], 50)));
    const bar = (label, k, color) => ({
      type: "bar", orientation: "h", name: esc(label), y: names, x: rows.map((r) => r[k]), marker: { color: color },
      hovertext: rows.map((r) => esc(r[1]) + "<br>" + esc(label) + ": " + dur(r[k]) + "<br>change " +
        ((r[3] - r[2]) >= 0 ? "+" : "−") + dur(Math.abs(r[3] - r[2]))), hoverinfo: "text",
    });
    Plotly.newPlot(el, [bar(deltas.a, 2, "#9aa3b5"), bar(deltas.b, 3, "#2f6fdb")], {
      font: FONT, barmode: "group", height: Math.max(320, 60 + 34 * rows.length), margin: { l: 330, r: 20, t: 30, b: 48 },
      xaxis: { title: { text: "duration (s)" } }, legend: { orientation: "h", y: 1.08 },
      title: { text: "Largest changes, side by side", font: { size: 13 }, x: 0.01 },
    }, CONFIG);
  }

  function drawRun(host, run) {
    run.metrics.forEach((metric, m) => {
      const row = document.createElement("div");
      row.className = "dist-row";
      const strip = document.createElement("div"), ecdf = document.createElement("div");
      strip.className = ecdf.className = "chart";
      strip.id = "dist-" + m;
      ecdf.id = "ecdf-" + m;
      row.append(strip, ecdf);
      host.append(row);
      const traces = [], lines = [];
      run.variants.forEach((v, k) => {
        const pairs = (run.values[metric] || {})[v] || [];
        const color = PALETTE[k % PALETTE.length];
        // Deterministic jitter (golden-ratio sequence) so the page looks the same every time.
        traces.push({ type: "scatter", mode: "markers", name: esc(v), x: pairs.map((_, i) => k + (((i * 0.618034) % 1) - 0.5) * 0.5),
          y: pairs.map((p) => p[1]), marker: { color: color, size: 7, opacity: 0.65 },
          hovertext: pairs.map((p) => esc(v) + " boot " + p[0] + ": " + p[1].toFixed(4)), hoverinfo: "text" });
        const med = ((run.medians[metric] || {})[v]);
        if (med) {
          const ci = med[1] === null ? null : { type: "data", symmetric: false, array: [med[2] - med[0]], arrayminus: [med[0] - med[1]], thickness: 2.5, width: 14, color: "#1d2433" };
          traces.push({ type: "scatter", mode: "markers", name: "median", x: [k], y: [med[0]], error_y: ci || undefined,
            marker: { symbol: "line-ew-open", size: 30, color: "#1d2433", line: { width: 3 } },
            hovertext: [esc(v) + " median " + med[0].toFixed(4) + (med[1] === null ? "" : " [" + med[1].toFixed(4) + ", " + med[2].toFixed(4) + "]")], hoverinfo: "text" });
        }
        const ys = pairs.map((p) => p[1]).sort((a, b) => a - b);
        lines.push({ type: "scatter", mode: "lines", line: { shape: "hv", color: color, width: 2.5 }, name: esc(v),
          x: ys, y: ys.map((_, i) => (i + 1) / ys.length), hoverinfo: "x+y+name" });
      });
      Plotly.newPlot(strip, traces, { font: FONT, showlegend: false, height: 340, margin: { l: 70, r: 10, t: 36, b: 48 },
        title: { text: esc(metric), font: { size: 14 }, x: 0.01 },
        xaxis: { zeroline: false, tickvals: run.variants.map((_, k) => k), ticktext: run.variants.map(esc), range: [-0.6, run.variants.length - 0.4] },
        yaxis: { title: { text: esc(metric) + " (s)" } } }, CONFIG);
      Plotly.newPlot(ecdf, lines, { font: FONT, height: 340, margin: { l: 60, r: 10, t: 36, b: 48 },
        title: { text: "ECDF of " + esc(metric), font: { size: 14 }, x: 0.01 }, legend: { orientation: "h", y: -0.25 },
        xaxis: { title: { text: esc(metric) + " (s)" } }, yaxis: { title: { text: "fraction of boots" }, range: [0, 1.02] } }, CONFIG);
    });
  }

  function makeLog(el, search, count) {
    const rowsEl = el.querySelector(".log-rows"), spacer = el.querySelector(".log-spacer");
    const H = 18, n = boot.lines.x.length;
    let shown = Array.from({ length: n }, (_, i) => i), hit = -1;
    const lower = boot.lines.x.map((s) => null);
    function render() {
      const first = Math.max(0, Math.floor(el.scrollTop / H) - 10);
      const last = Math.min(shown.length, first + Math.ceil(el.clientHeight / H) + 20);
      rowsEl.style.transform = "translateY(" + first * H + "px)";
      const frag = document.createDocumentFragment();
      for (let k = first; k < last; k++) {
        const i = shown[k], t = boot.lines.t[i];
        const row = document.createElement("div");
        row.className = "log-row" + (i === hit ? " hit" : "");
        row.dataset.line = String(i + 1);
        if (t === null) {
          const u = document.createElement("span");
          u.className = "untimed";
          u.textContent = " ".repeat(14);
          row.append(u);
        } else {
          const a = document.createElement("a");
          a.href = "#timeline";
          a.title = "show on the timeline";
          a.textContent = stamp(t);
          a.addEventListener("click", (ev) => { ev.preventDefault(); showOnTimeline(t); });
          row.append(a);
        }
        row.append(document.createTextNode(visible(boot.lines.x[i])));
        frag.append(row);
      }
      rowsEl.replaceChildren(frag);
    }
    function filter() {
      const q = search.value.toLowerCase();
      if (q) {
        shown = [];
        for (let i = 0; i < n; i++) {
          if (lower[i] === null) lower[i] = boot.lines.x[i].toLowerCase();
          if (lower[i].includes(q)) shown.push(i);
        }
      } else {
        shown = Array.from({ length: n }, (_, i) => i);
      }
      count.textContent = shown.length + " of " + n + " lines";
      spacer.style.height = shown.length * H + "px";
      el.scrollTop = 0;
      render();
    }
    el.addEventListener("scroll", () => window.requestAnimationFrame(render));
    search.addEventListener("input", filter);
    filter();
    return {
      reveal(i) {
        search.value = "";
        filter();
        hit = i;
        el.scrollTop = Math.max(0, i * H - el.clientHeight / 2);
        render();
        el.scrollIntoView({ behavior: "instant", block: "center" });
      },
    };
  }

  const byId = (id) => document.getElementById(id);
  if (boot) {
    if (byId("log")) logApi = makeLog(byId("log"), byId("log-search"), byId("log-count"));
    if (byId("timeline")) drawTimeline(byId("timeline"));
    if (byId("gaps")) drawGaps(byId("gaps"));
  }
  if (DATA.deltas && byId("deltas")) drawDeltas(byId("deltas"), DATA.deltas);
  if (DATA.run && byId("dists")) drawRun(byId("dists"), DATA.run);
  document.body.dataset.rendered = "yes";
})();
