/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * hwtrace report's page: draws the JSON object hwtrace wrote into the
 * element #hwtrace-data (query/q_report.c) with d3-flame-graph for the
 * flame graph and the icicle, and plain DOM and SVG for the rest.  An
 * error while drawing is shown on the page (#hwtrace-errors) and in the
 * console, so that a test in a headless browser sees it.
 */
(function () {
	"use strict";

	var CSS = [
		"body{font:14px/1.4 system-ui,sans-serif;margin:0 1.5em 3em;color:#222}",
		"h1{font-size:1.4em;margin:.8em 0 .2em}h2{font-size:1.15em;",
		"margin:1.6em 0 .4em;border-bottom:1px solid #ccc}",
		"table{border-collapse:collapse;margin:.3em 0;font-size:13px}",
		"th,td{padding:1px 8px;text-align:left;vertical-align:top}",
		"th{background:#eee}tr:nth-child(even) td{background:#f7f7f7}",
		"td.num{text-align:right;font-variant-numeric:tabular-nums}",
		"code,.src{font-family:ui-monospace,monospace;white-space:pre}",
		".src{color:#555}.warn{background:#fff3cd;border:1px solid #e0c060;",
		"padding:.4em .8em;margin:.4em 0}.ok{color:#2a7a2a}",
		".err{background:#fdd;border:1px solid #c66;padding:.4em .8em}",
		"nav a{margin-right:1em}#flame,#icicle{overflow:hidden}",
		".tl-row{font:11px ui-monospace,monospace}.note{color:#666;",
		"font-size:12px}input{font:inherit}"
	].join("");

	var errors = [];

	/* The system's directories, as hwtr_path_system() (common/syspath.c). */
	var SYSTEM = /^\/(usr\/(?!local(\/|$))|usr$|(lib|lib32|lib64|libx32|bin|sbin)(\/|$))/;

	function fail(msg) {
		var box = document.getElementById("hwtrace-errors");

		errors.push(msg);
		document.body.setAttribute("data-errors", String(errors.length));
		if (box) {
			box.style.display = "block";
			box.appendChild(el("div", null, msg));
		}
		if (window.console)
			console.error("hwtrace report: " + msg);
	}

	window.addEventListener("error", function (ev) {
		fail("script error: " + ev.message);
	});

	function el(tag, attrs, text) {
		var e = document.createElement(tag), k;

		for (k in attrs || {})
			e.setAttribute(k, attrs[k]);
		if (text !== undefined && text !== null)
			e.textContent = String(text);
		return e;
	}

	function fmtInt(v) {
		return typeof v === "number" ? v.toLocaleString("en-US") :
		    v === null || v === undefined ? "-" : String(v);
	}

	/* An array of row objects as a table; @cols: the columns, in order. */
	function table(id, rows, cols, extra) {
		var t = el("table", { id: id }), tr, i;

		if (!rows || rows.length === 0) {
			return el("p", { id: id, "class": "note" }, "(none)");
		}
		cols = cols || Object.keys(rows[0]);
		tr = el("tr");
		cols.forEach(function (c) { tr.appendChild(el("th", null, c)); });
		if (extra)
			tr.appendChild(el("th", null, extra.name));
		t.appendChild(tr);
		for (i = 0; i < rows.length; i++) {
			tr = el("tr");
			cols.forEach(function (c) {
				var v = rows[i][c];
				tr.appendChild(el("td", typeof v === "number" ?
				    { "class": "num" } : null, fmtInt(v)));
			});
			if (extra)
				tr.appendChild(el("td", { "class": "src" },
				    extra.cell(rows[i])));
			t.appendChild(tr);
		}
		return t;
	}

	function section(root, id, title, note) {
		var s = el("section", { id: "sec-" + id });

		s.appendChild(el("h2", null, title));
		if (note)
			s.appendChild(el("p", { "class": "note" }, note));
		root.appendChild(s);
		return s;
	}

	function orError(s, D, key) {
		if (D[key + "_error"]) {
			s.appendChild(el("div", { "class": "err" },
			    key + ": " + D[key + "_error"]));
			return true;
		}
		return false;
	}

	/* A table the page cut: say how long it was. */
	function cutNote(s, D, key) {
		if (D[key + "_rows"] && D[key])
			s.appendChild(el("p", { "class": "note" }, "The first " +
			    D[key].length + " of " + fmtInt(D[key + "_rows"]) +
			    " rows."));
	}

	function metaOf(D) {
		var m = {};

		(D.meta || []).forEach(function (r) { m[r.key] = r.value; });
		return m;
	}

	function summaryOf(D) {
		var m = {};

		(D.summary || []).forEach(function (r) { m[r.item] = r.value; });
		return m;
	}

	function drawRun(root, D) {
		var s = section(root, "run", "What ran"), m = metaOf(D),
		    sm = summaryOf(D), rows = [], nloss = 0, warn;

		rows.push({ item: "command", value: m.argv });
		rows.push({ item: "exit", value: m.exit_kind === undefined ?
		    "(no exit recorded)" : m.exit_kind + " " + m.exit_value });
		rows.push({ item: "source", value: m.capture_source });
		rows.push({ item: "threads", value: sm.threads });
		rows.push({ item: "instructions", value: sm.instructions });
		rows.push({ item: "duration", value: sm.duration_ns === undefined ||
		    sm.duration_ns === null ? "-" :
		    (sm.duration_ns / 1e6).toFixed(3) + " ms" });
		rows.push({ item: "started", value: sm.start });
		rows.push({ item: "archive complete", value:
		    m.archive_complete === "0" ? "no (truncated)" : "yes" });
		s.appendChild(table("run", rows, ["item", "value"]));
		s.appendChild(el("h3", null, "Losses"));
		(D.losses || []).forEach(function (r) {
			if (r.count > 0 && r.kind !== "disabled" &&
			    r.kind !== "async-disabled")
				nloss += r.count;
		});
		warn = el("div", { id: "losses-verdict",
		    "class": nloss > 0 ? "warn" : "ok" }, nloss > 0 ?
		    "The trace lost data: counts, the flame graph and the " +
		    "timelines are lower bounds where it did (marked in red on " +
		    "the timelines)." : "Nothing lost: no LOST or overflow " +
		    "record, no decode error.");
		s.appendChild(warn);
		s.appendChild(table("losses", (D.losses || []).filter(function (r) {
			return r.count > 0;
		}), ["kind", "count"]));
		if (D.loss_events && D.loss_events.length > 0)
			s.appendChild(table("loss-events", D.loss_events));
		s.appendChild(el("h3", null, "Threads"));
		if (!orError(s, D, "threads")) {
			s.appendChild(table("threads", D.threads));
			cutNote(s, D, "threads");
		}
	}

	function srcCell(D) {
		return {
			name: "source",
			cell: function (r) {
				var t = r.line ? D.sources[r.line] : undefined;
				return t === undefined ? "" : t.trim();
			}
		};
	}

	function drawEnd(root, D) {
		var s = section(root, "bt", "Backtrace at the end",
		    "The call stack where each thread's trace ends, innermost " +
		    "frame first (hwtrace query bt); the threads a signal " +
		    "killed first, then the last to run, " + D.limits.threads +
		    " at most.");

		if (!orError(s, D, "bt"))
			s.appendChild(table("bt", D.bt, ["thread", "frame",
			    "function", "address", "line"], srcCell(D)));
		s = section(root, "last", "Last blocks before the end",
		    "The last blocks each thread ran, oldest first (hwtrace " +
		    "query last).");
		if (!orError(s, D, "last"))
			s.appendChild(table("last", D.last, ["thread", "seq",
			    "address", "function", "line", "insns", "ends_with"],
			    srcCell(D)));
	}

	function label(total) {
		return function (d) {
			return d.data.name + ": " + fmtInt(d.data.value) +
			    " instructions (" + (100 * d.data.value /
			    total).toFixed(2) + "% of the run)" + (d.data.gap ?
			    "; the trace lost data here: " + d.data.gap : "");
		};
	}

	/*
	 * Mark the frames where the trace lost data: for each loss, the
	 * deepest frame on its call path (its thread's node when the path
	 * is empty, the root for a capture-wide loss).
	 */
	function markGaps(root, gaps) {
		var n = 0;

		(gaps || []).forEach(function (g) {
			var node = root, i, next;

			if (g.thread !== null) {
				next = (node.children || []).filter(function (c) {
					return c.thread === g.thread;
				})[0];
				if (!next)
					return;
				node = next;
			}
			for (i = 0; i < g.path.length; i++) {
				next = (node.children || []).filter(function (c) {
					return c.name === g.path[i];
				})[0];
				if (!next)
					break;
				node = next;
			}
			node.gap = (node.gap ? node.gap + "; " : "") + g.kind +
			    (g.detail ? " (" + g.detail + ")" : "");
			n++;
		});
		return n;
	}

	/* d3-flame-graph's mapper gets the colour it would use. */
	function gapColor(d, color) {
		return d.data.gap && !d.highlight ? "#b00020" : color;
	}

	function flameChart(div, data, inverted, width) {
		var fg = flamegraph.default()
		    .width(width)
		    .cellHeight(18)
		    .transitionDuration(0)
		    .minFrameSize(0.5)
		    .inverted(inverted)
		    .selfValue(false)
		    .sort(true)
		    .tooltip(false)
		    .label(label(data.value));

		fg.setColorMapper(gapColor);
		d3.select(div).datum(data).call(fg);
		return fg;
	}

	function drawFlame(root, D) {
		var s = section(root, "flame", "Flame graph of the whole run",
		    "Every call path merged, width: instructions run in it and " +
		    "its callees.  Click a frame to zoom, search to highlight. " +
		    "Frames under " + fmtInt(D.flame_min_insns) + " instructions " +
		    "are left out (their instructions stay in their caller)."),
		    bar = el("div"), input, fgs = [], width, found, nmarked = 0;

		if (orError(s, D, "flame") || !D.flame)
			return;
		if (typeof flamegraph === "undefined" || typeof d3 === "undefined") {
			fail("the drawing library is missing");
			return;
		}
		input = el("input", { id: "flame-search", type: "search",
		    placeholder: "search functions", size: "30" });
		found = el("span", { id: "flame-found", "class": "note" });
		bar.appendChild(input);
		bar.appendChild(el("button", { id: "flame-reset" }, "reset zoom"));
		bar.appendChild(found);
		s.appendChild(bar);
		s.appendChild(el("div", { id: "flame" }));
		s.appendChild(el("h3", null, "Icicle (the same, roots on top)"));
		s.appendChild(el("div", { id: "icicle" }));
		width = Math.max(600, s.clientWidth || 1200);
		/* Each chart annotates its own copy of the data. */
		[["#flame", false], ["#icicle", true]].forEach(function (c) {
			var data = JSON.parse(JSON.stringify(D.flame));

			nmarked = markGaps(data, D.flame_gaps);
			fgs.push(flameChart(c[0], data, c[1], width));
		});
		if (nmarked > 0)
			s.insertBefore(el("div", { id: "flame-gaps", "class": "warn" },
			    "The trace lost data in " + nmarked + " place" +
			    (nmarked > 1 ? "s" : "") + ": the frames in dark red " +
			    "hold them (hover for what was lost); the widths there " +
			    "are lower bounds."), bar);
		input.addEventListener("input", function () {
			fgs.forEach(function (fg) {
				if (input.value === "")
					fg.clear();
				else
					fg.search(input.value);
			});
			found.textContent = input.value === "" ? "" : " " +
			    document.querySelectorAll("#flame g.frame rect[fill='#E600E6']").length +
			    " frames match";
		});
		bar.querySelector("#flame-reset").addEventListener("click",
		    function () { fgs.forEach(function (fg) { fg.resetZoom(); }); });
	}

	function hue(name) {
		var h = 0, i;

		for (i = 0; i < name.length; i++)
			h = (h * 31 + name.charCodeAt(i)) >>> 0;
		return "hsl(" + (h % 360) + ",60%,72%)";
	}

	function svgEl(tag, attrs) {
		var e = document.createElementNS("http://www.w3.org/2000/svg", tag), k;

		for (k in attrs)
			e.setAttribute(k, attrs[k]);
		return e;
	}

	function drawTimeline(root, D) {
		var s = section(root, "timeline", "Each thread's calls over time",
		    "Columns are equal shares of the thread's instructions; a " +
		    "row per call level; calls shorter than half a column are " +
		    "left out.  Red marks: the trace lost data there; grey: the " +
		    "trace was off (a system call, a disabled region)."),
		    T = D.timeline;

		if (orError(s, D, "timeline") || !T)
			return;
		T.threads.forEach(function (th) {
			var rowh = 16, cw = 2, W = T.columns * cw, maxd = 0, svg, g;

			th.spans.forEach(function (sp) {
				if (sp[0] + 1 > maxd)
					maxd = sp[0] + 1;
			});
			s.appendChild(el("h3", null, "thread " + th.thread + " (tid " +
			    th.tid + (th.name ? " " + th.name : "") + "), " +
			    fmtInt(th.insns) + " instructions"));
			svg = svgEl("svg", { width: W, height: Math.max(1, maxd) *
			    rowh + 4, "class": "tl-row", "data-thread": th.thread });
			th.spans.forEach(function (sp) {
				g = svgEl("g", { "class": "span", "data-name": sp[3] });
				var r = svgEl("rect", { x: sp[1] * cw, y: sp[0] * rowh,
				    width: (sp[2] - sp[1] + 1) * cw, height: rowh - 1,
				    fill: hue(sp[3]) }), t = svgEl("title", {});

				t.textContent = sp[3] + " (level " + sp[0] + ")";
				g.appendChild(r);
				g.appendChild(t);
				if ((sp[2] - sp[1] + 1) * cw > 40) {
					var tx = svgEl("text", { x: sp[1] * cw + 2,
					    y: sp[0] * rowh + 12 });
					tx.textContent = sp[3].slice(0,
					    Math.floor((sp[2] - sp[1] + 1) * cw / 7));
					g.appendChild(tx);
				}
				svg.appendChild(g);
			});
			th.gaps.forEach(function (gp) {
				var off = gp[1] === "disabled" ||
				    gp[1] === "async-disabled",
				    r = svgEl("rect", { x: gp[0] * cw, y: 0, width: cw,
				    height: Math.max(1, maxd) * rowh,
				    fill: off ? "#999" : "#d00",
				    "class": off ? "gap off" : "gap lost" }),
				    t = svgEl("title", {});

				t.textContent = gp[1];
				r.appendChild(t);
				svg.appendChild(r);
			});
			s.appendChild(svg);
		});
	}

	function drawHot(root, D) {
		var s = section(root, "hot", "Hot functions",
		    "Instructions run in each function itself (hwtrace query hot).");

		if (!orError(s, D, "hot"))
			s.appendChild(table("hot", D.hot));
		s = section(root, "hot-lines", "Hot lines",
		    "(hwtrace query hot --by line)");
		if (!orError(s, D, "hot_lines"))
			s.appendChild(table("hot-lines", D.hot_lines));
	}

	function drawCoverage(root, D) {
		var s = section(root, "coverage", "Coverage of the program's own files",
		    "Files outside the system's directories (/usr, /lib, ...), " +
		    "from hwtrace query coverage.");

		if (orError(s, D, "coverage"))
			return;
		s.appendChild(table("coverage-files", D.coverage_files));
		cutNote(s, D, "coverage_files");
		s.appendChild(el("h3", null, "Functions"));
		s.appendChild(table("coverage", D.coverage));
	}

	function drawImages(root, D) {
		var s = section(root, "images", "Images and their debug information",
		    "An image without lines has no line table in the archive: its " +
		    "debug information was left out (capture --debug-info) or " +
		    "never existed.  Functions there are named by their ELF " +
		    "symbols only."), rows;

		if (orError(s, D, "images"))
			return;
		rows = (D.images || []).map(function (r) {
			return {
				path: r.path, kind: r.kind, size: r.size,
				executed_blocks: r.blocks,
				"debug info": r.present === 0 ? "image not in the archive" :
				    r.has_lines ? (r.debug_symbols > 0 ?
				    "separate debug file stored" : "in the image") :
				    r.kind === "memory" ? "none (code from memory)" :
				    SYSTEM.test(r.path || "") ? "left out or absent " +
				    "(a system library: capture --debug-info=own or " +
				    "none leaves it out)" : "absent (no lines)"
			};
		});
		s.appendChild(table("images", rows));
	}

	function main() {
		var app = document.getElementById("app"), D, m, nav, parts;

		document.head.appendChild(el("style", null, CSS));
		try {
			D = JSON.parse(document.getElementById("hwtrace-data").textContent);
		} catch (e) {
			app.textContent = "";
			app.appendChild(el("div", { id: "hwtrace-errors", "class": "err" }));
			fail("the report's data do not parse: " + e.message);
			return;
		}
		m = metaOf(D);
		app.textContent = "";
		app.appendChild(el("h1", null, "hwtrace report: " + (m.argv || "?")));
		app.appendChild(el("div", { id: "hwtrace-errors", "class": "err",
		    style: "display:none" }));
		nav = el("nav");
		[["run", "what ran"], ["bt", "backtrace"], ["last", "last blocks"],
		    ["flame", "flame graph"], ["hot", "hot"], ["timeline", "timelines"],
		    ["coverage", "coverage"], ["images", "debug info"]].forEach(
		    function (p) {
			nav.appendChild(el("a", { href: "#sec-" + p[0] }, p[1]));
		});
		app.appendChild(nav);
		parts = [drawRun, drawEnd, drawFlame, drawHot, drawTimeline,
		    drawCoverage, drawImages];
		parts.forEach(function (f) {
			try {
				f(app, D);
			} catch (e) {
				fail(f.name + ": " + e.message);
			}
		});
		document.body.setAttribute("data-drawn", "1");
	}

	if (document.readyState === "loading")
		document.addEventListener("DOMContentLoaded", main);
	else
		main();
})();
