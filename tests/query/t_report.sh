#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# hwtrace report (issue 31, item 1): the page is loaded in a real browser
# (Debian's chromium, headless) and what it draws is checked against tools
# that share no code with hwtrace: the crash's frames against gdb's bt of a
# native run of the same program, their source text against the source
# file, and the flame graph's width of work() against callgrind's
# inclusive count.  The fixture is tests/progs/deepcrash.c: work() runs
# most of the program, then main -> level1 -> level2 -> level3 -> store
# faults.  A screenshot of the page is kept in the work directory and
# copied to the build directory (report-deepcrash.png).

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

PROG="$HWTRACE_PROGS/deepcrash"

need_prog()
{
	[ -x "$PROG" ] || atf_skip "fixture programs not built ($PROG)"
}

need_chromium()
{
	for b in chromium chromium-browser; do
		if command -v "$b" >/dev/null 2>&1; then
			BROWSER=$b
			return 0
		fi
	done
	atf_skip "chromium is not installed (Debian's chromium: ./install-deps.sh)"
}

# A capture of deepcrash and its report, written from the source tree so
# that the page shows the source lines (DWARF names them relative to it).
make_report()
{
	wd=$(pwd)
	"$HWTRACE" capture -o "$wd/dc.hwtrace" -- "$PROG" > cap.out 2> cap.err
	rc=$?
	[ "$rc" -eq 139 ] || atf_fail "capture of deepcrash: expected exit 139 (SIGSEGV), got $rc: $(cat cap.err)"
	(cd "$HWTRACE_SRC" && "$HWTRACE" report -o "$wd/dc.html" "$wd/dc.hwtrace") \
	    > rep.out 2> rep.err || atf_fail "report failed: $(cat rep.err)"
	grep -q "^hwtrace report: wrote '$wd/dc.html': [0-9]* bytes$" rep.err ||
	    atf_fail "expected \"hwtrace report: wrote '$wd/dc.html': N bytes\" on stderr, got: $(cat rep.err)"
	# No network: nothing in the page loads from elsewhere.
	if grep -Eiq '<script[^>]* src=|<link[^>]* href=|https?://[^" ]*\.js' dc.html; then
		atf_fail "the page loads something from outside: $(grep -Eio '<script[^>]* src=[^>]*>|<link[^>]*>|https?://[^" ]*\.js' dc.html | head -n 3)"
	fi
}

# Load the page headless: its DOM after the scripts ran into dom.html,
# the browser's log (console messages among it) into browser.log.
load_page()
{
	timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu \
	    --no-first-run --user-data-dir="$(pwd)/profile" \
	    --enable-logging=stderr --v=0 --virtual-time-budget=10000 \
	    --dump-dom "file://$(pwd)/dc.html" > dom.html 2> browser.log ||
	    atf_fail "chromium failed on the page: $(tail -n 5 browser.log)"
	grep -q 'data-drawn="1"' dom.html ||
	    atf_fail "the page did not finish drawing (no data-drawn on <body>); browser log: $(grep CONSOLE browser.log | head -n 5)"
	if grep -q ':CONSOLE' browser.log; then
		atf_fail "expected no console message, got: $(grep ':CONSOLE' browser.log | head -n 5)"
	fi
	if grep -q 'data-errors=' dom.html; then
		atf_fail "the page reports errors: $(grep -o '<div id="hwtrace-errors"[^>]*>.\{0,400\}' dom.html)"
	fi
}

# tables.py TABLE-ID: the rows of that table of dom.html, cells separated
# by tabs.
cat_tables_py()
{
	cat > tables.py <<'EOF'
import sys
from html.parser import HTMLParser

class T(HTMLParser):
    def __init__(self, want):
        super().__init__()
        self.want, self.inside, self.rows, self.cell = want, 0, [], None
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table" and a.get("id") == self.want:
            self.inside = 1
        elif self.inside and tag == "tr":
            self.rows.append([])
        elif self.inside and tag in ("td", "th"):
            self.cell = ""
    def handle_endtag(self, tag):
        if tag == "table" and self.inside:
            self.inside = 0
        elif self.inside and tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(self.cell)
            self.cell = None
    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data

p = T(sys.argv[1])
p.feed(open("dom.html", encoding="utf-8").read())
for r in p.rows:
    print("\t".join(c.replace("\t", " ") for c in r))
EOF
}

atf_test_case report_crash_bt
report_crash_bt_head()
{
	atf_set descr "the page loads in headless chromium with no console message and shows deepcrash's backtrace as gdb's bt of a native run (functions, file:line) with each frame's source text"
	atf_set timeout 300
}
report_crash_bt_body()
{
	need_prog
	need_chromium
	require_tools gdb python3
	make_report
	load_page
	cat_tables_py
	python3 tables.py bt > bt.tsv
	# gdb's frames: "#1  0x... in level3 (p=...) at tests/progs/deepcrash.c:44".
	(cd "$HWTRACE_SRC" && gdb -nx -batch -ex run -ex bt "$PROG") \
	    > gdb.out 2>&1 < /dev/null
	sed -n 's/^#\([0-9][0-9]*\) .* in \([^ ]*\) (.*) at \([^ ]*\)$/\1 \2 \3/p; s/^#\([0-9][0-9]*\)  *\([^ 0][^ ]*\) (.*) at \([^ ]*\)$/\1 \2 \3/p' \
	    gdb.out > gdb.frames
	[ "$(wc -l < gdb.frames)" -eq 5 ] ||
	    atf_fail "expected gdb to give 5 frames with lines (store to main), got: $(oneline gdb.out)"
	# The page's: frame, function without gcc's clone suffix, line.
	awk -F'\t' 'NR > 1 && $5 != "-" { f = $3; sub(/\..*/, "", f); print $2, f, $5 }' \
	    bt.tsv > page.frames
	diff -u gdb.frames page.frames > frames.diff ||
	    atf_fail "the page's backtrace disagrees with gdb: $(oneline frames.diff)"
	# By construction: store, level3, level2, level1, main.
	[ "$(cut -d' ' -f2 page.frames | tr '\n' ' ')" = "store level3 level2 level1 main " ] ||
	    atf_fail "expected frames store level3 level2 level1 main, got: $(oneline page.frames)"
	# Each frame's source column is the text of its line in deepcrash.c.
	awk -F'\t' 'NR > 1 && $5 != "-" { print $5 "\t" $6 }' bt.tsv |
	while IFS="$(printf '\t')" read -r place text; do
		n=${place##*:}
		want=$(sed -n "${n}p" "$HWTRACE_SRC/tests/progs/deepcrash.c" |
		    sed 's/^[[:space:]]*//; s/[[:space:]]*$//')
		[ "$text" = "$want" ] ||
		    atf_fail "source of $place: expected '$want', got '$text'"
	done || exit 1
	# The last blocks end in store, the faulting function.
	python3 tables.py last > last.tsv
	tail -n 1 last.tsv | cut -f4 | grep -q '^store' ||
	    atf_fail "expected the last block in store, got: $(tail -n 1 last.tsv)"
	timeout 120 "$BROWSER" --headless --no-sandbox --disable-gpu \
	    --no-first-run --user-data-dir="$(pwd)/profile" \
	    --virtual-time-budget=10000 --window-size=1400,2600 \
	    --screenshot="$(pwd)/report-deepcrash.png" "file://$(pwd)/dc.html" \
	    > shot.log 2>&1
	[ -s report-deepcrash.png ] ||
	    atf_fail "chromium made no screenshot: $(tail -n 3 shot.log)"
	cp report-deepcrash.png "$HWTRACE_BUILD/report-deepcrash.png" 2>/dev/null || true
}

atf_test_case report_flame_matches_callgrind
report_flame_matches_callgrind_head()
{
	atf_set descr "the flame graph chromium draws gives work() the width of callgrind's inclusive count of it (within a pixel), and its share of the run within 2.5 points of callgrind's"
	atf_set timeout 300
}
report_flame_matches_callgrind_body()
{
	need_prog
	need_chromium
	require_tools valgrind
	command -v callgrind_annotate >/dev/null 2>&1 ||
	    atf_skip "callgrind_annotate is not installed"
	make_report
	load_page
	valgrind --tool=callgrind --callgrind-out-file=cg.out "$PROG" \
	    > /dev/null 2> cg.err
	callgrind_annotate --inclusive=yes --threshold=100 cg.out > cg.txt 2>&1 ||
	    atf_fail "callgrind_annotate failed: $(oneline cg.txt)"
	# "147,837 (79.54%)  /.../deepcrash.c:work.constprop.0 [...]"
	cg_work=$(awk '$0 ~ /:work(\.[a-z]+\.[0-9]+)* \[/ { gsub(",", "", $1); print $1; exit }' cg.txt)
	cg_total=$(awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }' cg.txt)
	[ -n "$cg_work" ] && [ -n "$cg_total" ] ||
	    atf_fail "no inclusive count of work in callgrind's profile: $(oneline cg.txt 2000)"
	# The drawn frames: <g ... width="W" name="NAME" class="frame"> and
	# the root's <title>all threads: N instructions ...</title>.
	python3 - > flame.txt <<'EOF' || atf_fail "cannot read the flame graph: $(cat flame.txt)"
import re, sys
dom = open("dom.html", encoding="utf-8").read()
flame = dom[dom.index('id="flame"'):dom.index('id="icicle"')]
frames = re.findall(r'<g [^>]*width="([0-9.]+)"[^>]*name="([^"]*)"[^>]*>\s*<rect[^>]*>\s*</rect>\s*<title>([^<]*)</title>', flame)
root = [f for f in frames if f[1] == "all threads"]
work = [f for f in frames if re.match(r"work(\.[a-z]+\.[0-9]+)*$", f[1])]
if len(root) != 1 or len(work) != 1:
    sys.exit("expected one root and one work frame, got %d and %d of %d frames" % (len(root), len(work), len(frames)))
total = int(re.search(r": ([0-9,]+) instructions", root[0][2]).group(1).replace(",", ""))
print(root[0][0], work[0][0], total)
EOF
	read -r wroot wwork total < flame.txt
	# work's width in instructions, against callgrind's; one pixel is
	# total / wroot instructions.
	awk -v wr="$wroot" -v ww="$wwork" -v t="$total" -v cw="$cg_work" -v ct="$cg_total" 'BEGIN {
		drawn = ww / wr * t; px = t / wr
		d = drawn - cw; if (d < 0) d = -d
		s = 100 * (ww / wr - cw / ct); if (s < 0) s = -s
		printf "drawn %.0f callgrind %d pixel %.0f share diff %.2f\n", drawn, cw, px, s
		exit !(d <= px + 1 && s <= 2.5)
	}' > cmp.txt ||
	    atf_fail "work's flame graph width: expected callgrind's inclusive count (within a pixel) and share (within 2.5 points): $(cat cmp.txt); widths root $wroot work $wwork, total $total, callgrind $cg_work of $cg_total"
}

atf_test_case report_marks_losses
report_marks_losses_head()
{
	atf_set descr "a ring capture of deepcrash loses the start of its trace by construction (a 4 KiB ring, about 10 KiB of trace): its page warns, lists the loss, marks the thread's frame of the flame graph and the timeline's first column; the stream capture's page has no such mark"
	atf_set timeout 300
}
report_marks_losses_body()
{
	need_prog
	need_chromium
	make_report
	load_page
	mv dom.html stream.html
	"$HWTRACE" capture --mode ring --buffer 4K -o ring.hwtrace -- "$PROG" \
	    > cap.out 2> cap.err
	[ $? -eq 139 ] || atf_fail "ring capture of deepcrash: expected exit 139, got: $(cat cap.err)"
	"$HWTRACE" info ring.hwtrace > info.out
	grep -q "lost" info.out || atf_fail "the ring capture records no loss: $(oneline info.out)"
	"$HWTRACE" report -o dc.html ring.hwtrace 2> rep.err ||
	    atf_fail "report of the ring capture failed: $(cat rep.err)"
	load_page
	grep -q '<div id="losses-verdict" class="warn">The trace lost data' dom.html ||
	    atf_fail "ring: expected the losses warning, got: $(grep -o '<div id="losses-verdict"[^<]*' dom.html)"
	cat_tables_py
	python3 tables.py losses > losses.tsv
	grep -q "^lost	1$" losses.tsv ||
	    atf_fail "ring: expected one 'lost' event in the losses table, got: $(oneline losses.tsv)"
	grep -q '<div id="flame-gaps" class="warn">The trace lost data in 1 place' dom.html ||
	    atf_fail "ring: expected the flame graph's mark of one loss, got: $(grep -o '<div id="flame-gaps"[^<]*' dom.html)"
	# The thread's frame (the loss is before its first instruction).
	grep -q '<g [^>]*name="thread 1 (tid [0-9]* deepcrash)"[^>]*><rect[^>]*fill="#b00020"[^>]*></rect><title>[^<]*the trace lost data here: lost (' dom.html ||
	    atf_fail "ring: expected the thread's flame graph frame in dark red with the loss in its title"
	grep -q '<rect x="0" y="0" [^>]*class="gap lost"' dom.html ||
	    atf_fail "ring: expected a loss mark at the timeline's first column"
	# The stream capture lost nothing.
	grep -q '<div id="losses-verdict" class="ok">' stream.html ||
	    atf_fail "stream: expected 'nothing lost', got: $(grep -o '<div id="losses-verdict"[^<]*' stream.html)"
	! grep -q 'fill="#b00020"\|class="gap lost"\|id="flame-gaps"' stream.html ||
	    atf_fail "stream: a loss is marked where the capture lost nothing"
}

atf_test_case report_debug_info
report_debug_info_head()
{
	atf_set descr "the page says which debug information was left out: a dynamic program captured with --debug-info=own shows the C library's as left out, with all as a stored debug file, and the program's own lines as in the image"
	atf_set timeout 300
}
report_debug_info_body()
{
	[ -x "$HWTRACE_PROGS/dynpie" ] || atf_skip "fixture programs not built"
	need_chromium
	require_tools python3
	cat_tables_py
	for m in all own; do
		"$HWTRACE" capture --debug-info=$m -o $m.hwtrace -- \
		    "$HWTRACE_PROGS/dynpie" > cap.out 2> cap.err ||
		    atf_fail "capture --debug-info=$m failed: $(cat cap.err)"
		"$HWTRACE" report -o dc.html $m.hwtrace 2> rep.err ||
		    atf_fail "report failed: $(cat rep.err)"
		load_page
		python3 tables.py images > $m.images
		[ -s $m.images ] || atf_fail "$m: the page has no images table"
	done
	"$HWTRACE" info all.hwtrace | grep -A1 ' /.*libc\.so\.6 (file' |
	    grep -q "debug file" ||
	    atf_skip "no separate debug file for the C library here (Debian's libc6-dbg)"
	grep -q "libc\.so\.6	.*	separate debug file stored$" all.images ||
	    atf_fail "all: expected libc.so.6's debug file stored, got: $(oneline all.images)"
	grep -q "libc\.so\.6	.*	left out or absent (a system library: capture --debug-info=own or none leaves it out)$" own.images ||
	    atf_fail "own: expected libc.so.6's debug info left out, got: $(oneline own.images)"
	grep -q "/dynpie	.*	in the image$" own.images ||
	    atf_fail "own: expected dynpie's lines in the image, got: $(oneline own.images)"
}

atf_test_case report_bounds
report_bounds_head()
{
	atf_set descr "--columns, --depth and --top bound what the page draws: deepcrash's timeline within 50 columns and 2 levels, hot tables of 5 rows, and no flame graph frame under the pruning bound the page states"
	atf_set timeout 300
}
report_bounds_body()
{
	need_prog
	need_chromium
	require_tools python3
	make_report
	"$HWTRACE" report --columns 50 --depth 2 --top 5 -o dc.html dc.hwtrace \
	    2> rep.err || atf_fail "report failed: $(cat rep.err)"
	load_page
	cat_tables_py
	python3 tables.py hot > hot.tsv
	[ "$(wc -l < hot.tsv)" -eq 6 ] ||
	    atf_fail "--top 5: expected a header and 5 rows of hot, got: $(oneline hot.tsv)"
	python3 - > bounds.txt <<'EOF' || atf_fail "bounds: $(cat bounds.txt)"
import json, re, sys
dom = open("dom.html", encoding="utf-8").read()
# The timeline's spans: 2 px a column, 16 px a level.
svg = re.findall(r'<svg [^>]*class="tl-row"[^>]*>(.*?)</svg>', dom, re.S)
spans = re.findall(r'<g class="span"[^>]*><rect x="([0-9.]+)" y="([0-9.]+)" width="([0-9.]+)"', svg[0]) if svg else []
if not spans:
    sys.exit("no timeline drawn")
for x, y, w in spans:
    if float(x) + float(w) > 100 or float(y) >= 32:
        sys.exit("a span outside 50 columns and 2 levels: x %s y %s width %s" % (x, y, w))
# The flame graph's data: no frame under the stated bound.
page = open("dc.html", encoding="utf-8").read()
data = json.loads(re.search(r'<script type="application/json" id="hwtrace-data">(.*?)</script>', page, re.S).group(1))
low, n = data["flame_min_insns"], 0
def walk(node, depth):
    global n
    n += 1
    if depth >= 2 and node["value"] < low:
        sys.exit("frame %s of %d instructions under the bound %d" % (node["name"], node["value"], low))
    for c in node["children"]:
        walk(c, depth + 1)
walk(data["flame"], 0)
if low <= 0 or n > 20000:
    sys.exit("bound %d, %d frames" % (low, n))
print("frames", n, "bound", low, "spans", len(spans))
EOF
}

atf_test_case report_usage
report_usage_head() { atf_set descr "report without -o or an input, or with a bad count, is a usage error (2); a missing input is an error (1) that names it and writes nothing"; }
report_usage_body()
{
	run_status 2 "$HWTRACE" report x.db
	grep -q "no output file" err || atf_fail "expected 'no output file' on stderr, got: $(cat err)"
	run_status 2 "$HWTRACE" report -o x.html
	grep -q "no archive or database" err || atf_fail "expected 'no archive or database', got: $(cat err)"
	run_status 2 "$HWTRACE" report --columns 0 -o x.html x.db
	grep -q "columns" err || atf_fail "expected a message about --columns, got: $(cat err)"
	run_status 1 "$HWTRACE" report -o x.html nosuch.db
	grep -q "nosuch.db" err || atf_fail "expected the message to name 'nosuch.db', got: $(cat err)"
	[ ! -e x.html ] || atf_fail "x.html was written for a missing input"
	run_status 0 "$HWTRACE" report --help
	grep -q "^usage: hwtrace report" out || atf_fail "expected a usage line in --help, got: $(head -n 3 out)"
}

atf_test_case report_sigterm_while_indexing
report_sigterm_while_indexing_head()
{
	atf_set descr "SIGTERM while report waits to index an archive (another process holds the index lock) ends it within seconds with exit 1 and 'interrupted', writing no page"
	atf_set require.progs "flock"
}
report_sigterm_while_indexing_body()
{
	need_prog
	"$HWTRACE" capture -o dc.hwtrace -- "$PROG" > cap.out 2> cap.err
	[ $? -eq 139 ] || atf_fail "capture of deepcrash: expected exit 139, got: $(cat cap.err)"
	term_while_locked dc.hwtrace.db.lock "a waiting report" \
	    "$HWTRACE" report -o dc.html dc.hwtrace
	[ ! -e dc.html ] || atf_fail "dc.html was written after SIGTERM"
}

# The hand-written database (fixture.sql, made by qmkdb) as fix.db, then
# changed by $1 (SQL) as a damaged or hostile one would be.
damaged_fixture()
{
	"$HWTRACE_BUILD/bench/qmkdb" fix.db "$HWTRACE_SRC/tests/query/fixture.sql" ||
	    atf_fail "cannot make the fixture database"
	sqlite3 fix.db "$1" || atf_fail "sqlite3 cannot change the database"
}

# The page's data (hwtrace-data) of $1, key $2, as JSON on stdout.
page_data()
{
	python3 - "$1" "$2" <<'EOF'
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<script type="application/json" id="hwtrace-data">(.*?)</script>', page, re.S)
print(json.dumps(json.loads(m.group(1)).get(sys.argv[2])) if m else "no data")
EOF
}

atf_test_case report_thread_insns_not_count
report_thread_insns_not_count_head()
{
	atf_set descr "a thread whose instructions are the text 'x' (a damaged or hostile database): the page says so where its timeline would be, no crash (found by make fuzz-db)"
	atf_set require.progs "sqlite3 python3"
}
report_thread_insns_not_count_body()
{
	damaged_fixture "UPDATE threads SET insns = 'x' WHERE id = 1"
	"$HWTRACE" report -o r.html fix.db 2> rep.err ||
	    atf_fail "expected the page, with the timeline's error: $(cat rep.err)"
	page_data r.html timeline_error > err.json
	grep -q "thread 1: its instructions 'x' are not a count" err.json ||
	    atf_fail "expected timeline_error naming thread 1 and 'x', got: $(cat err.json)"
}

atf_test_case report_event_insn_far
report_event_insn_far_head()
{
	atf_set descr "an event at instruction 2^63 - 1 of a thread of 25 (a damaged or hostile database) is drawn in the timeline's last column, 599 of 600, not at a column wrapped past 2^63 (found by make fuzz-db)"
	atf_set require.progs "sqlite3 python3"
}
report_event_insn_far_body()
{
	# fixture.sql: thread 1 runs 25 instructions; its trace is disabled
	# at the 25th, moved here to the largest int64.
	damaged_fixture "UPDATE events SET insn = 9223372036854775807 WHERE kind = 'disabled' AND thread = 1"
	"$HWTRACE" report -o r.html fix.db 2> rep.err ||
	    atf_fail "report failed: $(cat rep.err)"
	page_data r.html timeline > tl.json
	python3 - <<'EOF' || atf_fail "expected thread 1's gap [599, disabled], got: $(cat tl.json)"
import json, sys
tl = json.load(open("tl.json"))
t1 = [t for t in tl["threads"] if t["thread"] == 1]
sys.exit(0 if tl["columns"] == 600 and t1 and t1[0]["gaps"] == [[599, "disabled"]] else 1)
EOF
}

atf_test_case report_thread_insns_null
report_thread_insns_null_head()
{
	atf_set descr "a thread with calls whose instructions are NULL (a hostile database, NOT NULL taken out of its schema): the page is written, its flame graph counting the thread as 0 instructions (found by make fuzz-db)"
	atf_set require.progs "sqlite3 python3"
}
report_thread_insns_null_body()
{
	damaged_fixture "PRAGMA writable_schema = ON; UPDATE sqlite_master SET sql = replace(sql, ' NOT NULL', '') WHERE name = 'threads'; PRAGMA writable_schema = OFF"
	sqlite3 fix.db "UPDATE threads SET insns = NULL WHERE id = 1" ||
	    atf_fail "sqlite3 cannot change the database"
	"$HWTRACE" report -o r.html fix.db 2> rep.err ||
	    atf_fail "expected the page: $(cat rep.err)"
	page_data r.html flame > flame.json
	# fixture.sql: thread 2 runs 3 instructions, thread 1's are lost.
	python3 - <<'EOF' || atf_fail "expected a flame graph of 3 instructions, thread 1 of 0: $(cut -c1-300 flame.json)"
import json, sys
f = json.load(open("flame.json"))
t = {c["thread"]: c["value"] for c in f["children"]}
sys.exit(0 if f["value"] == 3 and t.get(1) == 0 and t.get(2) == 3 else 1)
EOF
}

atf_init_test_cases()
{
	atf_add_test_case report_crash_bt
	atf_add_test_case report_flame_matches_callgrind
	atf_add_test_case report_marks_losses
	atf_add_test_case report_debug_info
	atf_add_test_case report_bounds
	atf_add_test_case report_usage
	atf_add_test_case report_sigterm_while_indexing
	atf_add_test_case report_thread_insns_not_count
	atf_add_test_case report_event_insn_far
	atf_add_test_case report_thread_insns_null
}
