// The report's plots, drawn from their JSON descriptions (report/chart.py) into inline SVG with d3,
// on the screen and in the printed PDF alike. Units: points (72 per inch) of the plot's size; the
// page's CSS scales the SVG to the page width. After drawing, window.SSDPTS_HOVER[plot id] holds
// every series' points in SVG units with their values (report.js shows them on hover), and
// window.ssdptsPlots is "done" (Chromium prints only then). A plot that cannot be drawn says so in
// its place and is listed in window.ssdptsPlotErrors.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var INK = "#24292f", GRID = "#d0d7de", SPINE = "#57606a";
  var FONT = "'DejaVu Sans', 'Bitstream Vera Sans', sans-serif";
  var TICK = 3.5, TICK_PAD = 3.5, TICK_SIZE = 8, LABEL_SIZE = 9, LEG_SIZE = 8;
  var DASH = {"-": null, "--": "3.7,1.6", ":": "1,1.65", "-.": "6.4,1.6,1,1.6", "none": null};
  var CMAPS = {viridis: d3.interpolateViridis, plasma: d3.interpolatePlasma, turbo: d3.interpolateTurbo,
               oranges: d3.interpolateOranges};

  function color(c) {
    var m = /^(viridis|plasma|turbo|oranges|tab10):([0-9.]+)$/.exec(c || "");
    if (!m) return c;
    if (m[1] === "tab10") return d3.schemeCategory10[(+m[2]) % 10];
    return CMAPS[m[1]](+m[2]);
  }
  function el(parent, tag, attrs, text) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) if (attrs[k] !== null && attrs[k] !== undefined) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    parent.appendChild(e);
    return e;
  }
  function r1(v) { return Math.round(v * 100) / 100; }
  function finite(v) { return v !== null && v !== undefined && isFinite(v); }
  function tickText(v, f) {
    if (f === "k") return Math.abs(v) >= 10 || v === 0 ? d3.format(",.0f")(v) : d3.format("~g")(v);
    if (f === "int") return d3.format(",.0f")(v);
    var a = Math.abs(v);
    if (a >= 1000) return d3.format(",.0f")(v);
    return d3.format("~g")(+v.toPrecision(6));
  }
  // Text widths from a canvas with the plots' font: asking the SVG (getComputedTextLength) would lay
  // out the whole document once per question.
  var measure = document.createElement("canvas").getContext("2d");
  function strWidth(text, z, bold) {
    measure.font = (bold ? "bold " : "") + z + "px " + FONT;
    return measure.measureText(text || "").width;
  }
  function textWidth(t) {
    return strWidth(t.textContent, +t.getAttribute("font-size") || TICK_SIZE, t.getAttribute("font-weight") === "bold");
  }
  // Which tick labels to write: none over another (3 pt apart at least); on a log axis the
  // decades first, then the others from the start of the axis. ``along(i)``: the label's extent.
  function shown(ticks, ax, along) {
    var order = d3.range(ticks.length), kept = [], keep = {};
    if (ax.s === "log" || ax.s === "log2") {
      var b = ax.s === "log2" ? 2 : 10;
      var decade = function (i) { var e = Math.log(ticks[i][0]) / Math.log(b); return Math.abs(e - Math.round(e)) < 1e-9 ? 0 : 1; };
      order.sort(function (a, c) { return decade(a) - decade(c) || a - c; });
    }
    order.forEach(function (i) {
      var e = along(i);
      if (kept.every(function (k) { return e[1] + 3 <= k[0] || e[0] >= k[1] + 3; })) { kept.push(e); keep[i] = true; }
    });
    return keep;
  }

  // ---- scales ------------------------------------------------------------------------------------
  function extent(panel, which) {
    var lo = Infinity, hi = -Infinity;
    function add(v) { if (finite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; } }
    panel.L.forEach(function (l) {
      var on = l.y2 ? "y2" : "y";
      if (which === "x") {
        if (l.t === "line") l.x.forEach(add);
        else if (l.t === "stairs") l.e.forEach(add);
        else if (l.t === "bars") l.x.forEach(function (x) { add(x - l.bw / 2); add(x + l.bw / 2); });
        else if (l.t === "vspan") { add(l.x0); add(l.x1); }
        else if (l.t === "vline") add(l.v);
      } else if (which === on) {
        if (l.t === "line" || l.t === "stairs") l.y.forEach(add);
        else if (l.t === "bars") { l.y.forEach(add); add(0); }
        else if (l.t === "band") { add(l.y0); add(l.y1); }
        else if (l.t === "hline") add(l.v);
      }
    });
    return [lo, hi];
  }
  function scale(ax, ext, range) {
    var log = ax.s === "log" || ax.s === "log2";
    var lo = ax.d && finite(ax.d[0]) ? ax.d[0] : null, hi = ax.d && finite(ax.d[1]) ? ax.d[1] : null;
    var dlo = ext[0], dhi = ext[1];
    if (!isFinite(dlo)) { dlo = log ? 1 : 0; dhi = log ? 10 : 1; }
    if (log) {
      if (dlo <= 0) dlo = dhi > 0 ? dhi / 10 : 1;
      var m = Math.pow(dhi / dlo, 0.05) || 1;
      if (lo === null) lo = dlo / m;
      if (hi === null) hi = dhi * m;
      if (hi <= lo) { lo /= 1.5; hi *= 1.5; }
      return d3.scaleLog().base(ax.s === "log2" ? 2 : 10).domain([lo, hi]).range(range);
    }
    var pad = (dhi - dlo) * 0.05 || Math.abs(dhi) * 0.05 || 0.5;
    if (lo === null) lo = dlo - pad;
    if (hi === null) hi = dhi + pad;
    if (hi === lo) hi = lo + 1;
    return d3.scaleLinear().domain([lo, hi]).range(range);
  }
  function ticksOf(ax, sc, len) {
    if (ax.t) return ax.t.map(function (v, i) { return [v, ax.l ? ax.l[i] : tickText(v, ax.f)]; })
      .filter(function (t) { var d = sc.domain(); return t[0] >= Math.min(d[0], d[1]) - 1e-9 && t[0] <= Math.max(d[0], d[1]) + 1e-9; });
    var n = Math.max(2, Math.min(12, Math.round(len / 45)));
    var ts;
    if (ax.s === "log" || ax.s === "log2") {
      ts = sc.ticks(n).filter(function (v) { var e = Math.log(v) / Math.log(ax.s === "log2" ? 2 : 10); return Math.abs(e - Math.round(e)) < 1e-9; });
      if (ts.length < 2) ts = sc.ticks(n);
    } else ts = sc.ticks(n);
    if (ax.int) ts = ts.filter(function (v) { return Math.abs(v - Math.round(v)) < 1e-9; });
    return ts.map(function (v) { return [v, tickText(v, ax.int ? "int" : ax.f)]; });
  }

  // ---- marks ---------------------------------------------------------------------------------------
  // Markers: one path of every point's symbol (one element per series, not one per point).
  var SYMBOLS = {o: d3.symbolCircle, "^": d3.symbolTriangle, "*": d3.symbolStar, s: d3.symbolSquare, D: d3.symbolDiamond,
                 v: d3.symbolTriangle2, P: d3.symbolCross, X: d3.symbolX, h: d3.symbolDiamond2, "<": d3.symbolTriangle};
  function markers(parent, m, xy, size, fill, stroke, attrs) {
    var sym = SYMBOLS[m] || d3.symbolCircle, area = size * size * (m === "o" ? Math.PI / 4 : m === "*" ? 0.55 : 0.6);
    var p = d3.path(), dx = 0, dy = 0;
    var ctx = {moveTo: function (x, y) { p.moveTo(r1(x + dx), r1(y + dy)); }, lineTo: function (x, y) { p.lineTo(r1(x + dx), r1(y + dy)); },
               closePath: function () { p.closePath(); },
               rect: function (x, y, w, h) { p.rect(r1(x + dx), r1(y + dy), w, h); },
               arc: function (x, y, r, a0, a1) { p.moveTo(r1(x + dx + r), r1(y + dy)); p.arc(r1(x + dx), r1(y + dy), r, a0, a1); }};
    xy.forEach(function (q) { dx = q[0]; dy = q[1]; sym.draw(ctx, area); });
    var open = m === "X";  // d3's X is drawn with strokes only
    return el(parent, "path", Object.assign({d: p.toString(), fill: open ? "none" : fill, stroke: open ? fill : (stroke || "none"),
                                             "stroke-width": open ? 1 : (stroke ? 0.8 : null)}, attrs || {}));
  }
  function marker(parent, m, x, y, size, fill, stroke, attrs) { return markers(parent, m, [[x, y]], size, fill, stroke, attrs); }
  // Hatching that shows on any fill: light on a dark bar, dark on a light one (a red bar hatched in
  // its own edge colour hid its "not steady" mark)
  function against(fill) {
    var c = d3.rgb(fill);
    return (0.299 * c.r + 0.587 * c.g + 0.114 * c.b) / 255 < 0.55 ? "#ffffff" : INK;
  }
  // Hatching as lines clipped to the box (an SVG pattern prints as a megabyte of tiles per bar).
  function hatch(parent, x, y, w, h, stroke) {
    var d = "", step = 5;
    for (var k = -h; k < w; k += step) {
      var t0 = Math.max(0, -k), t1 = Math.min(h, w - k);
      if (t1 > t0) d += "M" + r1(x + k + t0) + "," + r1(y + h - t0) + "L" + r1(x + k + t1) + "," + r1(y + h - t1);
    }
    return d ? el(parent, "path", {d: d, stroke: stroke, "stroke-width": 0.7, fill: "none", "pointer-events": "none"}) : null;
  }
  function lineAttrs(l) {
    return {fill: "none", stroke: color(l.c), "stroke-width": l.w, "stroke-dasharray": DASH[l.ls] || null,
            "stroke-linejoin": "round", "stroke-linecap": l.ls === "-" ? "square" : "butt"};
  }

  // ---- one 2D panel --------------------------------------------------------------------------------
  function drawXY(svg, spec, P, pi, hover, pid) {
    var b = P.box, x0 = b[0], y0 = b[1], w = b[2], h = b[3];
    var sx = scale(P.x, extent(P, "x"), [x0, x0 + w]);
    var sy = scale(P.y, extent(P, "y"), [y0 + h, y0]);
    var sy2 = P.y2 ? scale(P.y2, extent(P, "y2"), [y0 + h, y0]) : null;
    var clipId = pid + "-clip" + pi;
    el(el(svg, "clipPath", {id: clipId}), "rect", {x: x0, y: y0, width: w, height: h});
    var g = el(svg, "g", {"class": "panel"});
    var back = el(g, "g", {"clip-path": "url(#" + clipId + ")"});
    var grid = el(g, "g", {"class": "grid"});
    var front = el(g, "g", {"clip-path": "url(#" + clipId + ")"});
    var xt = ticksOf(P.x, sx, w), yt = ticksOf(P.y, sy, h);
    if (P.x.grid !== false) xt.forEach(function (t) { el(grid, "line", {x1: r1(sx(t[0])), x2: r1(sx(t[0])), y1: y0, y2: y0 + h, stroke: GRID, "stroke-width": 0.6}); });
    if (P.y.grid !== false) yt.forEach(function (t) { el(grid, "line", {x1: x0, x2: x0 + w, y1: r1(sy(t[0])), y2: r1(sy(t[0])), stroke: GRID, "stroke-width": 0.6}); });
    P.L.forEach(function (l) {
      var Y = l.y2 ? sy2 : sy;
      var sid = l.s !== undefined ? pid + "-s" + l.s : null;
      var pts = null;
      if (l.t === "vspan") {
        el(back, "rect", {x: r1(sx(l.x0)), y: y0, width: r1(Math.max(0.5, sx(l.x1) - sx(l.x0))), height: h, fill: color(l.c), "fill-opacity": l.a});
      } else if (l.t === "band") {
        var ya = Y(l.y1), yb = Y(l.y0);
        el(back, "rect", {x: x0, y: r1(Math.min(ya, yb)), width: w, height: r1(Math.abs(yb - ya)), fill: color(l.c), "fill-opacity": l.a});
      } else if (l.t === "hline") {
        el(front, "line", Object.assign(lineAttrs(l), {x1: x0, x2: x0 + w, y1: r1(Y(l.v)), y2: r1(Y(l.v))}));
      } else if (l.t === "vline") {
        el(front, "line", Object.assign(lineAttrs(l), {x1: r1(sx(l.v)), x2: r1(sx(l.v)), y1: y0, y2: y0 + h}));
      } else if (l.t === "line") {
        var ok = [];
        l.x.forEach(function (x, i) {
          var y = l.y[i];
          if (finite(x) && finite(y) && (P.x.s === "linear" || x > 0) && (((l.y2 ? P.y2 : P.y).s === "linear") || y > 0)) ok.push(i);
        });
        var grp = el(front, "g", {id: sid}), drawn = new Uint8Array(l.x.length);
        ok.forEach(function (i) { drawn[i] = 1; });
        if (l.ls !== "none" && ok.length > 1) {
          var gen = d3.line().x(function (i) { return r1(sx(l.x[i])); }).y(function (i) { return r1(Y(l.y[i])); })
            .defined(function (i) { return finite(l.x[i]) && finite(l.y[i]); });
          if (l.step) gen.curve(d3.curveStepAfter);
          el(grp, "path", Object.assign(lineAttrs(l), {d: gen(d3.range(l.x.length).filter(function (i) { return drawn[i] || !finite(l.y[i]); }))}));
        }
        if (l.m) markers(grp, l.m, ok.map(function (i) { return [sx(l.x[i]), Y(l.y[i])]; }), l.ms, color(l.mfc || l.c), l.mec ? color(l.mec) : null);
        pts = ok.map(function (i) { return [r1(sx(l.x[i])), r1(Y(l.y[i])), l.x[i], l.v ? l.v[i] : l.y[i], i]; });
      } else if (l.t === "stairs") {
        var d = "";
        var floor = (P.y.s === "linear") ? Y(0) : y0 + h + 1;
        l.y.forEach(function (c, i) {
          var ya = c > 0 || P.y.s === "linear" ? Y(c) : floor;
          d += (i === 0 ? "M" + r1(sx(l.e[0])) + "," + r1(floor) : "") + "L" + r1(sx(l.e[i])) + "," + r1(ya) + "L" + r1(sx(l.e[i + 1])) + "," + r1(ya);
        });
        d += "L" + r1(sx(l.e[l.e.length - 1])) + "," + r1(floor);
        el(front, "path", Object.assign(lineAttrs(l), {d: d, id: sid}));
        if (l.hx) pts = l.hx.map(function (x, i) { return [r1(sx(x)), r1(Y(l.hy[i])), x, l.hy[i], i]; });
      } else if (l.t === "bars") {
        var bg = el(front, "g", {});
        var logY = (l.y2 ? P.y2 : P.y).s !== "linear";
        pts = [];
        l.x.forEach(function (x, i) {
          var v = l.y[i], has = finite(v) && !(logY && v <= 0);
          var xa = sx(x - l.bw / 2), xb = sx(x + l.bw / 2);
          var base = logY ? y0 + h : Y(0), ya = has ? Math.min(Y(v), base) : base, yb = has ? Math.max(Y(v), base) : base;
          var c = color(Array.isArray(l.c) ? l.c[i] : l.c);
          var hatched = l.h && l.h[i];
          if (has) {
            el(bg, "rect", {x: r1(xa), y: r1(ya), width: r1(xb - xa), height: r1(Math.max(0, yb - ya)), fill: c,
                            id: sid ? sid + "." + i : null, stroke: hatched ? l.ec : null, "stroke-width": hatched ? 1 : null});
            if (hatched) hatch(bg, xa, ya, xb - xa, Math.max(0, yb - ya), against(c));
          }
          if (l.bl && l.bl[i]) {
            var lx = r1((xa + xb) / 2), ly = r1((has && v > 0 ? ya : base) - 2);
            el(g, "text", l.br ? {transform: "translate(" + lx + "," + ly + ") rotate(-90)", y: 2.5, "font-size": l.bz, fill: has ? INK : "#59636e"}
                              : {x: lx, y: ly, "text-anchor": "middle", "font-size": l.bz, fill: has ? INK : "#59636e"}, l.bl[i]);
          }
          if (has) pts.push([r1((xa + xb) / 2), r1(ya), x, v, i]);
        });
      } else if (l.t === "text") {
        var tx = l.fx ? x0 + l.x * w : sx(l.x);
        el(g, "text", {x: r1(tx + l.dx), y: r1(Y(l.y) + l.dy + l.z * 0.35), "text-anchor": l.a, "font-size": l.z, fill: color(l.c)}, l.s);
      } else if (l.t === "cells") {
        var vals = [].concat.apply([], l.z).filter(finite);
        var zlo = d3.min(vals), zhi = d3.max(vals), mid = d3.mean(vals);
        var norm = function (v) { return zhi > zlo ? (v - zlo) / (zhi - zlo) : 0.5; };
        l.z.forEach(function (row, i) {
          row.forEach(function (v, j) {
            if (!finite(v)) return;
            var xa = sx(j - 0.5), xb = sx(j + 0.5), ya = sy(i - 0.5), yb = sy(i + 0.5);
            el(back, "rect", {x: r1(Math.min(xa, xb)), y: r1(Math.min(ya, yb)), width: r1(Math.abs(xb - xa)), height: r1(Math.abs(yb - ya)), fill: CMAPS[l.cm](0.1 + 0.85 * norm(v))});
            el(front, "text", {x: r1((xa + xb) / 2), y: r1((ya + yb) / 2 + 2.5), "text-anchor": "middle", "font-size": 7,
                               fill: v > mid * 1.4 ? "white" : INK}, v.toFixed(l.dec));
          });
        });
        // colour bar at the right of the panel
        var cbx = x0 + w + 8, cbw = 10, n = 24;
        for (var k = 0; k < n; k++) el(g, "rect", {x: cbx, y: r1(y0 + h - (k + 1) * h / n), width: cbw, height: r1(h / n + 0.3), fill: CMAPS[l.cm](0.1 + 0.85 * (k + 0.5) / n)});
        el(g, "rect", {x: cbx, y: y0, width: cbw, height: h, fill: "none", stroke: SPINE, "stroke-width": 0.6});
        var cs = d3.scaleLinear().domain([zlo, zhi > zlo ? zhi : zlo + 1]).range([y0 + h, y0]);
        cs.ticks(5).forEach(function (v) {
          el(g, "line", {x1: cbx + cbw, x2: cbx + cbw + TICK, y1: r1(cs(v)), y2: r1(cs(v)), stroke: SPINE, "stroke-width": 0.6});
          el(g, "text", {x: cbx + cbw + TICK + 2, y: r1(cs(v) + 3), "font-size": TICK_SIZE, fill: INK}, tickText(v, "k"));
        });
        if (l.cl) el(g, "text", {transform: "translate(" + r1(cbx + cbw + 34) + "," + r1(y0 + h / 2) + ") rotate(90)", "text-anchor": "middle", "font-size": LABEL_SIZE, fill: INK}, l.cl);
      }
      if (sid !== null && pts) {
        var s = spec.S[l.s];
        var item = {g: sid, n: s.n, u: s.u || "", x: s.x || "", p: pts.map(function (q) { return q.slice(0, 4); })};
        if (s.t) item.t = pts.map(function (q) { return s.t[q[4]]; });
        if (s.ti) item.ti = s.ti;
        hover.push(item);
      }
    });
    // spines, ticks, tick labels, axis labels
    var axg = el(g, "g", {"class": "axes"});
    el(axg, "line", {x1: x0, x2: x0 + w, y1: y0 + h, y2: y0 + h, stroke: SPINE, "stroke-width": 0.8});
    el(axg, "line", {x1: x0, x2: x0, y1: y0, y2: y0 + h, stroke: SPINE, "stroke-width": 0.8});
    var xh = P.x.hide ? 0 : TICK_SIZE;
    var xz = P.x.z || TICK_SIZE;
    var xkeep = shown(xt, P.x, function (i) {
      var c = sx(xt[i][0]), half = P.x.rot ? xz / 2 : strWidth(xt[i][1], xz) / 2;
      return [c - half, c + half];
    });
    xt.forEach(function (t, i) {
      var x = r1(sx(t[0]));
      el(axg, "line", {x1: x, x2: x, y1: y0 + h, y2: y0 + h + TICK, stroke: SPINE, "stroke-width": 0.8});
      if (P.x.hide || !xkeep[i]) return;
      var z = P.x.z || TICK_SIZE;
      var lab = P.x.rot ? el(axg, "text", {transform: "translate(" + (x + z * 0.35) + "," + (y0 + h + TICK + TICK_PAD) + ") rotate(-90)", "text-anchor": "end", "font-size": z, fill: INK}, t[1])
                        : el(axg, "text", {x: x, y: y0 + h + TICK + TICK_PAD + z * 0.8, "text-anchor": "middle", "font-size": z, fill: INK}, t[1]);
      xh = Math.max(xh, P.x.rot ? textWidth(lab) : z);
    });
    var yw = 0;
    var ykeep = shown(yt, P.y, function (i) { var c = sy(yt[i][0]); return [c - TICK_SIZE / 2, c + TICK_SIZE / 2]; });
    yt.forEach(function (t, i) {
      var y = r1(sy(t[0]));
      el(axg, "line", {x1: x0 - TICK, x2: x0, y1: y, y2: y, stroke: SPINE, "stroke-width": 0.8});
      if (!P.y.hide && ykeep[i]) yw = Math.max(yw, textWidth(el(axg, "text", {x: x0 - TICK - TICK_PAD, y: y + TICK_SIZE * 0.35, "text-anchor": "end", "font-size": TICK_SIZE, fill: color(P.y.c) || INK}, t[1])));
    });
    if (P.x.label) el(axg, "text", {x: r1(x0 + w / 2), y: r1(y0 + h + TICK + TICK_PAD + xh + 4 + LABEL_SIZE * 0.8), "text-anchor": "middle", "font-size": LABEL_SIZE, fill: INK}, P.x.label);
    if (P.y.label) el(axg, "text", {transform: "translate(" + r1(x0 - TICK - TICK_PAD - yw - 4 - 2) + "," + r1(y0 + h / 2) + ") rotate(-90)", "text-anchor": "middle", "font-size": LABEL_SIZE, fill: color(P.y.c) || INK}, P.y.label);
    if (sy2) {
      var c2 = color(P.y2.c) || INK, yw2 = 0;
      el(axg, "line", {x1: x0 + w, x2: x0 + w, y1: y0, y2: y0 + h, stroke: SPINE, "stroke-width": 0.8});
      ticksOf(P.y2, sy2, h).forEach(function (t) {
        var y = r1(sy2(t[0]));
        el(axg, "line", {x1: x0 + w, x2: x0 + w + TICK, y1: y, y2: y, stroke: c2, "stroke-width": 0.8});
        yw2 = Math.max(yw2, textWidth(el(axg, "text", {x: x0 + w + TICK + TICK_PAD, y: y + TICK_SIZE * 0.35, "font-size": TICK_SIZE, fill: c2}, t[1])));
      });
      if (P.y2.label) el(axg, "text", {transform: "translate(" + r1(x0 + w + TICK + TICK_PAD + yw2 + 4 + LABEL_SIZE * 0.8) + "," + r1(y0 + h / 2) + ") rotate(90)", "text-anchor": "middle", "font-size": LABEL_SIZE, fill: c2}, P.y2.label);
    }
    if (P.title) {
      var tt = P.title;
      el(g, "text", {x: tt.loc === "center" ? r1(x0 + w / 2) : x0, y: r1(y0 - 6), "text-anchor": tt.loc === "center" ? "middle" : "start",
                     "font-size": tt.z || 9.5, fill: INK}, tt.t);
    }
    if (P.leg) legend(svg, P, spec, pid, sy2 !== null);
  }

  // ---- legends -------------------------------------------------------------------------------------
  // A legend stays inside its plot whatever its names (docs/report.md#plots): below the axes it takes
  // the most columns, up to those asked, that fit the figure's width in the rows the figure has room
  // for under the axes; where that is still too wide (or beside or above the axes, where the room is
  // what the figure leaves), the widest names are shortened in their middle ("…"), an entry's kept
  // tail whole (``lk`` characters: a comparison's " (baseline)" and " — SS NOT reached"), and the full
  // name is the entry's tooltip (its <title>). A legend that fits is drawn as asked.
  var LEG_PAD = 2;  // points left free at the figure's edges
  function cutMiddle(head, n) {  // n characters of head around an ellipsis: 3/5 from its start, the rest from its end
    var a = Math.ceil(n * 0.6);
    return head.slice(0, a).replace(/\s+$/, "") + "…" + head.slice(head.length - (n - a)).replace(/^\s+/, "");
  }
  function shorten(text, keep, room, z) {
    if (strWidth(text, z) <= room) return text;
    var tail = keep > 0 && keep < text.length ? text.slice(text.length - keep) : "", head = text.slice(0, text.length - tail.length);
    if (strWidth("…" + tail, z) > room) { tail = ""; head = text; }  // not even the tail fits: the whole text shortened
    var lo = 0, hi = head.length - 1;
    while (lo < hi) {
      var m = Math.ceil((lo + hi) / 2);
      if (strWidth(cutMiddle(head, m) + tail, z) <= room) lo = m; else hi = m - 1;
    }
    return cutMiddle(head, lo) + tail;
  }
  // the widest a column may be for ``widths`` (one per column) to take ``room`` in all: the widest
  // are brought down to one width, the others kept
  function capWidths(widths, room) {
    var sorted = widths.slice().sort(function (a, c) { return a - c; }), left = room;
    for (var i = 0; i < sorted.length; i++) {
      var share = left / (sorted.length - i);
      if (sorted[i] > share) return share;
      left -= sorted[i];
    }
    return Infinity;
  }
  function legend(svg, P, spec, pid, twin) {
    var items = P.L.filter(function (l) { return l.lab; });
    if (!items.length) return;
    var L = P.leg, b = P.box, z = LEG_SIZE, row = z * 1.45, hl = 2 * z, gap = 0.8 * z, sep = 2 * z;
    var g = el(svg, "g", {"class": "legend"});
    var n = items.length, asked = Math.max(1, L.n || 1), cols = asked;
    var need = items.map(function (l) { return hl + gap + strWidth(l.lab, z); });
    function total(c) {
      var w = [];
      need.forEach(function (v, i) { w[i % c] = Math.max(w[i % c] || 0, v); });
      return w.reduce(function (a, v) { return a + v; }, 0) + (c - 1) * sep;
    }
    var x, y, room;
    if (L.at === "top") { x = b[0] - 0.02 * b[2]; y = b[1] - 0.02 * b[3] - (Math.ceil(n / cols) + (L.title ? 1 : 0)) * row + z * 0.8; }
    else if (L.at === "below") { x = null; y = b[1] + b[3] + (L.o || 0) + z * 0.8; }
    else { x = b[0] + b[2] + (twin ? 40 : 0) + 0.01 * b[2] + 2; y = b[1] + z * 0.8; }
    if (L.at === "below") {
      room = spec.w - 2 * LEG_PAD;
      var rowsFit = Math.max(Math.floor((spec.h - LEG_PAD - z * 0.25 - y) / row) + 1, Math.ceil(n / asked));
      for (cols = asked; cols >= 1; cols--) if (Math.ceil(n / cols) <= rowsFit && total(cols) <= room) break;
      if (cols < 1) cols = Math.min(asked, Math.max(1, Math.ceil(n / rowsFit)));
    } else room = spec.w - LEG_PAD - x;
    var colW = [];
    need.forEach(function (v, i) { colW[i % cols] = Math.max(colW[i % cols] || 0, v); });
    var cap = capWidths(colW, room - (cols - 1) * sep);
    if (L.title) { el(g, "text", {x: x || 0, y: r1(y), "font-size": z, "font-weight": "bold", fill: INK}, L.title); y += row; }
    var entries = [];
    items.forEach(function (l, i) {
      var sid = l.s !== undefined ? pid + "-s" + l.s : null;
      var e = el(g, "g", {});
      var hx = 0, hy = -z * 0.3;
      if (l.t === "line" || l.t === "hline" || l.t === "vline" || l.t === "stairs" || l.kl) {
        if (l.ls !== "none") el(e, "line", Object.assign(lineAttrs(l), {x1: hx, x2: hx + hl, y1: hy, y2: hy, id: sid ? sid + "-legh" : null}));
        if (l.m) marker(e, l.m, hx + hl / 2, hy, Math.min(l.ms, 9), color(l.mfc || l.c), l.mec ? color(l.mec) : null, l.ls === "none" && sid ? {id: sid + "-legh"} : {});
      } else {
        var op = l.a !== undefined ? Math.max(l.a, 0.25) : 1;
        var fill = color(Array.isArray(l.c) ? l.c[0] : l.c);
        el(e, "rect", {x: hx, y: r1(hy - z * 0.35), width: hl, height: r1(z * 0.7), fill: fill, "fill-opacity": op,
                       stroke: l.h ? l.ec : null, id: sid ? sid + "-legh" : null});
        if (l.h) hatch(e, hx, hy - z * 0.35, hl, z * 0.7, against(fill));
      }
      var text = need[i] > cap ? shorten(l.lab, l.lk || 0, cap - hl - gap, z) : l.lab;
      if (text !== l.lab) e.insertBefore(el(e, "title", {}, l.lab), e.firstChild);
      var t = el(e, "text", {x: hl + gap, y: 0, "font-size": z, fill: INK, id: sid ? sid + "-leg" : null}, text);
      entries.push([e, hl + gap + (text === l.lab ? need[i] - hl - gap : textWidth(t))]);
    });
    colW = [];
    entries.forEach(function (en, i) { var c = i % cols; colW[c] = Math.max(colW[c] || 0, en[1]); });
    var width = colW.reduce(function (a, v) { return a + v; }, 0) + (cols - 1) * sep;
    if (x === null) x = Math.max(LEG_PAD, Math.min(b[0] + b[2] / 2 - width / 2, spec.w - LEG_PAD - width));
    entries.forEach(function (en, i) {
      var c = i % cols, r = Math.floor(i / cols), off = 0;
      for (var k = 0; k < c; k++) off += colW[k] + sep;
      en[0].setAttribute("transform", "translate(" + r1(x + off) + "," + r1(y + r * row) + ")");
    });
    if (L.title) g.firstChild.setAttribute("x", r1(x));
  }

  // ---- a text box ----------------------------------------------------------------------------------
  function drawBox(svg, P) {
    var b = P.box, g = el(svg, "g", {"class": "box"});
    el(g, "rect", {x: b[0], y: b[1], width: b[2], height: b[3], rx: 4, fill: "#f6f8fa", stroke: P.ec, "stroke-width": 1.5});
    var n = P.lines.length, texts = [], widest = 0;
    P.lines.forEach(function (ln, i) {
      var t = el(g, "text", {x: r1(b[0] + 0.04 * b[2]), y: r1(b[1] + (0.04 + i * 0.92 / n) * b[3] + P.zmax * 0.85), "font-size": P.zmax,
                             "font-weight": ln[2] === "bold" ? "bold" : null, fill: ln[1], style: "white-space: pre"}, ln[0]);
      texts.push(t);
      widest = Math.max(widest, textWidth(t));
    });
    var size = Math.max(P.zmin, Math.min(P.zmax, P.zmax * 0.92 * b[2] / (widest || 1)));
    var lineH = Math.min(0.9 * b[3] / n, size * 2.2);
    texts.forEach(function (t, i) { t.setAttribute("font-size", r1(size)); t.setAttribute("y", r1(b[1] + 0.05 * b[3] + i * lineH + size * 0.9)); });
  }

  // ---- 3D bars ---------------------------------------------------------------------------------------
  function drawBars3d(svg, P) {
    var b = P.box, nx = P.xl.length, ny = P.yl.length;
    var zs = [].concat.apply([], P.z).filter(finite), zmax = d3.max(zs) || 1;
    var zsc = d3.scaleLinear().domain([0, zmax]).nice(5);
    var ztop = zsc.domain()[1];
    // oblique view: x (columns) goes right and down, y (rows) right and up, z up
    var ex = [Math.cos(0.38), Math.sin(0.38)], ey = [Math.cos(0.62), -Math.sin(0.62)];
    function raw(x, y, z) { return [x * ex[0] * 1.0 + y * ey[0] * 0.85, x * ex[1] + y * ey[1] * 0.85 - z]; }
    var zh = Math.max(nx, ny) * 0.9;
    function P3(x, y, z) { return raw(x, y, z / ztop * zh); }
    var corners = [];
    [0, nx].forEach(function (x) { [0, ny].forEach(function (y) { [0, ztop].forEach(function (z) { corners.push(P3(x, y, z)); }); }); });
    var minx = d3.min(corners, function (c) { return c[0]; }), maxx = d3.max(corners, function (c) { return c[0]; });
    var miny = d3.min(corners, function (c) { return c[1]; }), maxy = d3.max(corners, function (c) { return c[1]; });
    var padL = 70, padR = 60, padT = P.title ? 18 : 8, padB = 46;
    var s = Math.min((b[2] - padL - padR) / (maxx - minx), (b[3] - padT - padB) / (maxy - miny));
    var ox = b[0] + padL + ((b[2] - padL - padR) - (maxx - minx) * s) / 2 - minx * s, oy = b[1] + padT - miny * s;
    function S(x, y, z) { var p = P3(x, y, z); return [r1(ox + p[0] * s), r1(oy + p[1] * s)]; }
    function poly(g, pts, attrs) { return el(g, "polygon", Object.assign({points: pts.map(function (p) { return p.join(","); }).join(" ")}, attrs)); }
    var g = el(svg, "g", {"class": "bars3d"});
    // back walls and floor with z grid lines
    poly(g, [S(0, 0, 0), S(0, ny, 0), S(nx, ny, 0), S(nx, 0, 0)], {fill: "#f6f8fa", stroke: GRID, "stroke-width": 0.6});
    poly(g, [S(0, 0, 0), S(0, ny, 0), S(0, ny, ztop), S(0, 0, ztop)], {fill: "#f0f2f4", stroke: GRID, "stroke-width": 0.6});
    poly(g, [S(0, ny, 0), S(nx, ny, 0), S(nx, ny, ztop), S(0, ny, ztop)], {fill: "#f6f8fa", stroke: GRID, "stroke-width": 0.6});
    zsc.ticks(5).forEach(function (v) {
      var a = S(0, 0, v), m = S(0, ny, v), c = S(nx, ny, v);
      el(g, "polyline", {points: [a, m, c].map(function (p) { return p.join(","); }).join(" "), fill: "none", stroke: GRID, "stroke-width": 0.6});
      el(g, "text", {x: a[0] - 4, y: a[1] + 3, "text-anchor": "end", "font-size": 7.5, fill: INK}, tickText(v, "k"));
    });
    // bars, back to front: high y first, then low x first
    var order = [];
    for (var yi = ny - 1; yi >= 0; yi--) for (var xi = 0; xi < nx; xi++) order.push([xi, yi]);
    order.forEach(function (o) {
      var xi = o[0], yi = o[1], v = P.z[yi][xi];
      if (!finite(v) || v <= 0) return;
      var xa = xi + 0.2, xb = xi + 0.8, ya = yi + 0.2, yb = yi + 0.8, c = d3.color(color(P.cs[xi]));
      var bg = el(g, "g", {});
      poly(bg, [S(xa, ya, 0), S(xb, ya, 0), S(xb, ya, v), S(xa, ya, v)], {fill: c.darker(0.5).formatHex(), stroke: "#00000030", "stroke-width": 0.3});
      poly(bg, [S(xb, ya, 0), S(xb, yb, 0), S(xb, yb, v), S(xb, ya, v)], {fill: c.darker(0.9).formatHex(), stroke: "#00000030", "stroke-width": 0.3});
      poly(bg, [S(xa, ya, v), S(xb, ya, v), S(xb, yb, v), S(xa, yb, v)], {fill: c.brighter(0.3).formatHex(), stroke: "#00000030", "stroke-width": 0.3});
      el(bg, "title", {}, P.yl[yi] + " · " + P.xl[xi] + ": " + tickText(v, "") + (P.u ? " " + P.u : ""));
    });
    // axis labels: columns along the front-left edge, rows along the front-right edge
    P.xl.forEach(function (lab, xi) { var p = S(xi + 0.5, 0, 0); el(g, "text", {x: p[0] - 4, y: p[1] + 10, "text-anchor": "end", "font-size": 7.5, fill: INK}, lab); });
    P.yl.forEach(function (lab, yi) { var p = S(nx, yi + 0.5, 0); el(g, "text", {x: p[0] + 6, y: p[1] + 8, "font-size": 7.5, fill: INK}, lab); });
    var px = S(nx / 2, 0, 0), py = S(nx, ny / 2, 0), pz = S(0, 0, ztop / 2);
    el(g, "text", {x: px[0] - 30, y: px[1] + 32, "text-anchor": "middle", "font-size": LABEL_SIZE, fill: INK}, P.xn);
    el(g, "text", {x: py[0] + 40, y: py[1] + 30, "text-anchor": "middle", "font-size": LABEL_SIZE, fill: INK}, P.yn);
    if (P.zl) el(g, "text", {transform: "translate(" + r1(pz[0] - 48) + "," + r1(pz[1]) + ") rotate(-90)", "text-anchor": "middle", "font-size": LABEL_SIZE, fill: INK}, P.zl);
    if (P.title) el(g, "text", {x: r1(b[0] + b[2] / 2), y: r1(b[1] + 10), "text-anchor": "middle", "font-size": 9.5, fill: INK}, P.title.t);
  }

  // ---- a whole plot --------------------------------------------------------------------------------
  function draw(fig, pid, spec) {
    var svg = document.createElementNS(NS, "svg");
    svg.setAttribute("viewBox", "0 0 " + spec.w + " " + spec.h);
    svg.setAttribute("width", spec.w + "pt");
    svg.setAttribute("height", spec.h + "pt");
    svg.setAttribute("font-family", FONT);
    svg.setAttribute("class", "chart");
    svg.setAttribute("role", "img");
    var cap = fig.querySelector("figcaption");
    if (cap) svg.setAttribute("aria-label", cap.textContent);
    var slot = fig.querySelector(".chart-slot") || fig;
    slot.appendChild(svg);
    var hover = [];
    spec.P.forEach(function (P, i) {
      if (P.k === "box") drawBox(svg, P);
      else if (P.k === "bars3d") drawBars3d(svg, P);
      else drawXY(svg, spec, P, i, hover, pid);
    });
    if (spec.mark) el(svg, "text", {x: r1(spec.w * 0.006), y: r1(spec.h * 0.992), "font-size": 7, "font-weight": "bold", fill: "#9a6700"}, spec.mark);
    downloads(fig, pid);
    return hover.length ? {w: spec.w, h: spec.h, s: hover} : null;
  }

  // ---- each plot as a file (screen only): SVG as drawn, PNG at twice its size on white ----------------
  function svgText(svg) {
    var copy = svg.cloneNode(true);
    copy.setAttribute("xmlns", NS);
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(copy);
  }
  // window.ssdptsPlotFile(plot id, "svg" | "png"): a Promise of the plot's file as a Blob
  window.ssdptsPlotFile = function (pid, kind) {
    var svg = document.getElementById(pid).querySelector("svg.chart");
    var text = svgText(svg);
    var blob = new Blob([text], {type: "image/svg+xml"});
    if (kind === "svg") return Promise.resolve(blob);
    var box = svg.viewBox.baseVal, scale = 2 * 4 / 3;  // pt -> px, twice
    return new Promise(function (resolve, reject) {
      var img = new Image(), url = URL.createObjectURL(blob);
      img.onload = function () {
        var c = document.createElement("canvas");
        c.width = Math.round(box.width * scale); c.height = Math.round(box.height * scale);
        var g = c.getContext("2d");
        g.fillStyle = "#ffffff"; g.fillRect(0, 0, c.width, c.height);
        g.drawImage(img, 0, 0, c.width, c.height);
        URL.revokeObjectURL(url);
        c.toBlob(function (b) { if (b) resolve(b); else reject(new Error("no PNG")); }, "image/png");
      };
      img.onerror = function () { URL.revokeObjectURL(url); reject(new Error("the SVG did not load as an image")); };
      img.src = url;
    });
  };
  function downloads(fig, pid) {
    if (document.body.classList.contains("print") || fig.querySelector(".plot-dl")) return;
    var where = fig.querySelector("figcaption") || fig;
    var span = document.createElement("span");
    span.className = "plot-dl";
    ["svg", "png"].forEach(function (kind) {
      var a = document.createElement("a");
      a.className = "csv"; a.href = "#"; a.textContent = kind.toUpperCase();
      a.title = "download this plot as " + kind.toUpperCase();
      a.addEventListener("click", function (ev) {
        ev.preventDefault();
        window.ssdptsPlotFile(pid, kind).then(function (b) {
          var link = document.createElement("a"), url = URL.createObjectURL(b);
          link.href = url; link.download = pid + "." + kind;
          document.body.appendChild(link); link.click(); link.remove();
          setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
        });
      });
      span.appendChild(a);
    });
    where.appendChild(span);
  }

  function drawAll() {
    var t0 = performance.now();
    var node = document.getElementById("ssdpts-plots");
    var specs = node ? JSON.parse(node.textContent) : {};
    window.SSDPTS_HOVER = {};
    window.ssdptsPlotErrors = [];
    Object.keys(specs).forEach(function (pid) {
      var fig = document.getElementById(pid);
      if (!fig) return;
      try {
        var h = draw(fig, pid, specs[pid]);
        if (h) window.SSDPTS_HOVER[pid] = h;
      } catch (e) {
        window.ssdptsPlotErrors.push(pid + ": " + e);
        var p = document.createElement("p");
        p.className = "plot-error";
        p.textContent = "This plot could not be drawn (" + e + ").";
        fig.appendChild(p);
      }
    });
    window.ssdptsPlots = "done";
    window.ssdptsDrawMs = performance.now() - t0;
  }
  // A plot described after the page loaded (the results site's comparisons, site/templates/site.js)
  // is drawn the same way into its figure: window.ssdptsDraw(figure element, plot id, description).
  window.ssdptsDraw = function (fig, pid, spec) {
    var h = draw(fig, pid, spec);
    if (h) window.SSDPTS_HOVER[pid] = h;
    return h;
  };
  drawAll();
})();
