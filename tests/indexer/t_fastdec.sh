#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# libipt as the referee of the fast Intel PT decoder on whole databases
# (issue 29 item 2): every trace is indexed twice, --decoder libipt and
# --decoder fast, and every table of the two databases, the calls virtual
# table included, must hold the same rows.  No row is left out: the
# fallback counts are in index's summary on stderr, not in the database.
# Traces: ixgen's generated ones (clean, several threads, damaged, cut
# into small segments), step and valgrind captures of the fixture
# programs and of conformance programs, valgrind captures of the bench's
# gzip and python3 made small, and the corpus: all 155 of libipt's test
# cases (those with a ptxed command, each CPU's of the errata ones, the
# ptdump ones with their code where they have some), the LLDB captures
# and a perf.data recording; the suite's own archives (the fuzzers' seed
# corpus), refused alike when they are refused.  The conformance matrix
# referees its cells' captures too (tests/conform/conform.sh).

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

GEN="$HWTRACE_BUILD/bench/ixgen"
PROG="$HWTRACE_PROGS/calls"

# dump DB OUT [TABLE]: the tables' names, then every table's rows (or
# TABLE's) as SQL literals after the table's name, sorted; one sqlite3
# run reads them all.
dump()
{
	sqlite3 -batch -noheader "$1" "SELECT 'SELECT ''=='', ' || \
	    quote(name) || ';' || char(10) || 'SELECT ' || quote(name) || \
	    ', * FROM \"' || name || '\";' FROM sqlite_master WHERE \
	    type = 'table' AND name LIKE '${3:-%}' ORDER BY name" >"$2.sql" ||
	    atf_fail "$1: cannot read its tables"
	sqlite3 -batch -noheader -bail \
	    -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" -cmd ".mode quote" \
	    "$1" <"$2.sql" >"$2.rows" ||
	    atf_fail "$1: cannot read its tables' rows"
	LC_ALL=C sort "$2.rows" >"$2"
	rm -f "$2.sql" "$2.rows"
}

# referee ARCHIVE [INDEX OPTIONS]: both databases, the same rows.  The
# fast run's summary is kept in ARCHIVE.fast.err; the number of segments
# in ARCHIVE.segs, of those handed to libipt in ARCHIVE.fb.
referee()
{
	a=$1
	shift
	"$HWTRACE" index -D libipt "$@" -o "$a.lib.db" "$a" 2>"$a.lib.err" ||
	    atf_fail "index -D libipt $a failed: $(tr '\n' '|' <"$a.lib.err")"
	"$HWTRACE" index -D fast "$@" -o "$a.fast.db" "$a" 2>"$a.fast.err" ||
	    atf_fail "index -D fast $a failed: $(tr '\n' '|' <"$a.fast.err")"
	# Byte for byte the same databases (the usual case) hold the same
	# rows; others are compared row by row.
	cmp -s "$a.lib.db" "$a.fast.db" || dump "$a.lib.db" "$a.lib.dump"
	cmp -s "$a.lib.db" "$a.fast.db" || dump "$a.fast.db" "$a.fast.dump"
	if ! cmp -s "$a.lib.db" "$a.fast.db" &&
	    ! cmp -s "$a.lib.dump" "$a.fast.dump"; then
		diff "$a.lib.dump" "$a.fast.dump" | head -8 >"$a.diff"
		# Collecting the differing cases (ptt): named at the end.
		if [ -n "${DIFFERING:-}" ]; then
			echo "$a: $(tr '\n' '|' <"$a.diff")" >>"$DIFFERING"
			return
		fi
		atf_fail "$a: the fast decoder's database differs from libipt's (< libipt, > fast): $(tr '\n' '|' <"$a.diff")"
	fi
	sed -n 's/.*, \([0-9]*\) segments;.*/\1/p' "$a.fast.err" >"$a.segs"
	sed -n 's/.*fast decoder: \([0-9]*\) segments .*/\1/p' \
	    "$a.fast.err" >"$a.fb"
	[ -s "$a.fb" ] || echo 0 >"$a.fb"
	echo "$a: $(cat "$a.fb") of $(cat "$a.segs") segments to libipt"
	rm -f "$a.lib.db" "$a.fast.db" "$a.lib.dump" "$a.fast.dump"
}

# fast_did ARCHIVE: the fast decoder decoded some segment itself, so that
# the comparison compared something.
fast_did()
{
	[ "$(cat "$1.fb")" -lt "$(cat "$1.segs")" ] ||
	    atf_fail "$1: every one of $(cat "$1.segs") segments went to libipt: $(tr '\n' '|' <"$1.fast.err")"
}

atf_test_case usage
usage_head()
{
	atf_set descr "--decoder takes fast or libipt; another name is a usage error (2)"
}
usage_body()
{
	run_status 2 "$HWTRACE" index -D bogus x.hwtrace
	grep -q "unknown decoder 'bogus'" err ||
	    atf_fail "expected \"unknown decoder 'bogus'\", got: $(cat err)"
	run_status 0 "$HWTRACE" index --help
	grep -q -- '--decoder NAME' out ||
	    atf_fail "--help does not list --decoder: $(cat out)"
}

atf_test_case default
default_head()
{
	atf_set descr "index without --decoder decodes Intel PT with fast: a segment fast hands to libipt (a decode error) is counted in the summary, as with -D fast, and not with -D libipt"
}
default_body()
{
	psb='\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\202'
	tsc='\031\002\000\000\000\000\000\000'
	psbend='\002\043'
	printf "$psb$tsc$psbend\002\377\377\377" >bad.pt
	"$HWTRACE" import --pt bad.pt -o bad.hwtrace >/dev/null 2>&1 ||
	    atf_fail "import bad.pt failed"
	"$HWTRACE" index -o d.db bad.hwtrace 2>d.err ||
	    atf_fail "index failed: $(cat d.err)"
	grep -q "fast decoder: 1 segments (30 bytes) decoded by libipt" d.err ||
	    atf_fail "the default decoder is not fast: $(tr '\n' '|' <d.err)"
	"$HWTRACE" index -D libipt -o l.db bad.hwtrace 2>l.err ||
	    atf_fail "index -D libipt failed: $(cat l.err)"
	! grep -q "fast decoder" l.err ||
	    atf_fail "-D libipt used fast: $(tr '\n' '|' <l.err)"
}

atf_test_case ixgen
ixgen_head()
{
	atf_set descr "ixgen traces (one and three threads, 4 KiB segments, -j 1 and 2): the same database from both decoders"
}
ixgen_body()
{
	need_gen
	"$GEN" -n 200000 -t 1 "$PROG" one.hwtrace || atf_fail "ixgen failed"
	"$GEN" -n 300000 -t 3 -s 7 "$PROG" three.hwtrace ||
	    atf_fail "ixgen failed"
	# ixgen ends a trace with a decode error: its segment goes to libipt.
	referee one.hwtrace -j 1
	HWTRACE_IX_SEGMENT=4096 referee one.hwtrace -j 1
	fast_did one.hwtrace
	referee three.hwtrace -j 2
	HWTRACE_IX_SEGMENT=4096 referee three.hwtrace -j 2
	fast_did three.hwtrace
	[ "$(cat three.hwtrace.segs)" -gt 10 ] ||
	    atf_fail "4 KiB segments: expected more than 10, got $(cat three.hwtrace.segs)"
}

atf_test_case ixgen_damaged
ixgen_damaged_head()
{
	atf_set descr "damaged ixgen traces (flipped bits, truncated, garbage, lost data): the same database from both decoders"
}
ixgen_damaged_body()
{
	need_gen
	for c in flip truncate garbage; do
		"$GEN" -n 300000 -t 2 -c $c "$PROG" $c.hwtrace ||
		    atf_fail "ixgen -c $c failed"
		HWTRACE_IX_SEGMENT=4096 referee $c.hwtrace -j 2
		fast_did $c.hwtrace
	done
	"$GEN" -n 300000 -t 2 -m "$PROG" m.hwtrace || atf_fail "ixgen -m failed"
	referee m.hwtrace -j 2
}

# capture SOURCE PROG: a capture of fixture PROG with SOURCE, refereed.
capture()
{
	[ -x "$HWTRACE_PROGS/$2" ] ||
	    atf_skip "fixture $HWTRACE_PROGS/$2 is not built"
	"$HWTRACE" capture --source "$1" -o "$1-$2.hwtrace" -- \
	    "$HWTRACE_PROGS/$2" >out 2>err
	[ -f "$1-$2.hwtrace" ] ||
	    atf_skip "$1 capture of $2 unavailable: $(tr '\n' '|' <err)"
	referee "$1-$2.hwtrace" -j 2
	HWTRACE_IX_SEGMENT=4096 referee "$1-$2.hwtrace" -j 2
	fast_did "$1-$2.hwtrace"
}

atf_test_case step
step_head()
{
	atf_set descr "step captures of fixture programs (calls, threads, dynpie, except, dlopen): the same database from both decoders"
}
step_body()
{
	for p in calls threads dynpie except dlopen; do
		capture step $p
	done
}

atf_test_case signal
signal_head()
{
	atf_set descr "a step capture of the fixture signal, whose handlers stop and resume tracing (FUP and TIP.PGD, TSC and TIP.PGE): the events' offsets are libipt's"
}
signal_body()
{
	capture step signal
	# The case is that of a disable the FUP before its TIP.PGD starts.
	"$HWTRACE" index -D libipt -o sig.db step-signal.hwtrace 2>err ||
	    atf_fail "index failed: $(cat err)"
	n=$(sqlite3 -batch -noheader sig.db "SELECT count(*) FROM events \
	    WHERE kind = 'async-disabled'")
	[ "$n" -gt 0 ] || atf_fail "no async-disabled event in the capture"
}

atf_test_case psb_after_pge
psb_after_pge_head()
{
	atf_set descr "a TIP.PGE, then a PSB+ with one status event (MODE.exec) before the block's TIP: the enabled event's offset is past the PSBEND, as libipt's fetch of that status event reads on past it"
}
psb_after_pge_body()
{
	psb='\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\202'
	psbend='\002\043'
	mode='\231\001'			# MODE.exec, 64-bit
	fup='\175\000\020\000\000\000\000'	# FUP 0x1000
	fup1='\175\001\020\000\000\000\000'	# FUP 0x1001
	tsc='\031\002\000\000\000\000\000\000'
	tsc3='\031\003\000\000\000\000\000\000'
	pgd='\001'				# TIP.PGD, no IP
	pge='\161\000\020\000\000\000\000'	# TIP.PGE 0x1000
	tip='\155\000\020\000\000\000\000'	# TIP 0x1000
	# At 0x1000: nop, nop, ret.  The PSBEND is at offset 76, the TIP
	# after it at 78.
	printf '\220\220\303' >code.bin
	printf "$psb$mode$fup$psbend$pgd$tsc$pge$psb$tsc3$mode$fup1$psbend" >a.pt
	printf "$tip$pgd" >>a.pt
	"$HWTRACE" import --raw code.bin:0x1000 --pt a.pt -o a.hwtrace \
	    >/dev/null 2>err || atf_fail "import a.pt: $(cat err)"
	"$HWTRACE" index -D libipt -o l.db a.hwtrace 2>err ||
	    atf_fail "index failed: $(cat err)"
	# The case is that of libipt's enabled event past the PSBEND.
	off=$(sqlite3 -batch -noheader l.db "SELECT offset FROM events \
	    WHERE kind = 'enabled'")
	[ "$off" = 78 ] ||
	    atf_fail "libipt's enabled event at '$off', expected 78"
	referee a.hwtrace -j 1
	[ "$(cat a.hwtrace.fb)" -eq 0 ] ||
	    atf_fail "the fast decoder gave the segment to libipt"
}

atf_test_case valgrind
valgrind_head()
{
	atf_set descr "valgrind captures of fixture programs (calls, threads, dynpie): the same database from both decoders"
	atf_set timeout 600
}
valgrind_body()
{
	need_valgrind
	for p in calls threads dynpie; do
		capture valgrind $p
	done
}

atf_test_case conform
conform_head()
{
	atf_set descr "step captures of the conformance programs loop.c, crash.c and inl.c, built at -O0 and -O2: the same database from both decoders"
}
conform_body()
{
	require_tools cc
	for s in loop crash inl; do
		for o in 0 2; do
			cc -g -O$o -o $s$o "$HWTRACE_SRC/tests/conform/$s.c" \
			    2>cc.err || atf_fail "cc $s.c: $(cat cc.err)"
			"$HWTRACE" capture --source step -o $s$o.hwtrace -- \
			    ./$s$o >out 2>err
			[ -f $s$o.hwtrace ] ||
			    atf_skip "step capture unavailable: $(tr '\n' '|' <err)"
			HWTRACE_IX_SEGMENT=4096 referee $s$o.hwtrace -j 2
		done
	done
}

atf_test_case bench
bench_head()
{
	atf_set descr "valgrind captures of the bench's programs made small, gzip -6 of 28 KiB of text and a python3 loop: the same database from both decoders"
	atf_set timeout 600
}
bench_body()
{
	need_valgrind
	require_tools gzip seq
	seq 1 6000 >in.txt
	"$HWTRACE" capture --source valgrind -o gzip.hwtrace -- \
	    gzip -6 -c in.txt >out 2>err
	[ -f gzip.hwtrace ] ||
	    atf_fail "valgrind capture of gzip failed: $(tr '\n' '|' <err)"
	referee gzip.hwtrace -j 2
	HWTRACE_IX_SEGMENT=4096 referee gzip.hwtrace -j 2
	fast_did gzip.hwtrace
	# The interpreter itself, as the bench runs it (not a wrapper).
	[ -x /usr/bin/python3 ] || atf_skip "/usr/bin/python3 is not installed"
	"$HWTRACE" capture --source valgrind -o py.hwtrace -- /usr/bin/python3 \
	    -c 's = 0
for i in range(2000): s += i * i
print(s)' >out 2>err
	[ -f py.hwtrace ] ||
	    atf_fail "valgrind capture of python3 failed: $(tr '\n' '|' <err)"
	referee py.hwtrace -j 2
	fast_did py.hwtrace
}

# ptt_opts CMD: the options of the ptxed or ptdump command in file CMD
# that import takes, with their arguments (ptdump's --raw is a flag of
# its own: left out).
ptt_opts()
{
	awk '{
		for (i = 2; i <= NF; i++)
			if ($i ~ /^--(raw|pt|cpu|mtc-freq|nom-freq|cpuid-0x15\.e[ab]x|filter:addr[0-3]_(cfg|a|b)|pevent:[a-z0-9-]+)$/) {
				if ($1 != "ptdump" || $i != "--raw")
					printf "%s %s ", $i, $(i + 1)
				i++
			}
	}' "$1"
}

# The libipt-ptt cases known to differ still (issue 29): none.  A case
# named here is said in ptt.log when it differs; any other case differing
# fails.
PTT_KNOWN=""

atf_test_case ptt
ptt_head()
{
	atf_set descr "libipt's test cases with their code (import --raw with the options of their ptxed command): the same database from both decoders, the pevent cases (images changing with the sideband's time) included"
}
ptt_body()
{
	dir="$HWTRACE_CORPUS/libipt-ptt"
	[ -d "$dir" ] || atf_skip "corpus not found at $dir"
	n=0
	for c in "$dir"/*/; do
		c=${c%/}
		t=${c##*/}
		[ -f "$c/$t-ptxed.cmd" ] || continue
		opts=$(ptt_opts "$c/$t-ptxed.cmd")
		case "$opts" in *--raw*) ;; *) continue ;; esac
		(cd "$c" && "$HWTRACE" import $opts -o "$OLDPWD/$t.hwtrace") \
		    >/dev/null 2>&1 || continue
		case " $(echo $PTT_KNOWN) " in
		*" $t "*) DIFFERING=known ;;
		*) DIFFERING=differ ;;
		esac
		DIFFERING=$DIFFERING referee "$t.hwtrace" -j 1 >>ptt.log
		rm -f "$t.hwtrace"*
		n=$((n + 1))
	done
	[ "$n" -gt 100 ] || atf_fail "expected more than 100 cases imported, got $n"
	[ ! -s differ ] ||
	    atf_fail "$(wc -l <differ) of $n cases differ: $(cut -c1-300 differ | tr '\n' '#')"
	echo "$(cat known 2>/dev/null | wc -l) of $n cases differ as known" >>ptt.log
}

atf_test_case ptt_cpu
ptt_cpu_head()
{
	atf_set descr "libipt's test cases of errata, one ptxed command per CPU: each CPU's the same database from both decoders"
}
ptt_cpu_body()
{
	dir="$HWTRACE_CORPUS/libipt-ptt"
	[ -d "$dir" ] || atf_skip "corpus not found at $dir"
	n=0
	for f in "$dir"/*/*-ptxed-cpu_*.cmd; do
		[ -f "$f" ] || continue
		c=${f%/*}
		t=${c##*/}
		v=${f##*-ptxed-}
		v=$t-${v%.cmd}
		(cd "$c" && "$HWTRACE" import $(ptt_opts "$f") \
		    -o "$OLDPWD/$v.hwtrace") >/dev/null 2>err ||
		    atf_fail "import $v failed: $(tr '\n' '|' <err)"
		referee $v.hwtrace -j 1 >>ptt.log
		rm -f $v.*
		n=$((n + 1))
	done
	[ "$n" -ge 150 ] || atf_fail "expected 150 CPUs' cases or more, got $n"
}

atf_test_case ptt_dump
ptt_dump_head()
{
	atf_set descr "libipt's test cases made for ptdump (timing, sideband, packets), with their code where they have some: the same database from both decoders"
}
ptt_dump_body()
{
	dir="$HWTRACE_CORPUS/libipt-ptt"
	[ -d "$dir" ] || atf_skip "corpus not found at $dir"
	n=0
	for c in "$dir"/*/; do
		c=${c%/}
		t=${c##*/}
		# Only those without a ptxed command (the ptt case's).
		for f in "$c/$t"-ptxed*.cmd; do
			[ -f "$f" ] && continue 2
		done
		org=$(awk '$1 == "org" { print $2; exit }' "$c/$t.ptt")
		for f in "$c/$t"-ptdump*.cmd; do
			[ -f "$f" ] || continue
			v=${f##*/}
			v=${v%.cmd}
			raw=
			[ -s "$c/$t.bin" ] && raw="--raw $t.bin:$org"
			(cd "$c" && "$HWTRACE" import $raw $(ptt_opts "$f") \
			    --pt "$t.pt" -o "$OLDPWD/$v.hwtrace") >/dev/null \
			    2>err || atf_fail "import $v failed: $(tr '\n' '|' <err)"
			referee $v.hwtrace -j 1 >>ptt.log
			rm -f $v.*
			n=$((n + 1))
		done
	done
	[ "$n" -ge 40 ] || atf_fail "expected 40 cases or more, got $n"
}

atf_test_case sync_eos
sync_eos_head()
{
	atf_set descr "a PSB+ and nothing after it that decides anything (a TSC, a PAD, a PSB+ again): no time, as libipt's sync fails at the end"
}
sync_eos_body()
{
	psb='\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\202'
	tsc='\031\002\000\000\000\000\000\000'
	psbend='\002\043'
	printf "$psb$tsc$psbend" >a.pt
	printf "$psb$tsc$psbend\000" >pad.pt
	printf "$psb$tsc$psbend$tsc" >tsc.pt
	printf "$psb$tsc$psbend$psb$tsc$psbend" >psb.pt
	for t in a pad tsc psb; do
		"$HWTRACE" import --pt $t.pt -o $t.hwtrace >/dev/null 2>err ||
		    atf_fail "import $t.pt: $(cat err)"
		referee $t.hwtrace -j 1
		[ "$(cat $t.hwtrace.fb)" -eq 0 ] ||
		    atf_fail "$t: the fast decoder gave the segment to libipt"
	done
}

# t.pt and t.bin with timing_trace's clock, indexed by both decoders:
# the same database, and fpt hands nothing to libipt.
timed_referee()
{
	"$HWTRACE" import --pt t.pt --raw t.bin:0x1000 --mtc-freq 3 \
	    --nom-freq 8 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 100 \
	    -o t.hwtrace >/dev/null 2>err ||
	    atf_fail "import failed: $(tr '\n' '|' <err)"
	referee t.hwtrace -j 1
	[ "$(cat t.hwtrace.fb)" -eq 0 ] ||
	    atf_fail "expected the fast decoder to decode it, got: $(tr '\n' '|' <t.hwtrace.fast.err)"
}

# timing_trace: t.pt, the trace of a loop calling a function over
# t.bin (call f; jnz back; jmp rax; f: ret, at 0x1000) with MTC, CYC,
# TMA, CBR and TSC packets between its TNT bits and TIPs, in and out of
# PSB+: each call's entry and exit get a time in the database.  Two
# TNTs with timing packets after each (libipt's time is that of the
# first until the second is decoded), timing before a TIP and a
# TIP.PGD, MTCs wrapping, a CBR (calibrating again) and a TSC (MTCs
# passed over until the TMA) outside PSB+, a PSB+ with CYC and MTC.
timing_trace()
{
	psb='\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\202'
	tsc1='\031\000\000\020\000\000\000\000'
	tsc2='\031\000\100\020\000\000\000\000'
	tsc3='\031\000\200\020\000\000\000\000'
	tma1='\002\163\002\001\000\005\000'
	tma2='\002\163\377\007\000\020\000'
	mode='\231\001'
	fup='\175\000\020\000\000\000\000'
	psbend='\002\043'
	T='\006' N='\004' TT='\016' TN='\014'
	tip='\055\000\020' pge='\061\000\020' pgd='\001'
	# cbr R, cyc N (N < 32), cycx N (N < 4096), mtc CTC
	cbr() { printf '\\002\\003\\%03o\\000' "$1"; }
	cyc() { printf '\\%03o' $((($1 << 3) | 3)); }
	cycx() { printf '\\%03o\\%03o' $(((($1 & 31) << 3) | 7)) \
	    $((($1 >> 5) << 1)); }
	mtc() { printf '\\131\\%03o' "$1"; }
	a="$(mtc 1)$TT$(cyc 5)$T$(cyc 7)$(mtc 2)$T$(cyc 3)$TT$T$(cyc 2)$N"
	a="$a$(cyc 4)$tip$(cyc 9)$TT$(mtc 3)$(cyc 4)$(cyc 1)$T$T$TN$tip$TT"
	a="$a$(cyc 6)$T$(cyc 1)$T$(cyc 2)$T$(cyc 3)$N$(mtc 4)$pgd"
	b="$psb$tsc2$tma2$(cyc 3)$(mtc 9)$mode$psbend$(mtc 10)$pge"
	b="$b$(cycx 300)$TT$(mtc 250)$T$(cyc 8)$(mtc 3)$T$(cbr 24)$(cyc 12)"
	b="$b$TT$tsc3$(mtc 4)$(cyc 2)$T$tma1$(mtc 5)$T$(cycx 100)$TT$TN"
	b="$b$(cyc 1)$pgd"
	printf "$psb$tsc1$tma1$(cbr 32)$mode$fup$psbend$a$b" >t.pt
	printf '\350\004\000\000\000\165\371\377\340\303' >t.bin
}

atf_test_case timing
timing_head()
{
	atf_set descr "MTC, CYC, TMA and CBR timing (libipt's estimate of the time at each call) decoded by the fast decoder itself, the same database as libipt's"
}
timing_body()
{
	timing_trace
	timed_referee
	# The calls have times that change (the estimate is used).
	"$HWTRACE" index -D libipt -o c.db t.hwtrace 2>/dev/null ||
	    atf_fail "index -D libipt failed"
	n=$(sqlite3 -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" c.db \
	    "SELECT count(DISTINCT entry_tsc) FROM calls" 2>/dev/null) || n=0
	[ "${n:-0}" -ge 10 ] ||
	    atf_fail "expected 10 call times or more, got '$n'"
}

atf_test_case run_time
run_time_head()
{
	atf_set descr "a time read with the TNT packet whose first bit ends a block, its other bits taken by memoized runs at once: the time written before the runs' blocks, as libipt gives it"
}
run_time_body()
{
	# timing_trace's loop: the call's block ends at its compressed
	# return, the jnz's at a TNT bit.  5 bits, then twice 6 bits
	# after each MTC: the first of each pair read (the time changes)
	# for a jnz's block, its 5 others over the loop in runs.
	psb='\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\202'
	tsc1='\031\000\000\020\000\000\000\000'
	tma1='\002\163\002\001\000\005\000'
	cbr='\002\003\040\000' mode='\231\001' psbend='\002\043'
	fup='\175\000\020\000\000\000\000'
	T5='\176' T6='\376' N='\004' pgd='\001'
	a=$T5
	i=1
	while [ $i -le 40 ]; do
		a="$a$(printf '\\131\\%03o' $i)$T6$T6"
		i=$((i + 1))
	done
	printf "$psb$tsc1$tma1$cbr$mode$fup$psbend$a$N$pgd" >t.pt
	printf '\350\004\000\000\000\165\371\377\340\303' >t.bin
	timed_referee
}

atf_test_case no_psb
no_psb_head()
{
	atf_set descr "a trace without a PSB (padding only): nothing decoded and every byte counted as not decoded, as libipt never syncs"
}
no_psb_body()
{
	head -c 65536 /dev/zero >z.pt
	"$HWTRACE" import --pt z.pt -o z.hwtrace >/dev/null 2>err ||
	    atf_fail "import z.pt: $(cat err)"
	referee z.hwtrace -j 1
	[ "$(cat z.hwtrace.fb)" -eq 0 ] ||
	    atf_fail "the fast decoder gave the segment to libipt"
	grep -q "(65536 of 65536 bytes not decoded)" z.hwtrace.fast.err ||
	    atf_fail "fast: $(tr '\n' '|' <z.hwtrace.fast.err)"
}

atf_test_case fixtures
fixtures_head()
{
	atf_set descr "the suite's own archives (tests/fuzz/corpus): the same database from both decoders, or the same refusal"
}
fixtures_body()
{
	n=0
	for f in "$HWTRACE_SRC"/tests/fuzz/corpus/*.hwtrace; do
		[ -f "$f" ] || continue
		a=${f##*/}
		cp "$f" "$a"
		n=$((n + 1))
		if "$HWTRACE" index -D libipt -o l.db "$a" >/dev/null 2>l.err
		then
			referee "$a" -j 2 >>fixtures.log
			continue
		fi
		# Refused: by fast too, with the same words.
		if "$HWTRACE" index -D fast -o f.db "$a" >/dev/null 2>f.err; then
			atf_fail "$a: libipt's index failed ($(cat l.err)), fast's did not"
		fi
		sed 's/l\.db/X/g' l.err >l.msg
		sed 's/f\.db/X/g' f.err >f.msg
		cmp -s l.msg f.msg ||
		    atf_fail "$a: refused in other words: libipt '$(cat l.msg)', fast '$(cat f.msg)'"
		rm -f l.db f.db
	done
	[ "$n" -ge 100 ] || atf_fail "expected 100 archives or more, got $n"
}

atf_test_case lldb
lldb_head()
{
	atf_set descr "the LLDB corpus captures: the same database from both decoders, the one without decode errors decoded by fast"
}
lldb_body()
{
	dir="$HWTRACE_CORPUS/lldb-intelpt"
	[ -d "$dir" ] || atf_skip "corpus not found at $dir"
	# One thread in one image; one thread across three images.
	printf '%s\n' "intelpt-trace/trace.json one" \
	    "intelpt-trace-multi-file/multi-file-no-ld.json multi" >bundles
	while read -r bundle name; do
		"$HWTRACE" import --lldb -o $name.hwtrace "$dir/$bundle" \
		    2>$name.ierr ||
		    atf_fail "import $bundle failed: $(tr '\n' '|' <$name.ierr)"
		referee $name.hwtrace -j 2
		HWTRACE_IX_SEGMENT=4096 referee $name.hwtrace -j 2
	done <bundles
	# MODE.TSX in its PSB+: decoded by fast.  The other bundle has a
	# decode error (code not in the bundle), whose segment goes to
	# libipt for its wording.
	fast_did one.hwtrace
}

atf_test_case perf
perf_head()
{
	atf_set descr "the corpus's Intel PT perf.data recording: the same database from both decoders"
}
perf_body()
{
	f="$HWTRACE_CORPUS/perf-data/intel_pt/perf.data.intel_pt-4.14"
	[ -f "$f" ] || atf_skip "corpus not found at $f"
	"$HWTRACE" import "$f" -o p.hwtrace >/dev/null 2>err ||
	    atf_fail "import $f failed: $(tr '\n' '|' <err)"
	referee p.hwtrace -j 2
	HWTRACE_IX_SEGMENT=4096 referee p.hwtrace -j 2
}

atf_init_test_cases()
{
	atf_add_test_case usage
	atf_add_test_case default
	atf_add_test_case ixgen
	atf_add_test_case ixgen_damaged
	atf_add_test_case step
	atf_add_test_case signal
	atf_add_test_case psb_after_pge
	atf_add_test_case valgrind
	atf_add_test_case conform
	atf_add_test_case bench
	atf_add_test_case ptt
	atf_add_test_case ptt_cpu
	atf_add_test_case ptt_dump
	atf_add_test_case sync_eos
	atf_add_test_case timing
	atf_add_test_case run_time
	atf_add_test_case no_psb
	atf_add_test_case fixtures
	atf_add_test_case lldb
	atf_add_test_case perf
}
