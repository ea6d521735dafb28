// The report's interactions (screen only; the printed PDF has no script):
// hover a plot for the exact value, round and step of the nearest point; toggle series with the
// buttons under a plot or its legend; click a table value for its cell's rounds, histogram, QoS
// and fio job. The plots' points come from chart.js (where it drew each point, in SVG units, and its
// value: window.SSDPTS_HOVER), the cells' details from details.py.
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("ssdpts-data").textContent);
  var tip = document.getElementById("tip");
  var SVGNS = "http://www.w3.org/2000/svg";

  function fmt(v) {
    if (v === null || v === undefined) return "—";
    if (typeof v !== "number") return String(v);
    if (Number.isInteger(v)) return v.toLocaleString("en-US");
    var a = Math.abs(v);
    if (a >= 1) return v.toLocaleString("en-US", {maximumFractionDigits: 3});
    return String(Number(v.toPrecision(6)));
  }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function byGid(svg, gid) {
    return svg.querySelectorAll('[id="' + gid + '"], [id^="' + gid + '."]');
  }

  // ---- plots: hover and toggles -------------------------------------------------------------
  var HOVER = window.SSDPTS_HOVER || {};
  Object.keys(HOVER).forEach(function (pid) {
    var fig = document.getElementById(pid);
    var d = HOVER[pid];
    var svg = fig && fig.querySelector("svg");
    if (!svg || !d) return;
    var hidden = {};
    var mark = document.createElementNS(SVGNS, "circle");
    mark.setAttribute("r", "4.5");
    mark.setAttribute("fill", "none");
    mark.setAttribute("stroke", "#cf222e");
    mark.setAttribute("stroke-width", "1.6");
    mark.style.display = "none";
    svg.appendChild(mark);

    // a series name may appear in several panels (mean and max): one button shows or hides them all
    var byName = {};
    d.s.forEach(function (s) { (byName[s.n] = byName[s.n] || []).push(s.g); });
    function toggle(name, on) {
      byName[name].forEach(function (gid) {
        hidden[gid] = !on;
        byGid(svg, gid).forEach(function (n) { n.classList.toggle("ssdpts-off", !on); });
        svg.querySelectorAll('[id="' + gid + '-leg"], [id="' + gid + '-legh"]').forEach(function (n) {
          n.classList.toggle("ssdpts-dim", !on);
        });
      });
      var b = fig.querySelector('button[data-name="' + CSS.escape(name) + '"]');
      if (b) b.setAttribute("aria-pressed", on ? "true" : "false");
    }
    var names = Object.keys(byName);
    if (names.length > 1) {
      var bar = el("div", {"class": "toggles", "role": "group", "aria-label": "show or hide series"});
      names.forEach(function (name) {
        var first = byName[name][0];
        var b = el("button", {"type": "button", "data-name": name, "data-gid": first, "aria-pressed": "true",
                              "title": "show / hide"}, name);
        b.addEventListener("click", function () { toggle(name, !!hidden[first]); });
        bar.appendChild(b);
        byName[name].forEach(function (gid) {
          svg.querySelectorAll('[id="' + gid + '-leg"], [id="' + gid + '-legh"]').forEach(function (n) {
            n.addEventListener("click", function () { toggle(name, !!hidden[first]); });
          });
        });
      });
      svg.insertAdjacentElement("afterend", bar);
    }
    svg.addEventListener("mousemove", function (e) {
      var m = svg.getScreenCTM();
      if (!m) return;
      var pt = svg.createSVGPoint();
      pt.x = e.clientX; pt.y = e.clientY;
      var p = pt.matrixTransform(m.inverse());
      var best = null, bestD = Infinity, limit = 14 / m.a;
      d.s.forEach(function (s) {
        if (hidden[s.g]) return;
        s.p.forEach(function (q, i) {
          var dx = q[0] - p.x, dy = q[1] - p.y, dd = dx * dx + dy * dy;
          if (dd < bestD) { bestD = dd; best = [s, i]; }
        });
      });
      if (!best || Math.sqrt(bestD) > limit) { tip.hidden = true; mark.style.display = "none"; return; }
      var s = best[0], q = s.p[best[1]];
      mark.setAttribute("cx", q[0]); mark.setAttribute("cy", q[1]); mark.style.display = "";
      var lines = [s.n, (s.x ? s.x + " " : "") + fmt(q[2]) + ": " + fmt(q[3]) + (s.u ? " " + s.u : "")];
      if (s.t && s.t[best[1]]) lines.push(s.t[best[1]]);
      else if (s.ti) lines.push(s.ti + (best[1] + 1));
      tip.textContent = lines.join("\n");
      tip.hidden = false;
      var x = e.clientX + 14, y = e.clientY + 14;
      if (x + tip.offsetWidth > window.innerWidth - 8) x = e.clientX - tip.offsetWidth - 14;
      if (y + tip.offsetHeight > window.innerHeight - 8) y = e.clientY - tip.offsetHeight - 14;
      tip.style.left = x + "px"; tip.style.top = y + "px";
    });
    svg.addEventListener("mouseleave", function () { tip.hidden = true; mark.style.display = "none"; });
  });

  // ---- cell details -------------------------------------------------------------------------
  var dialog = document.getElementById("cell-dialog");
  var body = document.getElementById("cell-body");

  function histogram(h, max, p5) {
    var W = 860, H = 170, L = 52, B = 28, T = 8, R = 12;
    var svg = document.createElementNS(SVGNS, "svg");
    svg.setAttribute("viewBox", "0 0 " + W + " " + H);
    svg.setAttribute("class", "hist");
    if (!h.length) return svg;
    var step = Math.pow(10, 1 / 20);
    var lo = Math.log10(h[0][0]), hi = Math.log10(Math.max(h[h.length - 1][0] * step, max || 0));
    if (hi <= lo) hi = lo + 1;
    var top = Math.max.apply(null, h.map(function (b) { return b[1]; }));
    function X(v) { return L + (Math.log10(v) - lo) / (hi - lo) * (W - L - R); }
    function Y(n) { return H - B - (n > 0 ? Math.log10(n + 1) / Math.log10(top + 1) : 0) * (H - B - T); }
    function add(tag, a, text) {
      var n = document.createElementNS(SVGNS, tag);
      for (var k in a) n.setAttribute(k, a[k]);
      if (text !== undefined) n.textContent = text;
      svg.appendChild(n);
      return n;
    }
    h.forEach(function (b) {
      var r = add("rect", {x: X(b[0]), y: Y(b[1]), width: Math.max(1, X(b[0] * step) - X(b[0]) - 1),
                           height: H - B - Y(b[1]), fill: "#0969da"});
      r.appendChild(document.createElementNS(SVGNS, "title")).textContent =
        fmt(b[0]) + "–" + fmt(b[0] * step) + " µs: " + fmt(b[1]) + " IOs";
    });
    add("line", {x1: L, x2: W - R, y1: H - B, y2: H - B, stroke: "#57606a"});
    for (var e = Math.ceil(lo); e <= Math.floor(hi); e++) {
      add("line", {x1: X(Math.pow(10, e)), x2: X(Math.pow(10, e)), y1: H - B, y2: H - B + 4, stroke: "#57606a"});
      add("text", {x: X(Math.pow(10, e)), y: H - 8, "text-anchor": "middle", "font-size": 11}, fmt(Math.pow(10, e)) + " µs");
    }
    add("text", {x: 4, y: 14, "font-size": 11}, "IOs (log)");
    for (var k = 1; k <= top; k *= 10) {
      add("line", {x1: L - 4, x2: L, y1: Y(k), y2: Y(k), stroke: "#57606a"});
      add("text", {x: L - 6, y: Y(k) + 4, "text-anchor": "end", "font-size": 10}, fmt(k));
    }
    if (max) add("line", {x1: X(max), x2: X(max), y1: T, y2: H - B, stroke: "#cf222e", "stroke-dasharray": "4 3"});
    if (p5) add("line", {x1: X(p5), x2: X(p5), y1: T, y2: H - B, stroke: "#9a6700", "stroke-dasharray": "2 2"});
    return svg;
  }

  function open(id) {
    var d = DATA.details[id];
    if (!d) return false;
    body.textContent = "";
    body.appendChild(el("h4", {id: "cell-title"}, d.title));
    var win = d.window.length ? "rounds " + d.window[0] + "–" + d.window[d.window.length - 1] : "no window";
    body.appendChild(el("p", {}, "Window " + win + (d.reached === false ? " (steady state NOT reached)" : "") +
      ": average " + fmt(d.avg) + " " + d.unit + " · " + fmt(d.ios) + " IOs · mean " + fmt(d.mean) +
      " µs · max " + fmt(d.max) + " µs"));
    var t = el("table"), head = el("tr");
    d.cols.forEach(function (c, i) { head.appendChild(el("th", {}, i === 1 ? d.unit : c)); });
    t.appendChild(el("thead")).appendChild(head);
    var tb = t.appendChild(el("tbody"));
    d.rows.forEach(function (r) {
      var tr = el("tr", d.window.indexOf(r[0]) >= 0 ? {"class": "win"} : {});
      r.forEach(function (v, i) {
        var td = el("td");
        if (i === 9 && v) {
          td.appendChild(el("a", {href: DATA.base + v, title: "fio json+ output of this round"}, v.split("/").pop()));
        } else td.textContent = fmt(v);
        tr.appendChild(td);
      });
      tb.appendChild(tr);
    });
    body.appendChild(el("p", {"class": "note"}, "Every round of this cell (green: the measurement window); " +
      "'step' is the step's position in its round, 'job' its job in the fio json+ file."));
    body.appendChild(t);
    if (d.hist.length) {
      body.appendChild(el("p", {}, "Response-time histogram of the window (pooled fio json+ bins, log–log; red: max, amber: 99.999%)"));
      var p5 = null;
      d.qos.forEach(function (q) { if (q[0] === 99.999) p5 = q[1]; });
      body.appendChild(histogram(d.hist, d.max, p5));
    }
    if (d.qos.length) {
      var qt = el("table"), h1 = el("tr"), r1 = el("tr");
      d.qos.forEach(function (q) {
        h1.appendChild(el("th", {}, "p" + q[0]));
        r1.appendChild(el("td", {title: q[2] ? "" : "fewer IOs than this percentile needs: the value is the slowest IOs"},
          fmt(q[1]) + (q[2] ? "" : " ≈ max")));
      });
      h1.appendChild(el("th", {}, "max")); r1.appendChild(el("td", {}, fmt(d.max)));
      qt.appendChild(el("thead")).appendChild(h1); qt.appendChild(el("tbody")).appendChild(r1);
      body.appendChild(el("p", {}, "QoS over the window (µs)"));
      body.appendChild(qt);
    }
    if (d.job) {
      var p = el("p", {}, "fio job section (last window round)" + (d.jobfile ? " — " : ""));
      if (d.jobfile) p.appendChild(el("a", {href: DATA.base + d.jobfile}, d.jobfile));
      body.appendChild(p);
      body.appendChild(el("pre", {}, d.job));
    } else body.appendChild(el("p", {"class": "note"}, "fio job section: not available (no fio job file for this run)"));
    if (!dialog.open) dialog.showModal();
    return true;
  }
  document.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("a.cell");
    if (a && open(a.getAttribute("data-detail"))) {
      e.preventDefault();
      history.replaceState(null, "", "#" + a.getAttribute("data-detail"));
    }
  });
  dialog.addEventListener("close", function () {
    if (location.hash.indexOf("#d-") === 0) history.replaceState(null, "", location.pathname + location.search);
  });
  if (location.hash.indexOf("#d-") === 0) open(location.hash.slice(1));
})();
