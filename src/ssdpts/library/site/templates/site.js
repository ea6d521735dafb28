// The results site's page (ssdpts db site): the library's index (sort, filter, search), a
// comparison of the selected runs against a chosen baseline by `ssdpts compare`'s rules (compare.py:
// delta, labels, settings check, headline rows, median run and RSE of repeats) with compare's plots
// (report/compare_html.py, described here the same way and drawn by the reports' chart.js), and the
// trend of a figure against date or firmware, per model. Each run's cells are in data/runs/<uid>.js
// (site/data.py), loaded when the run is selected. window.ssdptsSite is the page's state, for tests.
(function () {
  "use strict";
  var SITE = JSON.parse(document.getElementById("ssdpts-site").textContent);
  var METRICS = SITE.metrics, RUNS = SITE.runs, BY = {}, LOADED = {}, WAITING = {};
  RUNS.forEach(function (r) { BY[r.uid] = r; });
  var SPEED = "speed", RSE_LIMIT = 0.05, MAX_REPEATS = 7, MIN_REPEATS = 3;
  var BAD = "#cf222e", BLUE = "#0969da", INK = "#24292f", PT = 72;
  var MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "h", "<"];
  var state = {sort: {key: "created", dir: -1}, q: "", filters: {}, selected: [], baseline: null, repeats: false,
               trend: {key: null, x: "date"}, specs: {}, comparison: null};

  // ---- formatting (results/registry.py) ----------------------------------------------------------
  var FORMATS = {};  // one Intl.NumberFormat per number of decimals (toLocaleString makes one per call)
  function fixed(v, d) {
    var f = FORMATS[d] || (FORMATS[d] = new Intl.NumberFormat("en-US", {minimumFractionDigits: d, maximumFractionDigits: d}));
    return f.format(v);
  }
  function fmtValue(v, unit, missing) {
    if (v === null || v === undefined) return missing === undefined ? "n/a" : missing;
    var a = Math.abs(v);
    if (unit === "IOPS") return a >= 100 ? fixed(v, 0) : fixed(v, 1);
    if (unit === "min") return fixed(v, 0);
    if (a >= 10) return fixed(v, 1);
    return a >= 0.01 || a === 0 ? fixed(v, 2) : String(+v.toPrecision(2));
  }
  function fmtDelta(d) {
    if (d === null || d === undefined) return "n/a";
    if (Math.abs(d) < 0.0005) return "±0.0%";
    var s = Math.abs(d) >= 10 ? fixed(Math.abs(d * 100), 0) : (Math.abs(d * 100)).toFixed(1);
    return (d < 0 ? "−" : "+") + s + "%";
  }
  function fmtPct(x) { return x === null || x === undefined ? "n/a" : (x * 100).toFixed(2) + "%"; }
  function deltaCss(d) {
    if (d === null || d === undefined) return "na";
    if (Math.abs(d) < 0.01) return "zero";
    if (d > 0) return d >= 0.10 ? "pos2" : "pos";
    return d <= -0.10 ? "neg2" : "neg";
  }
  function fmtBs(bs) { return String(bs / 1024) + "KiB"; }
  function fmtCap(n) {  // pts/units.fmt_capacity: base 10, three significant figures (537 MB, 1.07 GB, 3.84 TB)
    if (!n) return "—";
    var v = +(+n).toPrecision(3), units = [[1e12, "TB"], [1e9, "GB"], [1e6, "MB"], [1e3, "kB"]];
    for (var i = 0; i < units.length; i++) {
      if (Math.abs(v) >= units[i][0]) {
        var x = v / units[i][0];
        return (Math.abs(x) >= 100 ? fixed(x, 0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2)) + " " + units[i][1];
      }
    }
    return fixed(n, 0) + " bytes";
  }
  function day(iso) { return iso ? iso.slice(0, 10) : "—"; }
  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) {
      if (attrs[k] === null || attrs[k] === undefined || attrs[k] === false) continue;
      if (k === "text") e.textContent = attrs[k];
      else if (k === "cls") e.className = attrs[k];
      else if (k.slice(0, 2) === "on") e.addEventListener(k.slice(2), attrs[k]);
      else e.setAttribute(k, attrs[k] === true ? "" : attrs[k]);
    }
    (kids || []).forEach(function (c) { if (c !== null && c !== undefined) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return e;
  }

  function csvText(rows) {  // RFC 4180: a field with a comma, a quote or a line break is quoted
    return rows.map(function (r) {
      return r.map(function (v) {
        var t = v === null || v === undefined ? "" : String(v);
        return /[",\n\r]/.test(t) ? '"' + t.replace(/"/g, '""') + '"' : t;
      }).join(",");
    }).join("\r\n") + "\r\n";
  }
  function csvLink(name, rows) {  // a link that downloads the rows (made when clicked: the table may have changed)
    return el("a", {cls: "csv", href: "#", download: name, title: "download as CSV (unrounded numbers)", text: "CSV",
      onclick: function (e) { e.currentTarget.href = URL.createObjectURL(new Blob([csvText(rows())], {type: "text/csv"})); }});
  }

  // ---- compare.py: delta, labels, settings, the parts several runs share ----------------------------
  function delta(value, base, kind) {
    if (value === null || base === null || value === undefined || base === undefined || value <= 0 || base <= 0) return null;
    return kind === SPEED ? value / base - 1 : base / value - 1;
  }
  function labels(runs, repeats) {
    if (repeats) return runs.map(function (r, i) { return "run " + (i + 1); });
    var bases = runs.map(function (r) { return r.device; });
    return bases.map(function (b, i) {
      return bases.filter(function (x) { return x === b; }).length === 1 ? b : b + " #" + (i + 1);
    });
  }
  function cmpRank(a, b) {
    for (var i = 0; i < Math.max(a.length, b.length); i++) {
      var x = a[i], y = b[i];
      if (x === y) continue;
      if (x === undefined) return -1;
      if (y === undefined) return 1;
      return x < y ? -1 : 1;
    }
    return 0;
  }
  function sharedParts(runs, labs) {
    var pids = runs.map(function (r) { return LOADED[r.uid].parts.map(function (p) { return p.id; }); });
    var shared = pids[0].filter(function (pid) { return pids.every(function (ids) { return ids.indexOf(pid) >= 0; }); });
    var all = [];
    pids.forEach(function (ids) { ids.forEach(function (p) { if (all.indexOf(p) < 0) all.push(p); }); });
    var notShared = all.filter(function (p) { return shared.indexOf(p) < 0; }).map(function (p) {
      return p + " (only in " + labs.filter(function (l, i) { return pids[i].indexOf(p) >= 0; }).join(", ") + ")";
    });
    var parts = shared.map(function (pid) {
      var per = runs.map(function (r) { return LOADED[r.uid].parts.filter(function (p) { return p.id === pid; })[0]; });
      var keys = {}, order = [];
      per.forEach(function (p, i) {
        p.cells.forEach(function (c) {
          var k = [c[0], c[1], c[2], c[3]].join("|");
          if (!keys[k]) { keys[k] = {metric: c[0], bs: c[1], mix: c[2], point: c[3], label: c[5], rank: c[6],
                                     values: runs.map(function () { return null; })}; order.push(k); }
          keys[k].values[i] = c[4];
        });
      });
      var rows = order.map(function (k) { return keys[k]; }).sort(function (a, b) { return cmpRank(a.rank, b.rank); });
      return {part: pid, test: per[0].test, title: per[0].title, rows: rows,
              reached: per.map(function (p) { return p.reached; }), stop: per.map(function (p) { return p.stop; }),
              view: per[0].view || {}, samples: per.map(function (p) { return p.samples || null; })};
    });
    return {parts: parts, notShared: notShared};
  }
  function differences(runs) {
    var out = SITE.settings.map(function (s) {
      return {setting: s, values: runs.map(function (r) { return LOADED[r.uid].settings[s.name]; })};
    }).filter(function (d) { return new Set(d.values).size > 1; });
    return out.filter(function (d) { return d.setting.invalidates; }).concat(out.filter(function (d) { return !d.setting.invalidates; }));
  }
  function compareRuns(uids) {
    var runs = uids.map(function (u) { return BY[u]; });
    var labs = labels(runs, false);
    var sp = sharedParts(runs, labs);
    var notes = [];
    runs.forEach(function (r, i) {
      if (r.status !== "complete") notes.push(labs[i] + ": run status " + r.status + " — " + (r.problems[0] || ""));
      if (r.executor === "fake") notes.push(labs[i] + ": synthetic data (FakeExecutor), not fio on a device");
    });
    sp.parts.forEach(function (p) {
      p.rows.forEach(function (row) {
        var kind = METRICS[row.metric].kind;
        row.deltas = row.values.map(function (v, i) { return i === 0 ? null : delta(v, row.values[0], kind); });
      });
    });
    return {kind: "comparison", runs: runs, labels: labs, parts: sp.parts, notShared: sp.notShared, notes: notes,
            differences: differences(runs)};
  }
  function repeatStats(values) {
    var n = values.length, idx = values.map(function (v, i) { return i; });
    idx.sort(function (a, b) { return values[a] - values[b] || a - b; });
    var mid = idx[Math.floor((n - 1) / 2)];
    var mean = values.reduce(function (a, v) { return a + v; }, 0) / n;
    var s = Math.sqrt(values.reduce(function (a, v) { return a + (v - mean) * (v - mean); }, 0) / (n - 1));
    return {n: n, median: values[mid], median_index: mid, mean: mean, stdev: s, rse: mean ? s / (mean * Math.sqrt(n)) : null};
  }
  function stats(values) {
    var idx = [];
    values.forEach(function (v, i) { if (v !== null && v !== undefined) idx.push(i); });
    if (idx.length < MIN_REPEATS) return null;
    var s = repeatStats(idx.map(function (i) { return values[i]; }));
    s.median_index = idx[s.median_index];
    s.flagged = s.rse !== null && s.rse > RSE_LIMIT;
    return s;
  }
  function advice(n, flagged) {
    if (!flagged) return null;
    if (n < MAX_REPEATS) return "add runs: with N = " + n + ", metrics above 5% RSE are too variable to report; add a run (up to 7, docs/compare.md) and compare again";
    if (n === MAX_REPEATS) return "add one last run (N = " + n + "): if the RSE stays above 5% beyond 7 runs, discard these results or investigate the cause (thermal throttling, background jobs, power states)";
    return "discard or investigate: N = " + n + " is more than 7 runs and the RSE is still above 5% — look for thermal throttling, background jobs or power-state changes, fix them, and start a new series";
  }
  function analyzeRepeats(uids) {
    var runs = uids.map(function (u) { return BY[u]; });
    var labs = labels(runs, true), n = runs.length, warnings = [];
    if (n % 2 === 0) warnings.push("N = " + n + " is even: there is no middle run, so each metric's median is the lower-middle run's value; add one run to make N odd (docs/compare.md)");
    runs.forEach(function (r, i) { if (r.status !== "complete") warnings.push(labs[i] + ": run status " + r.status); });
    var sp = sharedParts(runs, labs);
    sp.parts.forEach(function (p) {
      p.rows.forEach(function (row) { row.stats = stats(row.values); });
      var missed = labs.filter(function (l, i) { return p.reached[i] === false; });
      if (missed.length) warnings.push(p.title + ": steady state NOT reached in " + missed.join(", "));
    });
    var flagged = sp.parts.some(function (p) { return p.rows.some(function (r) { return r.stats && r.stats.flagged; }); });
    return {kind: "repeats", runs: runs, labels: labs, parts: sp.parts, notShared: sp.notShared, warnings: warnings,
            advice: advice(n, flagged), differences: differences(runs)};
  }
  function headlineRows(c) {
    var out = [];
    c.parts.forEach(function (p) {
      (SITE.headlines[p.test] || []).forEach(function (h) {
        var row = p.rows.filter(function (r) {
          return r.metric === h[0] && (h[1] === null || r.bs === h[1]) && (h[2] === null || r.mix === h[2]) && (h[3] === null || r.point === h[3]);
        })[0];
        if (row) out.push([p, row]);
      });
    });
    return out;
  }
  function rowName(p, row) { return p.title + ": " + row.label + (METRICS[row.metric].short ? " " + METRICS[row.metric].short : ""); }

  // ---- plot descriptions (report/chart.py), drawn by chart.js --------------------------------------
  function num(v) { return v === null || v === undefined || !isFinite(v) ? null : v; }
  function r2(v) { return Math.round(v * 100) / 100; }
  function axis(o) {
    o = o || {};
    var a = {s: o.scale || "linear"};
    if (o.lim) a.d = [num(o.lim[0]), num(o.lim[1])];
    if (o.ticks) { a.t = o.ticks.map(num); if (o.labels) a.l = o.labels.map(String); }
    if (o.fmt) a.f = o.fmt;
    if (o.label) a.label = o.label;
    if (o.color) a.c = o.color;
    if (o.hide) a.hide = true;
    if (o.grid === false) a.grid = false;
    if (o.integer) a.int = true;
    if (o.rotate) a.rot = true;
    if (o.size) a.z = o.size;
    return a;
  }
  function Figure(w, h) { this.w = w; this.h = h; this.panels = []; this.S = []; }
  Figure.prototype.grid = function (nrows, ncols, o) {
    o = Object.assign({left: 0.8, right: 0.25, top: 0.3, bottom: 0.55, hgap: 0.5, wgap: 0.6}, o || {});
    var w = this.w, h = this.h;
    var left = Math.min(o.left, 0.3 * w), right = Math.min(o.right, 0.45 * w), top = Math.min(o.top, 0.3 * h), bottom = Math.min(o.bottom, 0.3 * h);
    var innerH = Math.max(h - top - bottom - (nrows - 1) * o.hgap, 0.2 * nrows);
    var hr = o.height_ratios || d3.range(nrows).map(function () { return 1; }), sh = d3.sum(hr);
    var innerW = Math.max(w - left - right - (ncols - 1) * o.wgap, 0.2 * ncols);
    var wr = o.width_ratios || d3.range(ncols).map(function () { return 1; }), sw = d3.sum(wr);
    var rows = [], y = top;
    for (var i = 0; i < nrows; i++) {
      var row = [], x = left, hh = innerH * hr[i] / sh;
      for (var j = 0; j < ncols; j++) {
        var ww = innerW * wr[j] / sw;
        row.push([x * PT, y * PT, ww * PT, hh * PT]);
        x += ww + o.wgap;
      }
      rows.push(row);
      y += hh + o.hgap;
    }
    return rows;
  };
  Figure.prototype.axes = function (box, kind) { var ax = new Axes(this, box, kind || "xy"); this.panels.push(ax); return ax; };
  Figure.prototype.series = function (s) {
    var out = {n: String(s.n)};
    ["u", "x", "ti"].forEach(function (k) { if (s[k]) out[k] = String(s[k]); });
    if (s.t) out.t = s.t.map(String);
    this.S.push(out);
    return this.S.length - 1;
  };
  Figure.prototype.spec = function () {
    var out = {w: Math.round(this.w * PT * 10) / 10, h: Math.round(this.h * PT * 10) / 10, P: this.panels.map(function (p) { return p.d; })};
    if (this.S.length) out.S = this.S;
    return out;
  };
  function Axes(fig, box, kind) { this.fig = fig; this.d = {k: kind, box: box.map(r2), x: axis(), y: axis(), L: []}; }
  Axes.prototype.x = function (o) { this.d.x = axis(o); return this; };
  Axes.prototype.y = function (o) { this.d.y = axis(o); return this; };
  Axes.prototype.categories = function (names, o) {
    this.d.x = axis(Object.assign({lim: [-0.6, names.length - 1 + 0.6], ticks: d3.range(names.length), labels: names, grid: false}, o || {}));
    return this;
  };
  Axes.prototype.title = function (text) { this.d.title = {t: text, loc: "left"}; return this; };
  Axes.prototype.legend = function (at, ncol, offset) {
    this.d.leg = {at: at, n: ncol || 1};
    if (offset) this.d.leg.o = offset;
    return this;
  };
  Axes.prototype.add = function (layer, label, series) {
    if (label) layer.lab = label;
    if (series) layer.s = this.fig.series(series);
    this.d.L.push(layer);
    return layer;
  };
  Axes.prototype.line = function (xs, ys, o) {
    var l = {t: "line", x: xs.map(num), y: ys.map(num), c: o.color, w: o.lw === undefined ? 1.6 : o.lw, ls: o.ls || "-"};
    if (o.marker) { l.m = o.marker; l.ms = o.ms === undefined ? 4.0 : o.ms; if (o.mfc) l.mfc = o.mfc; if (o.mec) l.mec = o.mec; }
    return this.add(l, o.label, o.series);
  };
  Axes.prototype.bars = function (xs, hs, width, o) {
    var l = {t: "bars", x: xs.map(num), y: hs.map(num), bw: width, c: o.color};
    if (o.rotate) l.br = true;
    if (o.hatch && o.hatch.some(Boolean)) { l.h = o.hatch.map(Boolean); l.ec = o.edge || BAD; }
    if (o.labels) { l.bl = o.labels.map(String); l.bz = o.label_size === undefined ? 7.5 : o.label_size; }
    return this.add(l, o.label, o.series);
  };
  Axes.prototype.hline = function (y, o) { return this.add({t: "hline", v: num(y), c: o.color, w: o.lw || 1.0, ls: o.ls || "-"}); };
  Axes.prototype.text = function (x, y, text, o) {
    var l = {t: "text", x: num(x), y: num(y), s: text, c: o.color || INK, z: o.size || 7.0, dx: o.dx || 0.0, dy: o.dy || 0.0, a: o.anchor || "start"};
    if (o.axes_x) l.fx = true;
    return this.add(l);
  };
  Axes.prototype.legendLine = function (label, o) {
    var l = {t: "key", kl: true, c: o.color, w: o.lw, ls: o.ls};
    if (o.marker) { l.m = o.marker; l.ms = 5; }
    if (o.keep) l.lk = o.keep;
    return this.add(l, label);
  };
  Axes.prototype.legendPatch = function (label, o) {
    var l = {t: "key", c: o.color};
    if (o.hatch) { l.h = true; l.ec = o.edge || BAD; }
    if (o.keep) l.lk = o.keep;
    return this.add(l, label);
  };
  function ser(name, unit, xname, notes) { var s = {n: name, u: unit, x: xname}; if (notes) s.t = notes; return s; }
  function colors(n) { return d3.range(n).map(function (i) { return "tab10:" + (i % 10); }); }
  function pow10(e) { return Number("1e" + e); }
  function nice(lo, hi, n) {
    var span = hi - lo;
    if (span <= 0) return [lo];
    var raw = span / Math.max(n, 1), mag = pow10(Math.floor(Math.log10(raw)));
    var step = [1, 2, 2.5, 5, 10].map(function (m) { return m * mag; }).filter(function (s) { return s >= raw; })[0];
    var out = [];
    for (var k = Math.ceil(lo / step - 1e-9); k <= Math.floor(hi / step + 1e-9); k++) out.push(k * step);
    return out;
  }
  function logTicks(lo, hi) {
    var a = Math.min(lo, hi), b = Math.max(lo, hi), e0 = Math.floor(Math.log10(a)), e1 = Math.ceil(Math.log10(b));
    var subsets = [[1], [1, 2, 5], [1, 2, 3, 4, 5, 6, 7, 8, 9]];
    for (var s = 0; s < subsets.length; s++) {
      var ticks = [];
      for (var e = e0; e <= e1; e++) subsets[s].forEach(function (m) { var t = m * pow10(e); if (a <= t && t <= b) ticks.push(t); });
      if (ticks.length >= 3) {
        if (ticks.length > 10) {
          var keep = Math.max(1, Math.ceil(ticks.length / 10));
          ticks = ticks.filter(function (t, i) { var f = Math.log10(t) % 1; return i % keep === 0 || Math.abs(f) < 1e-9; });
        }
        return ticks;
      }
    }
    for (var n = 4; n < 13; n++) {
      var tk = nice(a, b, n).filter(function (t) { return a <= t && t <= b; });
      if (tk.length >= 3) return tk;
    }
    return [a, b];
  }
  function tickLabel(v) { return v >= 100 ? fixed(v, 0) : String(+v.toPrecision(v >= 1 ? 4 : 3)); }
  function logAxis(values, label, extra) {
    var vals = values.filter(function (v) { return v !== null && isFinite(v) && v > 0; });
    if (!vals.length) return Object.assign({scale: "log", label: label}, extra);
    var lo = d3.min(vals), hi = d3.max(vals);
    if (hi <= lo) { lo /= 1.5; hi *= 1.5; }
    var pad = Math.pow(hi / lo, 0.06);
    lo /= pad; hi *= pad;
    var t = logTicks(lo, hi);
    return Object.assign({scale: "log", lim: [lo, hi], ticks: t, labels: t.map(tickLabel), label: label}, extra);
  }
  function legendRows(labs) { return 0.2 * Math.floor((labs.length + 3) / 4) + 0.15; }
  function legendW(labs) { return d3.max(labs.map(function (l) { return String(l).length; }).concat([4])) * 8 * 0.6 / 72 + 0.6; }
  function runName(lab, i, missed) { return lab + (i === 0 ? " (baseline)" : "") + (missed ? " — SS NOT reached" : ""); }
  function legendBelow(ax, labs, missed, bars) {  // compare_plots._legend_below: chart.js fits it to the plot
    var cs = colors(labs.length);
    labs.forEach(function (lab, i) {
      var name = runName(lab, i, missed[i]), keep = name.length - String(lab).length;
      if (bars) ax.legendPatch(name, {color: cs[i], hatch: missed[i], edge: BAD, keep: keep});
      else ax.legendLine(name, {color: cs[i], marker: MARKERS[i % MARKERS.length], lw: i === 0 ? 2.2 : 1.5, ls: missed[i] ? "--" : "-", keep: keep});
    });
    ax.legend("below", Math.min(labs.length, 4), 30);
  }
  function missedOf(ss) { return ss.map(function (s) { return s === false; }); }
  function bsLines(fig, labs, values, ss, o) {
    var mixes = o.panels;
    var row = fig.grid(1, mixes.length, {left: 0.8, right: 0.2, top: 0.3, bottom: 0.6 + legendRows(labs), wgap: 0.3})[0];
    var cs = colors(labs.length), bss = [], yall = [], axes = [];
    values.forEach(function (vals) { vals.forEach(function (c) { if (bss.indexOf(c[0]) < 0) bss.push(c[0]); if (c[2] !== null && c[2] > 0) yall.push(c[2]); }); });
    bss.sort(function (a, b) { return a - b; });
    var kib = bss.map(function (b) { return b / 1024; });
    mixes.forEach(function (mix, k) {
      var ax = fig.axes(row[k]);
      axes.push(ax);
      values.forEach(function (vals, i) {
        var pts = vals.filter(function (c) { return c[1] === mix && c[2] !== null; }).map(function (c) { return [c[0] / 1024, c[2]]; })
          .sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
        if (pts.length) ax.line(pts.map(function (p) { return p[0]; }), pts.map(function (p) { return p[1]; }),
          {color: cs[i], marker: MARKERS[i % MARKERS.length], lw: i === 0 ? 2.2 : 1.5, ls: ss[i] === false ? "--" : "-",
           series: ser(labs[i], o.unit, "block size KiB")});
      });
      ax.x({scale: "log2", ticks: kib, labels: kib.map(String), label: "block size (KiB)"});
      ax.y(logAxis(yall, k === 0 ? o.unit : "", {hide: k > 0}));
      ax.title(o.panel_title + mix);
    });
    legendBelow(axes[Math.floor(axes.length / 2)], labs, missedOf(ss));
  }
  function groupedBars(fig, labs, groups, ss, ylabel, o) {
    o = o || {};
    var many = groups.length > 4, legend = o.legend !== false;
    var box = o.box || fig.grid(1, 1, {left: 0.8, right: 0.2, top: 0.2, bottom: 0.6 + (legend ? legendRows(labs) : 0)})[0][0];
    var ax = fig.axes(box), n = labs.length, w = Math.min(0.8 / Math.max(n, 1), 0.32);
    var pos = [];
    groups.forEach(function (g) { g[1].forEach(function (v) { if (v !== null && v > 0) pos.push(v); }); });
    var names = groups.map(function (g) { return g[0].replace(/\n/g, " "); });
    var log = pos.length > 0 && d3.max(pos) / d3.min(pos) > 30;
    colors(n).forEach(function (c, i) {
      var vals = groups.map(function (g) { return g[1][i]; });
      ax.bars(groups.map(function (g, k) { return k + (i - (n - 1) / 2) * w; }), vals, w, {
        color: c, hatch: groups.map(function () { return ss[i] === false; }), edge: BAD,
        labels: vals.map(function (v) { return v === null ? "n/a" : (groups.length * n <= 27 ? fmtValue(v, "") : ""); }),
        label_size: many ? 6.5 : 7, rotate: many, series: ser(labs[i], ylabel, "", names)});
    });
    ax.categories(names, many ? {size: 7} : {});
    if (log) {
      var lo = d3.min(pos) / 2, hi = d3.max(pos) * (many ? 12 : 3), t = logTicks(lo, hi);
      ax.y({scale: "log", lim: [lo, hi], ticks: t, labels: t.map(function (v) { return v >= 1 ? fixed(v, 0) : String(+v.toPrecision(3)); }), label: ylabel + " (log)"});
    } else {
      ax.y({lim: [0, Math.max(d3.max(pos) || 0, 1e-9) * (many ? 1.35 : 1.18)], fmt: "k", label: ylabel});
    }
    if (o.title) ax.title(o.title);
    if (legend) legendBelow(ax, labs, missedOf(ss), true);
  }
  function barPanels(fig, labs, panels, ss, unit) {
    var boxes = fig.grid(panels.length, 1, {left: 0.8, right: 0.2, top: 0.3, bottom: 0.6 + legendRows(labs), hgap: 0.75});
    panels.forEach(function (p, k) { groupedBars(fig, labs, p[1], ss, unit, {box: boxes[k][0], title: p[0], legend: k === panels.length - 1}); });
  }
  function samplesOverlay(fig, labs, series, o) {
    var ax = fig.axes(fig.grid(1, 1, {left: 0.8, right: 0.6, top: 0.2, bottom: 0.6 + legendRows(labs)})[0][0]), top = 0;
    var cs = colors(labs.length);
    series.forEach(function (s, i) {
      if (!s) return;
      var pts = s.x.map(function (x, k) { return [x, s.y[k]]; }).filter(function (p) { return p[0] !== null && p[1] !== null; });
      if (!pts.length) return;
      ax.line(pts.map(function (p) { return p[0]; }), pts.map(function (p) { return p[1]; }), {color: cs[i], marker: MARKERS[i % MARKERS.length],
        ms: pts.length > 60 ? 2.5 : 3.5, lw: i === 0 ? 2.0 : 1.3, series: ser(labs[i], o.unit, o.series_x)});
      top = Math.max(top, d3.max(pts, function (p) { return p[1]; }));
      if (s.level !== null && s.win.length) {
        ax.line([d3.min(s.win), d3.max(s.win)], [s.level, s.level], {color: cs[i], ls: "--", lw: 1.6});
        ax.text(d3.max(s.win), s.level, fmtValue(s.level, o.unit), {color: cs[i], dx: 4});
      }
    });
    ax.x({label: o.x, fmt: "k"});
    ax.y({lim: [0, Math.max(top, 1e-9) * 1.12], fmt: "k", label: o.unit});
    legendBelow(ax, labs, labs.map(function () { return false; }));
  }
  // a comparison's plot of a part, as its kind declares it (view.plot.draw; pts/<name>.py site(part))
  var DRAW = {
    "bs-lines": function (f, labs, c, p, o) {  // one line per run over the block sizes, a panel per R/W mix
      bsLines(f, labs, c.runs.map(function (r, i) { return p.rows.map(function (row) { return [row.bs, row.mix, row.values[i]]; }); }), p.reached, o);
    },
    "bars": function (f, labs, c, p, o) {  // one bar per run for each cell
      groupedBars(f, labs, p.rows.map(function (r) { return [r.label, r.values]; }), p.reached, o.unit);
    },
    "bar-panels": function (f, labs, c, p, o) {  // bars per cell, a panel per metric
      var panels = [];
      o.panels.forEach(function (m) {
        var rows = p.rows.filter(function (r) { return r.metric === m; });
        if (rows.length) panels.push([METRICS[m].label, rows.map(function (r) { return [fmtBs(r.bs) + "\n" + r.mix, r.values]; })]);
      });
      barPanels(f, labs, panels, p.reached, o.unit);
    },
    "samples": function (f, labs, c, p, o) { samplesOverlay(f, labs, p.samples, o); }  // each run's samples and its level
  };
  function spreadRse(fig, labs, names, dev, rses) {
    var many = names.length > 12;
    var bottom = 0.5 + (many && names.length ? d3.max(names, function (n) { return n.length; }) * 0.075 : 0.1);
    var g = fig.grid(2, 1, {left: 0.8, right: legendW(labs) + 0.1, top: 0.15, bottom: bottom, hgap: 0.2, height_ratios: [1.3, 1]});
    var x = d3.range(names.length), ax1 = fig.axes(g[0][0]);
    colors(labs.length).forEach(function (c, i) {
      ax1.line(x, dev.map(function (d) { return d[i] === null ? null : d[i] * 100; }), {ls: "none", color: c,
        marker: MARKERS[i % MARKERS.length], ms: 4.5, label: labs[i], series: ser(labs[i], "%", "", names)});
    });
    ax1.hline(0, {color: INK, lw: 0.8});
    ax1.categories(names, {hide: true});
    ax1.y({label: "vs median run (%)", fmt: "k"});
    ax1.legend("right");
    var ax2 = fig.axes(g[1][0]), vals = rses.map(function (r) { return r === null ? 0 : r * 100; });
    ax2.bars(x, vals, 0.7, {color: rses.map(function (r) { return r !== null && r > RSE_LIMIT ? BAD : BLUE; }), series: ser("RSE", "%", "", names)});
    ax2.hline(RSE_LIMIT * 100, {color: BAD, lw: 1, ls: "--"});
    ax2.text(1.005, RSE_LIMIT * 100, "5%", {color: BAD, axes_x: true});
    ax2.categories(names, names.length > 30 ? {rotate: many, size: 6} : {rotate: many});
    ax2.y({lim: [0, d3.max(vals.concat([RSE_LIMIT * 100])) * 1.2], fmt: "k", label: "RSE (%)"});
  }
  function describe(w, h, draw) { var f = new Figure(w, h); draw(f); return f.spec(); }

  // ---- the index -------------------------------------------------------------------------------------
  // The run's identity and verdict first (sticky while the table scrolls sideways), then the rest in
  // groups the chooser above the table shows or hides: the device and settings, and each test's
  // headline figures (docs/results-db.md "The site").
  var COLS = [
    {key: "status", label: "status", stick: true, get: function (r) { return r.status; }},
    {key: "model", label: "model", stick: true, get: function (r) { return r.model || r.device; }},
    {key: "ss", label: "steady state", stick: true, get: function (r) { return Object.keys(r.ss).filter(function (p) { return r.ss[p] === false; }).length; },
     cell: function (r) {  // ✓ when every part with a steady-state rule reached it, else the parts that did not
       var pids = Object.keys(r.ss), missed = pids.filter(function (p) { return r.ss[p] === false; });
       var all = pids.map(function (p) { return p + ": " + (r.ss[p] === false ? "NOT reached" : (r.ss[p] ? "reached" : "no steady-state rule")); }).join("\n");
       if (!pids.length) return el("span", {cls: "na", text: "—"});
       return missed.length ? el("span", {cls: "bad", title: all, text: missed.join(" ").replace(/-/g, "\u2011") + " ✗"})
         : el("span", {cls: "ok", title: all, text: "✓"});  // (non-breaking hyphens: a part id breaks only between ids)
     }},
    {key: "report", label: "report", get: function (r) { return r.report ? 1 : 0; }, cell: function (r) {
      return r.report ? el("a", {href: r.report, text: "report"}) : el("span", {cls: "note", text: "—"}); }},
    {key: "created", label: "date (UTC)", get: function (r) { return r.created; }, show: function (r) { return (r.created || "—").replace("T", " ").replace("Z", ""); }},
    {key: "tests", label: "tests", get: function (r) { return r.tests.join(", "); },
     show: function (r) { return r.tests.join(", ").replace(/-/g, "\u2011") || "—"; }},
    {key: "firmware", label: "firmware", group: "device", get: function (r) { return r.firmware; }},
    {key: "serial", label: "serial", group: "device", get: function (r) { return r.serial; }},
    {key: "capacity", label: "capacity", group: "device", num: true, get: function (r) { return r.capacity; }, show: function (r) { return fmtCap(r.capacity); }},
    {key: "profile", label: "profile", group: "device", get: function (r) { return r.profile; }, show: function (r) {
      return (r.profile || "—") + (r.tc ? " TC" + r.tc + "/QD" + r.qd : "") + (r.step_s && r.step_s !== 60 ? " · " + r.step_s + " s steps" : ""); }},
    {key: "host", label: "host", group: "device", get: function (r) { return r.host; }}
  ];
  SITE.columns.forEach(function (c) {
    COLS.push({key: "h:" + c.key, label: (c.short || c.label) + " (" + c.unit + ")", title: c.label + " (" + c.unit + ")", num: true, col: c,
               group: "t:" + c.test, get: function (r) { return r.h[c.key]; }, show: function (r) { return fmtShort(r.h[c.key], c.unit); }});
  });
  // the chooser's groups: the device and settings, then each test with headline figures, in run order
  var GROUPS = [{key: "device", label: "device & settings"}];
  SITE.columns.forEach(function (c) {
    if (!GROUPS.some(function (g) { return g.key === "t:" + c.test; }))
      GROUPS.push({key: "t:" + c.test, label: c.test.toUpperCase(), title: SITE.tests[c.test] || c.test, test: true});
  });
  function hashGroups() {  // #cols=device,t:iops: the columns chosen, kept in the page's address
    var m = /(?:^#|&)cols=([^&]*)/.exec(location.hash);
    return m ? decodeURIComponent(m[1]).split(",").filter(function (k) { return GROUPS.some(function (g) { return g.key === k; }); }) : null;
  }
  state.groups = hashGroups();  // null: chosen to fit the window (every test's figures that fit)
  state.fit = GROUPS.filter(function (g) { return g.test; }).map(function (g) { return g.key; });
  function chosen() { return state.groups || state.fit; }
  function shownCols() { return COLS.filter(function (c) { return !c.group || chosen().indexOf(c.group) >= 0; }); }
  function fmtShort(v, unit) {  // a wide figure abbreviated (the exact one in its title): 123k, 1.23M
    if (v === null || v === undefined) return "—";
    return Math.abs(v) >= 1e5 ? d3.format(".3~s")(v).replace("G", "B") : fmtValue(v, unit, "—");
  }
  var FILTERS = [["model", "every model"], ["firmware", "every firmware"], ["host", "every host"], ["test", "every test"],
                 ["status", "every status"], ["profile", "every profile"], ["drive_model", "every drive model"]];
  function filterValue(r, f) {
    if (f === "model") return [r.model || r.device];
    if (f === "test") return r.tests;
    return [r[f]];
  }
  function matches(r) {
    for (var f in state.filters) if (state.filters[f] && filterValue(r, f).indexOf(state.filters[f]) < 0) return false;
    if (!state.q) return true;
    var hay = [r.name, r.model, r.device, r.serial, r.firmware, r.host, r.tests.join(" "), r.target, r.status, r.vendor, r.profile]
      .join(" ").toLowerCase();
    return state.q.toLowerCase().split(/\s+/).every(function (w) { return !w || hay.indexOf(w) >= 0; });
  }
  function visible() {
    var col = COLS.filter(function (c) { return c.key === state.sort.key; })[0] || COLS[1], dir = state.sort.dir;
    return RUNS.filter(matches).sort(function (a, b) {
      var x = col.get(a), y = col.get(b);
      if (x === null || x === undefined || x === "") return (y === null || y === undefined || y === "") ? 0 : 1;
      if (y === null || y === undefined || y === "") return -1;
      if (col.num) return (x - y) * dir;
      return String(x).localeCompare(String(y), "en", {numeric: true}) * dir;
    });
  }
  function buildFilters() {
    var box = document.getElementById("filters");
    box.appendChild(el("input", {type: "search", id: "q", placeholder: "search: model, serial, firmware, host, tests…",
      "aria-label": "search", oninput: function (e) { state.q = e.target.value; renderIndex(); }}));
    FILTERS.forEach(function (f) {
      var vals = [];
      RUNS.forEach(function (r) { filterValue(r, f[0]).forEach(function (v) { if (v && vals.indexOf(v) < 0) vals.push(v); }); });
      vals.sort(function (a, b) { return String(a).localeCompare(String(b), "en", {numeric: true}); });
      var sel = el("select", {id: "f-" + f[0], "aria-label": f[1], onchange: function (e) { state.filters[f[0]] = e.target.value; renderIndex(); }},
        [el("option", {value: "", text: f[1]})].concat(vals.map(function (v) { return el("option", {value: v, text: v}); })));
      box.appendChild(sel);
    });
    box.appendChild(el("button", {type: "button", text: "clear", onclick: function () {
      state.q = ""; state.filters = {};
      box.querySelectorAll("select").forEach(function (s) { s.value = ""; });
      document.getElementById("q").value = "";
      renderIndex();
    }}));
    box.appendChild(el("span", {id: "shown", cls: "note"}));
    box.parentNode.insertBefore(el("div", {id: "chooser", cls: "filters chooser"}), box.nextSibling);
    box.appendChild(csvLink("ssdpts-runs.csv", indexCsv));
  }
  function indexCsv() {
    var head = ["run_uid", "run_name", "status", "created", "vendor", "model", "firmware", "serial", "capacity_bytes", "tests",
                "profile", "threads", "iodepth", "step_seconds", "host", "steady_state_not_reached"];
    return [head.concat(SITE.columns.map(function (c) { return c.label + " (" + c.unit + ")"; }))].concat(visible().map(function (r) {
      return [r.uid, r.name, r.status, r.created, r.vendor, r.model, r.firmware, r.serial, r.capacity, r.tests.join(" "),
              r.profile, r.tc, r.qd, r.step_s, r.host, Object.keys(r.ss).filter(function (p) { return r.ss[p] === false; }).join(" ")]
        .concat(SITE.columns.map(function (c) { return r.h[c.key]; }));
    }));
  }
  function renderIndex() {
    var runs = visible(), thead = document.querySelector("#runs thead"), tbody = document.querySelector("#runs tbody");
    var cols = shownCols();
    var hr = el("tr", {}, [el("th", {scope: "col", cls: "stick", title: "select runs to compare", text: "✓"})]);
    cols.forEach(function (c) {
      var arrow = state.sort.key === c.key ? (state.sort.dir > 0 ? " ▲" : " ▼") : "";
      hr.appendChild(el("th", {scope: "col", "data-key": c.key, cls: (c.num ? "num sortable" : "sortable") + (c.stick ? " stick" : ""),
        title: "sort by " + (c.title || c.label),
        onclick: function () { state.sort = {key: c.key, dir: state.sort.key === c.key ? -state.sort.dir : (c.num ? -1 : 1)}; renderIndex(); }},
        [c.label + arrow]));
    });
    thead.replaceChildren(hr);
    var frag = document.createDocumentFragment();
    runs.forEach(function (r) {
      var on = state.selected.indexOf(r.uid) >= 0;
      var tr = el("tr", {"data-uid": r.uid, cls: (on ? "selected " : "") + "st-" + r.status});
      var box = el("input", {type: "checkbox", "aria-label": "select " + r.name, disabled: !r.data,
        title: r.data ? "compare this run" : (r.problems[0] || "not comparable"), onchange: function (e) { toggle(r.uid, e.target.checked); }});
      box.checked = on;
      tr.appendChild(el("td", {cls: "sel stick"}, [box]));
      cols.forEach(function (c) {
        var v = c.get(r), text = c.cell ? c.cell(r) : (c.show ? c.show(r) : (v === null || v === undefined || v === "" ? "—" : String(v)));
        var td = el("td", {cls: (c.num ? "num" : "") + (c.key === "status" ? " status-cell" : "") + (c.key === "ss" ? " ss" : "") + (c.stick ? " stick" : ""),
                           "data-key": c.key, "data-value": c.num && v !== null && v !== undefined ? v : null}, [text]);
        if (c.col && v !== null && v !== undefined) td.title = fmtValue(v, c.col.unit) + " " + c.col.unit;
        if (c.col && r.ss[c.col.part] === false) { td.className += " nss"; td.textContent += " †"; td.title = "steady state NOT reached"; }
        if (c.key === "status" && r.problems.length) td.title = r.problems.join("\n");
        if (c.key === "model") td.title = r.name;
        tr.appendChild(td);
      });
      frag.appendChild(tr);
    });
    tbody.replaceChildren(frag);
    stickLeft();
    if (!state.groups && fitTooWide()) return;  // rendered again with one test fewer
    document.getElementById("shown").textContent = runs.length + " of " + RUNS.length + " runs shown";
    renderChooser();
    renderTrendControls(false);
    drawTrend();
  }
  function stickLeft() {  // the sticky columns' offsets: each starts where the one before it ends
    // each at the sum of the widths before it, as laid out (each cell draws its own borders, site.css):
    // the sticky cells stay where they stand unscrolled, edge to edge, the last one edged by a shadow
    // while the table is scrolled sideways
    var left = -1, ths = document.querySelectorAll("#runs thead th.stick"), at = [].map.call(ths, function (th) {
      var x = left;
      left += th.getBoundingClientRect().width;
      return x;
    });
    document.querySelectorAll("#runs tr").forEach(function (tr) {
      var cells = tr.querySelectorAll(".stick");
      cells.forEach(function (c, i) { c.style.left = at[i] + "px"; c.classList.toggle("stick-last", i === cells.length - 1); });
    });
    var box = document.querySelector(".index-scroll");
    if (!box.dataset.edge) {
      box.dataset.edge = "1";
      box.addEventListener("scroll", function () { box.classList.toggle("scrolled", box.scrollLeft > 0); }, {passive: true});
    }
    box.classList.toggle("scrolled", box.scrollLeft > 0);
  }
  function fitTooWide() {  // no chosen columns: every test's figures while the table fits its box
    var box = document.querySelector(".index-scroll");
    if (box.scrollWidth <= box.clientWidth + 1 || state.fit.length <= 1) return false;
    state.fit = state.fit.slice(0, -1);
    renderIndex();
    return true;
  }
  function renderChooser() {
    var box = document.getElementById("chooser");
    box.replaceChildren(el("span", {cls: "note", text: "columns:"}));
    GROUPS.forEach(function (g) {
      var id = "cols-" + g.key.replace(":", "-");
      var input = el("input", {type: "checkbox", id: id, onchange: function (e) {
        var now = chosen().slice(), i = now.indexOf(g.key);
        if (e.target.checked && i < 0) now.push(g.key);
        if (!e.target.checked && i >= 0) now.splice(i, 1);
        state.groups = GROUPS.map(function (x) { return x.key; }).filter(function (k) { return now.indexOf(k) >= 0; });
        history.replaceState(null, "", "#cols=" + encodeURIComponent(state.groups.join(",")));
        renderIndex();
      }});
      input.checked = chosen().indexOf(g.key) >= 0;
      box.appendChild(el("label", {for: id, title: g.title || g.label}, [input, " " + g.label]));
    });
  }

  // ---- selection ----------------------------------------------------------------------------------------
  function toggle(uid, on) {
    var i = state.selected.indexOf(uid);
    if (on && i < 0) state.selected.push(uid);
    if (!on && i >= 0) state.selected.splice(i, 1);
    if (state.selected.indexOf(state.baseline) < 0) state.baseline = state.selected[0] || null;
    var tr = document.querySelector('#runs tr[data-uid="' + uid + '"]');
    if (tr) tr.classList.toggle("selected", on);
    update();
  }
  function load(uids, done) {
    var need = uids.filter(function (u) { return !LOADED[u]; });
    if (!need.length) { done(); return; }
    var left = need.length;
    need.forEach(function (u) {
      if (WAITING[u]) { WAITING[u].push(function () { if (--left === 0) done(); }); return; }
      WAITING[u] = [function () { if (--left === 0) done(); }];
      var s = document.createElement("script");
      s.src = BY[u].data;
      s.onerror = function () { LOADED[u] = {uid: u, parts: [], settings: {}, error: true}; (WAITING[u] || []).forEach(function (f) { f(); }); };
      document.head.appendChild(s);
    });
  }
  window.ssdptsSiteRun = function (d) {
    LOADED[d.uid] = d;
    var w = WAITING[d.uid] || [];
    delete WAITING[d.uid];
    w.forEach(function (f) { f(); });
  };
  function ordered() {
    return [state.baseline].concat(state.selected.filter(function (u) { return u !== state.baseline; }));
  }
  function sameDevice(uids) {
    return uids.every(function (u) { return JSON.stringify(BY[u].device_key) === JSON.stringify(BY[uids[0]].device_key); });
  }
  function update() {
    var sel = document.getElementById("selection"), out = document.getElementById("comparison");
    var uids = state.selected.slice();
    document.getElementById("bar").hidden = !uids.length;
    document.getElementById("bar-text").textContent = uids.length + " run" + (uids.length !== 1 ? "s" : "") + " selected" +
      (uids.length >= 2 ? " · baseline " + BY[state.baseline].device : "");
    sel.replaceChildren();
    state.comparison = null;
    if (!uids.length) { out.replaceChildren(el("p", {cls: "note", text: "Select two or more runs in the table (the boxes on the left) to compare them."})); state.comparison = null; return; }
    var repeatsOk = uids.length >= MIN_REPEATS && sameDevice(uids);
    if (!repeatsOk) state.repeats = false;
    var list = el("ul", {cls: "picked"});
    uids.forEach(function (u) {
      var r = BY[u];
      var radio = el("input", {type: "radio", name: "baseline", value: u, "aria-label": "baseline " + r.name, disabled: state.repeats,
        onchange: function () { state.baseline = u; update(); }});
      radio.checked = u === state.baseline;
      list.appendChild(el("li", {}, [el("label", {}, [radio, " baseline  "]), el("strong", {text: r.device}), " " + day(r.created) + " " + r.name + "  ",
        el("button", {type: "button", text: "remove", onclick: function () { toggle(u, false); var b = document.querySelector('#runs tr[data-uid="' + u + '"] input'); if (b) b.checked = false; }})]));
    });
    var rep = el("input", {type: "checkbox", id: "repeats", disabled: !repeatsOk, onchange: function (e) { state.repeats = e.target.checked; update(); }});
    rep.checked = state.repeats;
    sel.appendChild(list);
    sel.appendChild(el("p", {}, [el("label", {title: repeatsOk ? "" : "repeats: three or more runs of one device"}, [rep,
      " repeated runs of one device: the median run and the relative standard error instead of deltas (docs/compare.md)"])]));
    if (uids.length < 2) { out.replaceChildren(el("p", {cls: "note", text: "Select one more run to compare."})); state.comparison = null; return; }
    // the rule 'ssdpts compare' applies (kinds.one_kind): runs compare with runs of their own kind
    var kindsOf = uids.map(function (u) { return BY[u].run_kind || "pts"; });
    if (kindsOf.some(function (k) { return k !== kindsOf[0]; })) {
      out.replaceChildren(alert("bad", "runs of different kinds: not comparable", ["'ssdpts compare' compares PTS runs with PTS runs, " +
        "quick runs with quick runs and trace replays with trace replays: untick the runs of the other kind (" +
        uids.map(function (u) { return BY[u].name + ": " + (BY[u].run_kind || "pts"); }).join(", ") + ")"]));
      return;
    }
    if (kindsOf[0] !== "pts") {
      out.replaceChildren(alert("warn", "compared by the command, not in this page", ["this page compares PTS runs; " +
        "compare " + kindsOf[0] + " runs with 'ssdpts compare RUN_DIR --baseline RUN_DIR' (docs/compare.md)"]));
      return;
    }
    out.replaceChildren(el("p", {cls: "note", text: "loading…"}));
    var gen = state.gen = (state.gen || 0) + 1;
    load(uids, function () {
      if (gen !== state.gen) return;  // the selection changed while its runs loaded
      var bad = uids.filter(function (u) { return LOADED[u].error; });
      if (bad.length) { out.replaceChildren(el("div", {cls: "alert alert-bad"}, [el("p", {cls: "alert-title", text: "data missing"}), "the data of " + bad.map(function (u) { return BY[u].name; }).join(", ") + " could not be loaded: build the site again"])); return; }
      var c = state.repeats ? analyzeRepeats(uids) : compareRuns(ordered());
      state.comparison = c;
      renderComparison(c, out);
    });
  }

  // ---- the comparison ------------------------------------------------------------------------------------
  function alert(level, title, items) {
    return el("div", {cls: "alert alert-" + level, role: level === "bad" ? "alert" : "note"},
      [el("p", {cls: "alert-title", text: title}), items.length ? el("ul", {}, items.map(function (t) { return el("li", {text: t}); })) : null]);
  }
  function cell(text, value, css) { return {t: text, v: value === undefined ? null : value, css: css || ""}; }
  function table(id, title, cols, rows, note) {
    var t = el("table", {cls: "data numeric"});
    t.appendChild(el("thead", {}, [el("tr", {}, cols.map(function (c) { return el("th", {scope: "col", text: c}); }))]));
    var tb = el("tbody");
    rows.forEach(function (row) {
      tb.appendChild(el("tr", {}, row.map(function (c, i) {
        return i === 0 ? el("th", {scope: "row", cls: c.css || null, text: c.t})
          : el("td", {cls: c.css || null, "data-value": c.v === null ? null : c.v, text: c.t});
      })));
    });
    t.appendChild(tb);
    var csv = csvLink(id + ".csv", function () {
      return [cols].concat(rows.map(function (row) { return row.map(function (c, i) { return i && c.v !== null ? c.v : c.t; }); }));
    });
    return el("figure", {cls: "table", id: id}, [el("figcaption", {}, [title + " ", csv]), el("div", {cls: "scroll"}, [t]),
      note ? el("p", {cls: "note", text: note}) : null]);
  }
  function mark(text, ss) { return ss === false ? text + " †" : text; }
  function valueCell(v, unit, ss) { return cell(mark(fmtValue(v, unit), ss), v, v === null ? "na" : (ss === false ? "nss" : "")); }
  function plot(id, title, caption, spec) {
    state.specs[id] = spec;
    var fig = el("figure", {cls: "plot", id: id}, [el("figcaption", {}, [el("strong", {text: title})]), el("div", {cls: "chart-slot"}), el("p", {cls: "note", text: caption})]);
    fig._spec = spec;
    return fig;
  }
  var tip = null;
  function hover(fig, d) {  // the nearest drawn point's series, x and value (chart.js: window.SSDPTS_HOVER)
    var svg = fig.querySelector("svg");
    if (!svg || !d) return;
    tip = tip || document.body.appendChild(el("div", {id: "tip", hidden: true}));
    svg.addEventListener("mousemove", function (e) {
      var m = svg.getScreenCTM(), pt = svg.createSVGPoint(), best = null, bestD = Infinity;
      if (!m) return;
      pt.x = e.clientX; pt.y = e.clientY;
      var p = pt.matrixTransform(m.inverse());
      d.s.forEach(function (s) { s.p.forEach(function (q, i) { var dd = Math.hypot(q[0] - p.x, q[1] - p.y); if (dd < bestD) { bestD = dd; best = [s, i]; } }); });
      if (!best || bestD > 14 / m.a) { tip.hidden = true; return; }
      var s = best[0], q = s.p[best[1]], x = s.x === "date" ? new Date(q[2] * 864e5).toISOString().slice(0, 16).replace("T", " ") : q[2];
      var at = s.x ? (s.x !== "date" ? s.x + " " : "") + (typeof x === "number" ? fmtValue(x, "") : x) + ": " : "";
      tip.textContent = [s.n, at + fmtValue(q[3], s.u) + (s.u ? " " + s.u : ""), s.t ? s.t[best[1]] : ""].filter(Boolean).join("\n");
      tip.hidden = false;
      tip.style.left = Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 8) + "px";
      tip.style.top = Math.min(e.clientY + 14, window.innerHeight - tip.offsetHeight - 8) + "px";
    });
    svg.addEventListener("mouseleave", function () { tip.hidden = true; });
  }
  function drawPlots(root) {
    window.ssdptsPlotErrors = [];
    root.querySelectorAll("figure.plot").forEach(function (fig) {
      if (!fig._spec) return;
      try { hover(fig, window.ssdptsDraw(fig, fig.id, fig._spec)); } catch (e) {
        window.ssdptsPlotErrors.push(fig.id + ": " + e);
        fig.appendChild(el("p", {cls: "plot-error", text: "This plot could not be drawn (" + e + ")."}));
      }
    });
  }
  var DELTA_NOTE = "Δ = performance of the run against the baseline, positive = better: speed-type metrics (IOPS, MB/s) Δ = A/B − 1, time-type metrics (response times) Δ = time_B/time_A − 1, A the run, B the baseline (docs/compare.md). Green: better, red: worse, grey: within ±1%. n/a: the cell is missing in a run.";
  function settingsTable(c, baseline) {
    var cols = ["setting"].concat(c.labels.map(function (l, i) { return l + (baseline && i === 0 ? " (baseline)" : ""); }));
    var rows = SITE.settings.map(function (s) {
      var vs = c.runs.map(function (r) { return LOADED[r.uid].settings[s.name]; }), differs = new Set(vs).size > 1;
      var css = differs ? (s.invalidates ? "bad" : "warn") : "";
      return [cell(s.label + (differs ? " ≠" : ""), null, css)].concat(vs.map(function (v) { return cell(v, null, css); }));
    });
    return table("settings", "Settings", cols, rows, "Red: a setting that makes a comparison invalid differs ('ssdpts compare' refuses unless --allow-different). Amber: differs, shown for the record.");
  }
  function runsTable(c, baseline) {
    var cols = [""].concat(c.labels.map(function (l, i) { return l + (baseline && i === 0 ? " (baseline)" : ""); }));
    var f = function (name, get, css) { return [cell(name)].concat(c.runs.map(function (r) { var v = get(r); return cell(v === null || v === undefined || v === "" ? "not available" : String(v), null, css ? css(r) : ""); })); };
    var rows = [
      f("Run directory", function (r) { return r.name; }), f("Test run date", function (r) { return (r.created || "").replace("T", " ").replace("Z", " UTC"); }),
      f("Status", function (r) { return r.status; }, function (r) { return r.status === "complete" ? "ok" : "bad"; }),
      f("Device", function (r) { return [r.vendor, r.model].filter(Boolean).join(" "); }), f("Target", function (r) { return r.target + " (" + r.kind + ")"; }),
      f("Serial number", function (r) { return r.serial; }), f("Firmware", function (r) { return r.firmware; }),
      f("Capacity", function (r) { return fmtCap(r.capacity); }), f("Host", function (r) { return r.host; }), f("Kernel", function (r) { return r.kernel; }),
      f("Software", function (r) { return "ssdpts " + (r.ssdpts || "?") + ", " + (r.fio || "?"); }),
      f("Report", function (r) { return r.report ? "report" : null; })
    ];
    c.parts.forEach(function (p) {
      if (p.reached.every(function (x) { return x === null; })) return;
      rows.push([cell(p.title + ": steady state")].concat(p.reached.map(function (x) { return cell(x ? "reached" : (x === false ? "NOT reached" : "—"), null, x ? "ok" : (x === false ? "bad" : "")); })));
    });
    var fig = table("runs-table", "The runs", cols, rows);
    fig.querySelectorAll("tbody tr").forEach(function (tr) {
      if (tr.firstChild.textContent !== "Report") return;
      Array.prototype.forEach.call(tr.querySelectorAll("td"), function (td, i) { var r = c.runs[i]; if (r.report) td.replaceChildren(el("a", {href: r.report, text: "report"})); });
    });
    fig.querySelector("table").className = "data text";
    return fig;
  }
  function commonAlerts(c, root) {
    var inval = c.differences.filter(function (d) { return d.setting.invalidates; });
    if (inval.length) root.appendChild(alert("bad", "settings differ — 'ssdpts compare' would refuse these runs (shown as with --allow-different)",
      inval.map(function (d) { return d.setting.label + ": " + c.labels.map(function (l, i) { return l + " " + d.values[i]; }).join(", "); })
        .concat(["these differences alone can move the results: the deltas below do not isolate the devices"])));
    var damaged = c.runs.filter(function (r) { return r.status !== "complete"; });
    if (damaged.length) root.appendChild(alert("bad", "damaged runs", damaged.map(function (r) { return r.name + ": " + r.status.toUpperCase() + " — " + r.problems.join("; "); })));
    var devs = {};
    c.runs.forEach(function (r, i) { r.deviations.forEach(function (d) { (devs[d] = devs[d] || []).push(c.labels[i]); }); });
    var items = Object.keys(devs).map(function (d) { return d + (c.runs.length === 1 ? "" : (devs[d].length === c.runs.length ? " (all runs)" : " (" + devs[d].join(", ") + ")")); });
    // the deviations named in the title, as pts/runspec.py not_compliant names them
    var named = ["time-compressed", "preconditioning by sprandom"].filter(function (m) { return items.some(function (i) { return i.indexOf(m) === 0; }); });
    if (items.length) root.appendChild(alert("warn", named.length ? named.join(", ") + " — not PTS compliant" : "not PTS compliant", items));
  }
  function renderComparison(c, out) {
    state.specs = {};
    var root = el("div");
    root.appendChild(el("h2", {id: "comparison-title", text: c.kind === "repeats" ? "Repeated runs: " + c.runs[0].device + ", N = " + c.runs.length
      : (c.labels.length <= 3 ? "Comparison: " + c.labels.join(" vs ") : "Comparison of " + c.labels.length + " runs")}));
    commonAlerts(c, root);
    if (c.kind === "repeats") renderRepeats(c, root); else renderDeltas(c, root);
    out.replaceChildren(root);
    drawPlots(root);
  }
  function renderDeltas(c, root) {
    var missed = c.parts.filter(function (p) { return p.reached.some(function (x) { return x === false; }); }).map(function (p) {
      return p.title + ": " + c.labels.filter(function (l, i) { return p.reached[i] === false; }).join(", ");
    });
    if (missed.length) root.appendChild(alert("bad", "steady state NOT reached", missed.concat(["those values are averages of the last 5 rounds, not of a steady-state window; cells marked †"])));
    var info = c.notes.filter(function (n) { return n.indexOf("run status") < 0; });
    if (c.notShared.length) info.push("not compared (not in every run): " + c.notShared.join("; "));
    if (info.length) root.appendChild(alert("info", "notes", info));
    if (!c.parts.length) { root.appendChild(alert("bad", "nothing to compare", ["these runs share no test with results"])); return; }
    root.appendChild(el("p", {text: DELTA_NOTE}));
    var cols = ["test: cell", "unit", c.labels[0] + " (baseline)"];
    c.labels.slice(1).forEach(function (l) { cols.push(l, "Δ " + l); });
    root.appendChild(table("headline", "Headline values (the PTS tracking cells and throughput)", cols, headlineRows(c).map(function (pr) {
      var p = pr[0], row = pr[1], unit = METRICS[row.metric].unit, out = [cell(rowName(p, row)), cell(unit)];
      row.values.forEach(function (v, i) { out.push(valueCell(v, unit, p.reached[i])); if (i) out.push(cell(fmtDelta(row.deltas[i]), row.deltas[i], deltaCss(row.deltas[i]))); });
      return out;
    }), "† steady state NOT reached in that run's test. Every cell of every test follows."));
    root.appendChild(el("h3", {text: "Runs and settings"}));
    root.appendChild(runsTable(c, true));
    root.appendChild(settingsTable(c, true));
    c.parts.forEach(function (p) { root.appendChild(partSection(c, p)); });
  }
  function longTable(c, p, rows, id, title) {
    var cols = ["cell", mark(c.labels[0], p.reached[0]) + " (baseline)"];
    c.labels.slice(1).forEach(function (l, k) { cols.push(mark(l, p.reached[k + 1]), "Δ " + l); });
    return table(id, title, cols, rows.map(function (row) {
      var unit = METRICS[row.metric].unit, out = [cell(row.label + (rows.some(function (r) { return r.metric !== row.metric; }) && METRICS[row.metric].short ? " " + METRICS[row.metric].short : ""))];
      row.values.forEach(function (v, i) { out.push(valueCell(v, unit, p.reached[i])); if (i) out.push(cell(fmtDelta(row.deltas[i]), row.deltas[i], deltaCss(row.deltas[i]))); });
      return out;
    }));
  }
  function matrix(c, p, i, what, t) {
    var bss = [], mixes = [], cells = {};
    p.rows.forEach(function (r) { if (bss.indexOf(r.bs) < 0) bss.push(r.bs); if (mixes.indexOf(r.mix) < 0) mixes.push(r.mix); cells[r.bs + "|" + r.mix] = r; });
    bss.sort(function (a, b) { return b - a; });
    mixes.sort(function (a, b) { return t.order.indexOf(a) - t.order.indexOf(b); });
    var ss = p.reached[i], suffix = ss === false ? " — steady state NOT reached" : "";
    var rows = bss.map(function (bs) {
      return [cell(fmtBs(bs))].concat(mixes.map(function (m) {
        var r = cells[bs + "|" + m];
        if (what === "values") { var v = r ? r.values[i] : null; return cell(fmtValue(v, t.unit), v, v === null ? "na" : (ss === false ? "nss" : "")); }
        var d = r ? r.deltas[i] : null;
        return cell(fmtDelta(d), d, deltaCss(d));
      }));
    });
    var title = what === "values" ? c.labels[i] + (i === 0 ? " (baseline)" : "") + ": " + t.unit + suffix : "Δ " + c.labels[i] + " vs " + c.labels[0] + ": " + t.unit + suffix;
    return table(p.part + "-" + (what === "values" ? "values" : "delta") + "-" + i, title, ["block size"].concat(mixes.map(function (m) { return "R/W " + m; })), rows);
  }
  function partSection(c, p) {
    var sec = el("section", {id: "part-" + p.part, cls: "part"}, [el("h3", {text: p.title})]);
    var missed = p.reached.map(function (x, i) { return x === false ? i : -1; }).filter(function (i) { return i >= 0; });
    if (missed.length) sec.appendChild(alert("bad", p.title + ": steady state NOT reached", missed.map(function (i) { return c.labels[i] + ": stopped at " + (p.stop[i] || "?") + "; its values are averages of the last 5 rounds"; })));
    var labs = c.labels;
    var view = p.view, plotted = view.plot;  // the kind's declared view (its site(part), pts/<name>.py)
    if (plotted) sec.appendChild(plot(p.part + "-overlay", plotted.title, plotted.caption, describe(plotted.size[0], plotted.size[1], function (f) { DRAW[plotted.draw](f, labs, c, p, plotted); })));
    (view.tables || [{}]).forEach(function (t) {
      if (t.draw === "matrix") {
        for (var i = 1; i < labs.length; i++) sec.appendChild(matrix(c, p, i, "delta", t));
        for (var k = 0; k < labs.length; k++) sec.appendChild(matrix(c, p, k, "values", t));
        return;
      }
      var rows = t.metric ? p.rows.filter(function (r) { return r.metric === t.metric; }) : p.rows;
      if (t.metric && !rows.length) return;
      var lab = t.metric ? METRICS[t.metric].label : "";
      sec.appendChild(longTable(c, p, rows, p.part + "-" + (t.metric || "table"),
        t.title || (t.metric ? lab[0].toUpperCase() + lab.slice(1) + " (" + METRICS[t.metric].unit + ")" : p.title)));
    });
    return sec;
  }
  function renderRepeats(c, root) {
    var flagged = [], total = 0;
    c.parts.forEach(function (p) { p.rows.forEach(function (r) { total++; if (r.stats && r.stats.flagged) flagged.push([p, r]); }); });
    if (flagged.length) {
      var items = [flagged.length + " of " + total + " metrics have a relative standard error above 5%"]
        .concat(flagged.slice(0, 12).map(function (pr) { return pr[1].label ? pr[0].part + " " + pr[1].label + (METRICS[pr[1].metric].short ? " " + METRICS[pr[1].metric].short : "") + ": RSE " + fmtPct(pr[1].stats.rse) : ""; }));
      if (flagged.length > 12) items.push("… and " + (flagged.length - 12) + " more (red in the tables)");
      if (c.advice) items.push("advice: " + c.advice);
      root.appendChild(alert("bad", "too variable: RSE above 5%", items));
    } else {
      root.appendChild(alert("ok", "every metric's RSE is at most 5%", ["N = " + c.runs.length + ": report the median run's values"]));
    }
    if (c.warnings.length) root.appendChild(alert("warn", "warnings", c.warnings));
    root.appendChild(el("p", {text: "Per metric, the median is the value of the median run — a measured value, not an average: with an odd N the middle run, with an even N the lower-middle run (warned). RSE = s / (x̄ · √N), s the sample standard deviation (N − 1). Above 5% a metric is too variable: add runs while N ≤ 7, beyond 7 runs discard or investigate (docs/compare.md)."}));
    root.appendChild(el("h3", {text: "Runs and settings"}));
    root.appendChild(runsTable(c, false));
    root.appendChild(settingsTable(c, false));
    c.parts.forEach(function (p) {
      var sec = el("section", {id: "part-" + p.part, cls: "part"}, [el("h3", {text: p.title})]);
      var names = p.rows.map(function (r) { return p.view.names !== "label" ? r.label.replace("RND ", "") + (METRICS[r.metric].short ? " " + METRICS[r.metric].short : "") : r.label; });
      var dev = p.rows.map(function (r) { return r.values.map(function (v) { return v === null || !r.stats || !r.stats.median ? null : v / r.stats.median - 1; }); });
      var rses = p.rows.map(function (r) { return r.stats ? r.stats.rse : null; });
      sec.appendChild(plot(p.part + "-spread", "Spread of the runs and relative standard error", "Top: each run's value relative to the median run's (0 = the median). Bottom: RSE per metric; red above the 5% line.",
        describe(10.0, p.rows.length > 20 ? 5.6 : 4.8, function (f) { spreadRse(f, c.labels, names, dev, rses); })));
      var cols = ["cell"].concat(c.labels.map(function (l, i) { return mark(l, p.reached[i]); })).concat(["median", "median run", "mean", "s", "RSE"]);
      sec.appendChild(table(p.part + "-all", p.title + ": every run, median and RSE", cols, p.rows.map(function (r) {
        var unit = METRICS[r.metric].unit, st = r.stats;
        var out = [cell(r.label + (METRICS[r.metric].short ? " " + METRICS[r.metric].short : ""))];
        r.values.forEach(function (v, i) { out.push(cell(fmtValue(v, unit), v, v === null ? "na" : (st && st.median_index === i ? "median" : ""))); });
        if (!st) return out.concat([0, 1, 2, 3, 4].map(function () { return cell("n/a", null, "na"); }));
        return out.concat([cell(fmtValue(st.median, unit), st.median, "median"), cell(c.labels[st.median_index]), cell(fmtValue(st.mean, unit), st.mean),
          cell(fmtValue(st.stdev, unit), st.stdev), cell(fmtPct(st.rse), st.rse, st.flagged ? "bad" : "")]);
      }), "Bold: the median run's value. RSE red: above 5% (too variable)."));
      root.appendChild(sec);
    });
  }

  // ---- trends -------------------------------------------------------------------------------------------
  function renderTrendControls(first) {
    var box = document.getElementById("trend-controls");
    if (!first && box.childNodes.length) return;
    if (!SITE.columns.length) { box.replaceChildren(el("p", {cls: "note", text: "No figures in the library yet."})); return; }
    state.trend.key = state.trend.key || SITE.columns[0].key;
    box.replaceChildren(
      el("label", {}, ["figure ", el("select", {id: "trend-figure", onchange: function (e) { state.trend.key = e.target.value; drawTrend(); }},
        SITE.columns.map(function (c) { return el("option", {value: c.key, text: c.label + " (" + c.unit + ")"}); }))]),
      el("label", {}, [" against ", el("select", {id: "trend-x", onchange: function (e) { state.trend.x = e.target.value; drawTrend(); }},
        [el("option", {value: "date", text: "date"}), el("option", {value: "firmware", text: "firmware"})])]),
      el("span", {cls: "note", text: "  one line per model (against firmware: through the median of its runs of each), of the runs the table shows; hollow: steady state NOT reached"}));
  }
  function trendSpec(col, runs, x) {
    var models = [], pts = {};
    runs.forEach(function (r) {
      var v = r.h[col.key];
      if (v === null || v === undefined) return;
      var m = r.model || r.device;
      if (!pts[m]) { pts[m] = []; models.push(m); }
      pts[m].push(r);
    });
    var fws = [];
    runs.slice().sort(function (a, b) { return (a.created || "").localeCompare(b.created || ""); }).forEach(function (r) {
      var fw = r.firmware || "—";
      if (r.h[col.key] !== null && r.h[col.key] !== undefined && fws.indexOf(fw) < 0) fws.push(fw);
    });
    var xOf = x === "date" ? function (r) { return Date.parse(r.created) / 864e5; } : function (r) { return fws.indexOf(r.firmware || "—"); };
    return describe(10.0, 4.0, function (f) {
      var ax = f.axes(f.grid(1, 1, {left: 0.9, right: legendW(models) + 0.1, top: 0.25, bottom: 0.6})[0][0]), all = [], cs = colors(models.length);
      models.forEach(function (m, i) {
        var rs = pts[m].slice().sort(function (a, b) { return xOf(a) - xOf(b) || (a.created || "").localeCompare(b.created || ""); });
        var xs = rs.map(xOf), ys = rs.map(function (r) { return r.h[col.key]; });
        all = all.concat(ys);
        var notes = rs.map(function (r) { return r.name + " · " + (r.firmware || "—") + " · " + day(r.created); });
        ax.line(xs, ys, {color: cs[i], lw: 1.2, ls: x === "date" ? "-" : "none", marker: MARKERS[i % MARKERS.length], ms: 5, label: m,
                         series: ser(m, col.unit, x === "date" ? "date" : "", notes)});
        if (x === "firmware") {  // the model's line: through the median of its runs of each firmware
          var at = Array.from(new Set(xs)).sort(function (a, b) { return a - b; });
          ax.line(at, at.map(function (v) { return d3.median(ys.filter(function (y, k) { return xs[k] === v; })); }), {color: cs[i], lw: 1.2});
        }
        var hollow = rs.filter(function (r) { return r.ss[col.part] === false; });
        if (hollow.length) ax.line(hollow.map(xOf), hollow.map(function (r) { return r.h[col.key]; }), {color: cs[i], lw: 0, ls: "none", marker: MARKERS[i % MARKERS.length], ms: 5, mfc: "#ffffff", mec: cs[i]});
      });
      if (x === "date") {  // x in days; ticks where d3's UTC time scale puts them, as dates or times
        var xsAll = runs.map(xOf), lo = d3.min(xsAll), hi = d3.max(xsAll);
        if (hi - lo < 1 / 24) { lo -= 1 / 48; hi += 1 / 48; }
        var pad = (hi - lo) * 0.05;
        var ticks = d3.scaleUtc().domain([new Date((lo - pad) * 864e5), new Date((hi + pad) * 864e5)]).ticks(6);
        var fmt = d3.utcFormat(hi - lo < 3 ? "%Y-%m-%d %H:%M" : "%Y-%m-%d");
        ax.x({lim: [lo - pad, hi + pad], ticks: ticks.map(function (t) { return t.getTime() / 864e5; }),
              labels: ticks.map(fmt), label: "run start (UTC)"});
      } else {
        ax.categories(fws, {rotate: fws.length > 8, size: fws.length > 15 ? 6 : null});
        ax.d.x.label = "firmware (in the order first run)";
      }
      ax.y({lim: [0, (d3.max(all) || 1) * 1.15], fmt: "k", label: col.label.split(": ").slice(1).join(": ") + " (" + col.unit + ")"});
      ax.title(col.label);
      ax.legend("right");
    });
  }
  function drawTrend() {
    var slot = document.getElementById("trend-plot");
    if (!slot || !state.trend.key) return;
    var col = SITE.columns.filter(function (c) { return c.key === state.trend.key; })[0];
    var shown = visible().filter(function (r) { return r.h[col.key] !== null && r.h[col.key] !== undefined; });
    var runs = shown.filter(function (r) { return r.status === "complete"; });  // as 'db export': no damaged run
    var left = shown.length - runs.length;
    var fig = plot("trend", "Trend: " + col.label, runs.length + " run" + (runs.length !== 1 ? "s" : "") + " of those the table shows" +
      (left ? "; " + left + " damaged left out (their numbers are not what the runs measured)" : ""),
      runs.length ? trendSpec(col, runs, state.trend.x) : null);
    slot.replaceChildren(fig);
    if (!runs.length) { fig.querySelector(".chart-slot").appendChild(el("p", {cls: "note", text: "No run the table shows has this figure."})); return; }
    drawPlots(slot);
  }

  buildFilters();
  renderTrendControls(true);
  renderIndex();
  update();
  window.ssdptsSite = {
    state: state, runs: RUNS, loaded: LOADED,
    select: function (uids, baseline, repeats) {
      state.selected = uids.slice(); state.baseline = baseline || uids[0] || null; state.repeats = !!repeats;
      document.querySelectorAll("#runs tbody tr").forEach(function (tr) {
        var on = uids.indexOf(tr.getAttribute("data-uid")) >= 0;
        tr.classList.toggle("selected", on);
        tr.querySelector("input").checked = on;
      });
      update();
    },
    ready: function () { return new Promise(function (res) { (function wait() { if (state.comparison || state.selected.length < 2) res(state.comparison); else setTimeout(wait, 20); })(); }); },
    comparison: function () { return state.comparison; },
    csv: function () { return csvText(indexCsv()); },
    specs: function () { return state.specs; }
  };
  window.ssdptsSiteReadyMs = performance.now();
})();
