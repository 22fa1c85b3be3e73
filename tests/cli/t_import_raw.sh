#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# hwtrace import with ptxed's options.  The libipt test cases are imported
# with the exact options of their <t>-ptxed.cmd; what the archive holds is
# checked against the files themselves (wc, sha256sum) and, for ELF files,
# against readelf(1).

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

PTT=libipt-ptt

# The import options of a ptxed command line: --raw, --elf, --pt, --cpu,
# --mtc-freq, --nom-freq, --cpuid-0x15.*, --filter:*, --pevent:* with their
# arguments, and the --sb:* flags.
ptxed_import_opts()
{
	awk '{
		for (i = 2; i <= NF; i++) {
			if ($i ~ /^--(raw|elf|pt|cpu|mtc-freq|nom-freq|cpuid-0x15\.ea?b?x|filter:addr[0-3]_(cfg|a|b)|pevent:[a-z0-9-]+)$/) {
				printf "%s %s ", $i, $(i + 1); i++
			} else if ($i ~ /^--sb:/)
				printf "%s ", $i
		}
	}' "$1"
}

# ptxed_import WHAT DIR OUT: hwtrace import with the options $opts (of a
# ptxed command, ptxed_import_opts) run in DIR, where their files are,
# into OUT (a path from here; an earlier OUT is removed first); stdout and
# stderr in ./out and ./err; a failure names WHAT.
ptxed_import()
{
	rm -f "$3"
	pi_out=$(pwd)/$3
	( cd "$2" && "$HWTRACE" import $opts -o "$pi_out" ) > out 2> err ||
	    atf_fail "$1: 'hwtrace import $opts' failed: $(cat err)"
}

# ptxed_cmd CMD: of ptxed command file CMD, $dir (its directory, where its
# files are), $name (its file name), $exp (ptxed's expected output) and
# $opts (ptxed_import_opts).
ptxed_cmd()
{
	dir=$(dirname "$1")
	name=$(basename "$1")
	exp=${1%.cmd}.exp
	opts=$(ptxed_import_opts "$1")
}

# opt_of CMD OPTION: the values of OPTION in ptxed command file CMD.
opt_of()
{
	awk -v o="$2" '{ for (i = 1; i < NF; i++) if ($i == o) print $(i + 1) }' "$1"
}

# Import case $1 of libipt's tests with the options of its ptxed command $2
# (default $1-ptxed.cmd) and check the archive against its files.
check_ptt_case()
{
	t=$1
	dir=$HWTRACE_CORPUS/$PTT/$t
	cmd=$dir/${2:-$t-ptxed.cmd}
	[ -r "$cmd" ] || atf_fail "no $cmd"
	opts=$(ptxed_import_opts "$cmd")
	ptxed_import "$t" "$dir" "$t.hwtrace"
	run_status 0 "$HWTRACE" info "$t.hwtrace"
	mv out info
	pt=$(opt_of "$cmd" --pt)
	bytes=$(wc -c < "$dir/$pt")
	grep -Eq "^  stream [0-9]+ 'pt $pt': intel-pt, pid -1, tid -1, cpu -1, [0-9]+ chunks?, $bytes bytes$" info ||
	    atf_fail "$t: expected a stream of $bytes bytes from $pt; got: $(cat info)"
	# One mapping per --raw, at its address, of its range.
	nraw=0
	for raw in $(opt_of "$cmd" --raw); do
		nraw=$((nraw + 1))
		file=${raw%%:*}
		rest=${raw#*:}
		vaddr=${rest##*:}
		range=${rest%:*}
		size=$(wc -c < "$dir/$file")
		from=0
		to=$size
		if [ "$range" != "$rest" ]; then
			from=$((${range%-*}))
			case $range in *-*) to=$((${range#*-})) ;; esac
		fi
		key=sha256-$(sha256sum "$dir/$file" | cut -d' ' -f1)
		line=$(printf '  pid -1: 0x%x-0x%x pgoff 0x%x r-x %s [%s]' \
		    $((vaddr)) $((vaddr + to - from)) $from "$file" "$key")
		expect_line info "$line"
		expect_line info "  $key $file (memory, $size bytes)"
	done
	expect_line info "mappings: $nraw"
	cpu=$(opt_of "$cmd" --cpu)
	if [ -n "$cpu" ]; then
		f=${cpu%%/*}
		m=${cpu#*/}
		s=0
		case $m in */*) s=${m#*/}; m=${m%/*} ;; esac
		expect_line info "cpu: intel family $f model $m stepping $s"
	else
		expect_line info "cpu: unknown family 0 model 0 stepping 0"
	fi
	nom=$(opt_of "$cmd" --nom-freq)
	grep -q "^    pt: .*nom-freq ${nom:-0}," info ||
	    atf_fail "$t: expected nom-freq ${nom:-0}; got: $(cat info)"
	run_status 0 "$HWTRACE" verify "$t.hwtrace"
}

atf_test_case libipt_cases
libipt_cases_head()
{
	atf_set descr "libipt test cases imported with their ptxed options: streams, images, mappings, CPU and frequencies as the files and options say"
	atf_set require.progs "sha256sum"
}
libipt_cases_body()
{
	require_corpus $PTT
	# Plain, two --raw with a range, --cpu 0/0 (an unknown CPU must still
	# import: the decoder reports it), --cpu F/M, --nom-freq.
	for t in loop-tnt truncated bad_cpu ptxed-tick fup-tip_pgd_noip \
	    call_direct-ret_compressed; do
		check_ptt_case $t
	done
	check_ptt_case apl11 apl11-ptxed-cpu_6_122.cmd
}

atf_test_case libipt_all_cases
libipt_all_cases_head()
{
	atf_set descr "every libipt test case with a ptxed command imports and verifies"
}
libipt_all_cases_body()
{
	require_corpus $PTT
	set -- "$HWTRACE_CORPUS"/$PTT/*/*-ptxed*.cmd
	[ $# -ge 100 ] || atf_fail "expected at least 100 ptxed commands in the corpus, found $#"
	for cmd; do
		ptxed_cmd "$cmd"
		ptxed_import "$name" "$dir" x.hwtrace
		"$HWTRACE" verify x.hwtrace > out 2> err ||
		    atf_fail "$name: verify failed: $(cat err)"
	done
}

atf_test_case elf_bases
elf_bases_head()
{
	atf_set descr "--elf FILE[:BASE] maps PT_LOAD segments as ptxed does (lowest segment at BASE), checked against readelf"
	atf_set require.progs "readelf python3"
}
elf_bases_body()
{
	require_corpus lldb-intelpt/intelpt-trace-multi-file
	dir=$HWTRACE_CORPUS/lldb-intelpt/intelpt-trace-multi-file
	# The exact options of expected/multifile.ptxed.cmd.
	opts=$(ptxed_import_opts "$HWTRACE_CORPUS/lldb-intelpt/expected/multifile.ptxed.cmd")
	ptxed_import multifile.ptxed.cmd "$dir" m.hwtrace
	run_status 0 "$HWTRACE" info m.hwtrace
	mv out info
	expect_line info "cpu: intel family 6 model 79 stepping 1"
	expect_line info "images: 3"
	n=0
	for spec in a.out:0 libfoo.so:0x7ffff7bd9000 libbar.so:0x7ffff79d7000; do
		f=${spec%%:*}
		key=bid-$(readelf_build_id "$dir/$f")
		[ "$key" != bid- ] || atf_fail "readelf found no build-id in $f"
		expect_line info "  $key $f (file, $(wc -c < "$dir/$f") bytes)"
		expected_mappings "$dir/$f" "$f" "${spec#*:}" -1 "$key" > want
		expect_lines info want
		n=$((n + $(wc -l < want)))
	done
	expect_line info "mappings: $n"
	bytes=$(wc -c < "$dir/multi-file.trace")
	grep -Eq "^  stream [0-9]+ 'pt multi-file.trace': intel-pt, pid -1, tid -1, cpu -1, [0-9]+ chunks?, $bytes bytes$" info ||
	    atf_fail "expected a stream of $bytes bytes; got: $(cat info)"
}

atf_test_case filters
filters_head()
{
	atf_set descr "ptxed's --filter:addrN_cfg/_a/_b options are kept and decode libipt's skl014 cases as ptxed's expected output says, for every CPU they name"
	atf_set require.progs "sqlite3"
}
filters_body()
{
	require_corpus $PTT/skl014-call
	set -- "$HWTRACE_CORPUS"/$PTT/skl014-call/*-ptxed-*.cmd \
	    "$HWTRACE_CORPUS"/$PTT/skl014-jmp/*-ptxed-*.cmd
	[ $# -ge 2 ] || atf_fail "expected the skl014 ptxed commands, found $#"
	for cmd; do
		ptxed_cmd "$cmd"
		case $opts in *--filter:addr0_cfg*) ;; *) atf_fail "$cmd: no filter options" ;; esac
		rm -f x.db
		ptxed_import "$name" "$dir" x.hwtrace
		cfg=$(opt_of "$cmd" --filter:addr0_cfg)
		a=$(opt_of "$cmd" --filter:addr0_a)
		b=$(opt_of "$cmd" --filter:addr0_b)
		"$HWTRACE" info x.hwtrace > info
		expect_line info "    pt filter 0: cfg $cfg, $(printf '0x%x-0x%x' $((a)) $((b)))"
		"$HWTRACE" index -o x.db x.hwtrace > out 2> err ||
		    atf_fail "$name: index failed: $(cat err)"
		grep -q ", 0 decode errors" err out ||
		    atf_fail "$name: decode errors: $(cat err)"
		# ptxed's addresses in order, and whether it says [disabled].
		grep '^[0-9a-f]\{16\}$' "$exp" | sed 's/^0*//' > want
		sqlite3 x.db "select printf('%x', start_ip), ninsns from blocks order by id" |
		    awk -F'|' '$2 == 1 { print $1 } $2 != 1 { print "block of " $2 }' > got
		cmp -s want got || atf_fail "$name: addresses $(cat got) are not ptxed's $(cat want)"
		if grep -q '^\[disabled\]$' "$exp"; then
			[ "$(sqlite3 x.db "select count(*) from events where kind = 'disabled'")" -ge 1 ] ||
			    atf_fail "$name: ptxed says [disabled], the index has no such event"
		fi
	done
}

atf_test_case pevent
pevent_head()
{
	atf_set descr "ptxed's --pevent sideband options: every pevent case imports with its ptxed command's options, and its mmap, switch and comm records are those ptxed's expected output prints"
}
pevent_body()
{
	require_corpus $PTT/pevent-fork
	n=0
	for cmd in "$HWTRACE_CORPUS"/$PTT/pevent-*/*-ptxed*.cmd; do
		ptxed_cmd "$cmd"
		case $opts in *--pevent:primary*) ;; *) continue ;; esac
		ptxed_import "$name" "$dir" x.hwtrace
		"$HWTRACE" info x.hwtrace > info
		ks=$(opt_of "$cmd" --pevent:kernel-start)
		# ptxed: "PERF_RECORD_MMAP pid/tid, addr, len, pgoff, file".
		sed -n 's/.*PERF_RECORD_MMAP \([0-9]*\)\/[0-9]*, \([0-9a-f]*\), \([0-9a-f]*\), *\([0-9a-f]*\), \([^ ]*\) .*/\1 \2 \3 \4 \5/p' "$exp" |
		    sort -u > mm
		[ -s mm ] || continue
		while read -r pid addr len pgoff file; do
			a=$((0x$addr))
			# Unsigned: the kernel's addresses are negative in sh.
			if [ -n "$ks" ] && [ "$(python3 -c 'import sys; print(int(sys.argv[1], 16) >= int(sys.argv[2], 0))' "$addr" "$ks")" = True ]; then
				pid=-1
			fi
			line=$(printf '  pid %s: 0x%x-0x%x pgoff 0x%x r-x %s ' "$pid" $a $((a + 0x$len)) $((0x$pgoff)) "$file")
			grep -qF -- "$line" info ||
			    atf_fail "$name: no mapping '$line': $(grep pid info)"
		done < mm
		sw=$(grep -c 'PERF_RECORD_\(SWITCH\|ITRACE_START\)' "$exp")
		if [ "$sw" -gt 0 ]; then
			expect_line info "  switch: $sw"
		fi
		cm=$(grep -c 'PERF_RECORD_COMM' "$exp")
		if [ "$cm" -gt 0 ]; then
			expect_line info "  comm: $cm"
		fi
		n=$((n + 1))
	done
	[ $n -ge 5 ] || atf_fail "expected the pevent cases with printed sideband, found $n"
}

atf_test_case bad_inputs
bad_inputs_head()
{
	atf_set descr "missing or unusable input files: exit 1, a message naming the file, no output left behind"
}
bad_inputs_body()
{
	head -c 64 /dev/urandom > t.pt
	head -c 100 /dev/urandom > code.bin
	run_status 1 "$HWTRACE" import --pt missing.pt -o o.hwtrace
	expect_first err "hwtrace import: --pt 'missing.pt': No such file or directory"
	expect_no_output o.hwtrace
	run_status 1 "$HWTRACE" import --raw missing.bin:0x1000 --pt t.pt -o o.hwtrace
	grep -q "^hwtrace import: --raw 'missing.bin': .*No such file or directory" err ||
	    atf_fail "expected 'hwtrace import: --raw 'missing.bin': ...No such file or directory', got: $(cat err)"
	expect_no_output o.hwtrace
	run_status 1 "$HWTRACE" import --elf missing.so --pt t.pt -o o.hwtrace
	grep -q "^hwtrace import: --elf 'missing.so': .*No such file or directory" err ||
	    atf_fail "expected 'hwtrace import: --elf 'missing.so': ...No such file or directory', got: $(cat err)"
	expect_no_output o.hwtrace
	run_status 1 "$HWTRACE" import --elf code.bin --pt t.pt -o o.hwtrace
	grep -q "^hwtrace import: --elf 'code.bin': ." err ||
	    atf_fail "expected 'hwtrace import: --elf 'code.bin': why', got: $(cat err)"
	expect_no_output o.hwtrace
	run_status 1 "$HWTRACE" import --raw code.bin:0x10-0x200:0x1000 --pt t.pt -o o.hwtrace
	expect_first err "hwtrace import: --raw 'code.bin': range 0x10-0x200 is outside the file (100 bytes)"
	expect_no_output o.hwtrace
	run_status 1 "$HWTRACE" import --raw code.bin:0xffffffffffffffc0 --pt t.pt -o o.hwtrace
	expect_first err "hwtrace import: --raw 'code.bin': load address 0xffffffffffffffc0 plus size wraps around"
	expect_no_output o.hwtrace
	cp /bin/true true.elf
	run_status 1 "$HWTRACE" import --elf true.elf:0xfffffffffffff000 --pt t.pt -o o.hwtrace
	grep -q "^hwtrace import: --elf 'true.elf': base 0xfffffffffffff000 puts segment [0-9]* past the end of the address space$" err ||
	    atf_fail "expected the --elf base refused, got: $(cat err)"
	expect_no_output o.hwtrace
	run_status 1 "$HWTRACE" import --pt t.pt:64 -o o.hwtrace
	expect_first err "hwtrace import: --pt 't.pt': range 0x40-0x40 is outside the file (64 bytes)"
	expect_no_output o.hwtrace
	run_status 1 "$HWTRACE" import --pt . -o o.hwtrace
	expect_first err "hwtrace import: --pt '.': not a regular file"
	expect_no_output o.hwtrace
	run_status 1 "$HWTRACE" import --pt t.pt -o nodir/o.hwtrace
	grep -q "^hwtrace import: cannot write 'nodir/o.hwtrace': ." err ||
	    atf_fail "expected 'hwtrace import: cannot write 'nodir/o.hwtrace': why', got: $(cat err)"
	# A failed import leaves an existing output alone.
	echo keep > o.hwtrace
	run_status 1 "$HWTRACE" import --pt missing.pt -o o.hwtrace
	[ "$(cat o.hwtrace)" = keep ] || atf_fail "a failed import changed the existing o.hwtrace"
	! [ -e o.hwtrace.partial ] || atf_fail "a failed import left o.hwtrace.partial"
}

atf_test_case ranges_and_names
ranges_and_names_head()
{
	atf_set descr "FROM-TO ranges of --pt and --raw, and a ':' kept in file names"
	atf_set require.progs "sha256sum"
}
ranges_and_names_body()
{
	head -c 1000 /dev/urandom > t.pt
	head -c 100 /dev/urandom > 'a:b.bin'
	run_status 0 "$HWTRACE" import --pt t.pt:100-300 --raw 'a:b.bin:0x10-0x20:0x4000' -o r.hwtrace
	run_status 0 "$HWTRACE" info r.hwtrace
	key=sha256-$(sha256sum 'a:b.bin' | cut -d' ' -f1)
	expect_line out "  pid -1: 0x4000-0x4010 pgoff 0x10 r-x a:b.bin [$key]"
	grep -Eq "^  stream [0-9]+ 'pt t.pt': .*, 200 bytes$" out ||
	    atf_fail "expected a stream of 200 bytes; got: $(cat out)"
	run_status 0 "$HWTRACE" import --cpu auto --pt t.pt -o auto.hwtrace
	run_status 0 "$HWTRACE" info auto.hwtrace
	! grep -q "^cpu: unknown family 0" out || atf_fail "--cpu auto recorded no CPU: $(cat out)"
}

atf_init_test_cases()
{
	atf_add_test_case libipt_cases
	atf_add_test_case libipt_all_cases
	atf_add_test_case filters
	atf_add_test_case pevent
	atf_add_test_case elf_bases
	atf_add_test_case bad_inputs
	atf_add_test_case ranges_and_names
}
