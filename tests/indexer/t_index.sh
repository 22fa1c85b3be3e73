#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# hwtrace index from the command line: usage, the output name and its
# atomic rename, -j giving the same database, damaged input that never
# stops or hangs the indexer, and the LLDB Intel PT captures against
# ptxed's output.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

EXT="$HWTRACE_BUILD/hwtrace_sqlite"
GEN="$HWTRACE_BUILD/bench/ixgen"
PROG="$HWTRACE_PROGS/calls"

# calls is a virtual table: plain sqlite3 reads it with the extension.
q()
{
	sqlite3 -batch -noheader -cmd ".load $HWTRACE_BUILD/hwtrace_sqlite" "$@"
}

atf_test_case usage_errors
usage_errors_head()
{
	atf_set descr "unknown options, bad numbers and missing operands are usage errors (2); --help exits 0"
}
usage_errors_body()
{
	run_status 0 "$HWTRACE" index --help
	grep -q '^usage: hwtrace index \[-q\] \[-D NAME\] \[-j N\] \[-o DB\] FILE$' out ||
	    atf_fail "--help: unexpected synopsis: $(head -1 out)"
	run_status 2 "$HWTRACE" index
	run_status 2 "$HWTRACE" index --bogus x.hwtrace
	run_status 2 "$HWTRACE" index -j abc x.hwtrace
	run_status 2 "$HWTRACE" index -j 0 x.hwtrace
	run_status 2 "$HWTRACE" index a.hwtrace b.hwtrace
	run_status 1 "$HWTRACE" index -o x.db does-not-exist.hwtrace
	grep -q "^hwtrace index: cannot open 'does-not-exist.hwtrace'" err ||
	    atf_fail "expected 'cannot open', got: $(cat err)"
	[ ! -e x.db ] && [ -z "$(ls x.db.partial* 2>/dev/null)" ] ||
	    atf_fail "a failed run left a database behind"
}

atf_test_case default_name_and_tables
default_name_and_tables_head()
{
	atf_set descr "FILE.hwtrace gives FILE.db with every table filled and symbols from the ELF"
}
default_name_and_tables_body()
{
	ixgen_archive t.hwtrace -n 200000 -t 1
	run_status 0 "$HWTRACE" index -q t.hwtrace
	[ -f t.db ] || atf_fail "t.db not written"
	[ -z "$(ls t.db.partial* 2>/dev/null)" ] ||
	    atf_fail "$(ls t.db.partial*) left behind"
	[ "$(q t.db "SELECT value FROM meta WHERE key = 'schema_version'")" = 8 ] ||
	    atf_fail "schema_version is not 8"
	for t in streams threads images mappings symbols blocks block_counts \
	    exec_chunks branches calls timestamps; do
		expect_some t.db "SELECT count(*) FROM $t" "table $t is empty"
	done
	# Cycle counts are CoreSight's: libipt's block decoder folds CYC
	# packets into its time, so an Intel PT index has none.
	n=$(q t.db "SELECT count(*) FROM cycles")
	[ "$n" = 0 ] || atf_fail "Intel PT: expected an empty cycles table, got $n rows"
	# Block ids are run lengths that add up: sum of block counts times
	# instructions equals the thread's instructions.
	a=$(q t.db "SELECT sum(c.count * b.ninsns) FROM block_counts c JOIN blocks b ON b.id = c.block")
	b=$(q t.db "SELECT insns FROM threads WHERE id = 1")
	[ "$a" = "$b" ] || atf_fail "block counts give $a instructions, threads.insns says $b"
	# The expanded order has as many rows as threads.blocks says.
	a=$(q t.db ".load $EXT" "SELECT count(*) FROM exec_order WHERE thread = 1")
	b=$(q t.db "SELECT blocks FROM threads WHERE id = 1")
	[ "$a" = "$b" ] || atf_fail "exec_order has $a rows, threads.blocks says $b"
	# Instruction addresses agree with the block table and the ELF: every
	# block's symbol contains its start.
	n=$(q t.db "SELECT count(*) FROM blocks b JOIN symbols s ON s.id = b.symbol WHERE b.image_addr < s.addr OR b.image_addr >= s.addr + s.size")
	[ "$n" = 0 ] || atf_fail "$n blocks lie outside their symbol"
	# The walk may wander into padding between functions, rarely.
	n=$(q t.db "SELECT sum(exec_count) * 100 > (SELECT sum(exec_count) FROM blocks) FROM blocks WHERE symbol IS NULL")
	[ "$n" != 1 ] || atf_fail "more than 1% of executed blocks have no symbol"
	q t.db "SELECT count(*) FROM symbols WHERE name = 'main'" | grep -qx 1 ||
	    atf_fail "no symbol 'main'"
}

atf_test_case jobs_give_identical_databases
jobs_give_identical_databases_head()
{
	atf_set descr "-j 1, -j 2 and -j 3 write the same database (sqlite3 .dump and bytes)"
}
jobs_give_identical_databases_body()
{
	ixgen_archive t.hwtrace -n 300000 -t 3
	for j in 1 2 3; do
		run_status 0 "$HWTRACE" index -q -j $j -o j$j.db t.hwtrace
		q j$j.db .dump > j$j.sql
	done
	cmp -s j1.sql j2.sql || atf_fail "-j 1 and -j 2 dumps differ: $(diff j1.sql j2.sql | head -5)"
	cmp -s j1.sql j3.sql || atf_fail "-j 1 and -j 3 dumps differ: $(diff j1.sql j3.sql | head -5)"
	cmp -s j1.db j2.db || atf_fail "-j 1 and -j 2 database files differ"
	[ "$(q j1.db 'SELECT count(*) FROM threads WHERE blocks > 0')" = 3 ] ||
	    atf_fail "expected 3 decoded threads"
}

atf_test_case page_sizes_give_same_rows
page_sizes_give_same_rows_head()
{
	atf_set descr "a database of 64 KiB pages (HWTRACE_IX_PAGE_SIZE) holds the same rows as one of 4 KiB, the default for a small archive"
}
page_sizes_give_same_rows_body()
{
	ixgen_archive t.hwtrace -n 300000 -t 3
	run_status 0 "$HWTRACE" index -q -o small.db t.hwtrace
	run_status 0 env HWTRACE_IX_PAGE_SIZE=65536 "$HWTRACE" index -q \
	    -o big.db t.hwtrace
	[ "$(q small.db 'PRAGMA page_size')" = 4096 ] ||
	    atf_fail "a small archive's database has $(q small.db 'PRAGMA page_size')-byte pages"
	[ "$(q big.db 'PRAGMA page_size')" = 65536 ] ||
	    atf_fail "HWTRACE_IX_PAGE_SIZE=65536 gave $(q big.db 'PRAGMA page_size')-byte pages"
	q small.db .dump > small.sql
	q big.db .dump > big.sql
	[ -s small.sql ] || atf_fail "empty dump"
	cmp -s small.sql big.sql ||
	    atf_fail "the dumps differ: $(diff small.sql big.sql | head -5)"
	# Queries read both alike (calls is the virtual table over pages).
	for v in summary hot "calls --thread 1" "tree --depth 2" bt; do
		"$HWTRACE" query small.db $v > s.out 2>&1
		"$HWTRACE" query big.db $v > b.out 2>&1
		cmp -s s.out b.out || atf_fail "query $v differs: $(diff s.out b.out | head -5)"
	done
}

# nothing_left DB: no DB, no DB.partial.*, no image copies in $TMPDIR.
nothing_left()
{
	[ ! -e "$1" ] && [ -z "$(ls "$1".partial.* 2>/dev/null)" ] ||
	    atf_fail "a failed run left $(ls "$1"*) behind"
	[ -z "$(ls tmp)" ] || atf_fail "a failed run left $(ls tmp) in TMPDIR"
}

atf_test_case failures_while_decoding
failures_while_decoding_head()
{
	atf_set descr "-j 2, the workers decoding from the start: a database that cannot be created, a full disk, SIGINT give exit 1, the error, and leave nothing behind"
	atf_set timeout 300
}
failures_while_decoding_body()
{
	ixgen_archive t.hwtrace -n 300000 -t 3
	ixgen_archive big.hwtrace -n 2000000 -t 2
	mkdir tmp
	# The indexer takes a TMPDIR of fewer than 40 bytes only.
	[ ${#PWD} -lt 36 ] || atf_skip "work directory '$PWD' too long for TMPDIR"
	TMPDIR=$PWD/tmp
	HWTRACE_IX_SEGMENT=4096
	export TMPDIR HWTRACE_IX_SEGMENT

	run_status 1 "$HWTRACE" index -q -j 2 -o nodir/x.db t.hwtrace
	grep -qx "hwtrace index: cannot create 'nodir/x.db': No such file or directory" err ||
	    atf_fail "expected 'cannot create', got: $(cat err)"
	nothing_left nodir/x.db

	# A file size limit between the image's copy and the database's.
	run_status 0 "$HWTRACE" index -q -j 2 -o ok.db t.hwtrace
	img=$(stat -c %s "$PROG")
	db=$(stat -c %s ok.db)
	[ "$img" -lt "$db" ] || atf_fail "image $img bytes, database $db"
	(trap '' XFSZ; ulimit -f $(((img + db) / 2048)) &&
	    exec "$HWTRACE" index -q -j 2 -o full.db t.hwtrace) >out 2>err
	rc=$?
	[ "$rc" = 1 ] || atf_fail "a full disk: exit $rc: $(cat err)"
	grep -qx "hwtrace index: database 'full.db.partial.[^']*': disk I/O error" err ||
	    atf_fail "a full disk: expected a database I/O error, got: $(cat err)"
	nothing_left full.db

	# SIGINT once the database exists (the workers started before).
	"$HWTRACE" index -q -j 2 -o int.db big.hwtrace >out 2>err &
	pid=$!
	i=0
	while ! ls int.db.partial.* >/dev/null 2>&1 && [ $i -lt 1000 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	kill -INT $pid
	wait $pid
	rc=$?
	[ "$rc" = 1 ] || atf_fail "SIGINT: exit $rc: $(cat err)"
	grep -qx "hwtrace index: interrupted; 'int.db' not written" err ||
	    atf_fail "SIGINT: expected 'interrupted', got: $(cat err)"
	nothing_left int.db
}

# damaged KIND: index an archive damaged as ixgen -c KIND (or -m) says;
# it must succeed, within the test's timeout, and report what it could
# not decode.
damaged()
{
	ixgen_archive d.hwtrace -n 300000 -t 2 "$@"
	run_status 0 "$HWTRACE" index -j 2 -o d.db d.hwtrace
	[ -f d.db ] || atf_fail "no database written"
	tail -1 err | grep -q "^hwtrace index: 'd.db': 2 streams, .* decode errors" ||
	    atf_fail "stderr does not end with the summary: $(tail -3 err)"
}

atf_test_case bit_flips
bit_flips_head()
{
	atf_set descr "bit flips in both streams: decode errors recorded with offsets, decoding resumes"
	atf_set timeout 120
}
bit_flips_body()
{
	damaged -c flip
	expect_some d.db "SELECT count(*) FROM events WHERE kind = 'decode-error' AND offset IS NOT NULL" "no decode error recorded"
	grep -q "^hwtrace index: stream 'tid 100[01]': .* decode error" err ||
	    atf_fail "the summary does not name the damaged stream: $(cat err)"
	# Decoding went on after the errors.
	expect_some d.db "SELECT count(*) FROM events e WHERE kind = 'decode-error' AND seq < (SELECT blocks FROM threads t WHERE t.id = e.thread)" "nothing was decoded after a decode error"
}

atf_test_case truncated_stream
truncated_stream_head()
{
	atf_set descr "a stream cut in the middle of a packet indexes what it has"
	atf_set timeout 120
}
truncated_stream_body()
{
	damaged -c truncate
	[ "$(q d.db 'SELECT count(*) FROM threads WHERE blocks > 0')" = 2 ] ||
	    atf_fail "expected both threads decoded"
}

atf_test_case garbage
garbage_head()
{
	atf_set descr "random bytes over a tenth of each stream: errors, resync at the next PSB, undecoded bytes counted"
	atf_set timeout 120
}
garbage_body()
{
	damaged -c garbage
	expect_some d.db "SELECT sum(undecoded_bytes) FROM streams" "no undecoded bytes counted"
	expect_some d.db "SELECT count(*) FROM events WHERE kind = 'decode-error'" "no decode error recorded"
}

atf_test_case missing_image
missing_image_head()
{
	atf_set descr "an image the archive lacks: named on stderr, errors recorded, no abort"
	atf_set timeout 120
}
missing_image_body()
{
	damaged -m
	grep -q "image not in the archive" err ||
	    atf_fail "stderr does not name the missing image: $(cat err)"
	expect_some d.db "SELECT count(*) FROM events WHERE kind = 'decode-error' AND detail LIKE '%no memory mapped%'" "no 'no memory mapped' decode error recorded"
}

atf_test_case missing_image_never_run
missing_image_never_run_head()
{
	atf_set descr "a mapping without an image that no code runs in ([vsyscall], mapped twice): no warning; a missing image that runs: named once"
	atf_set timeout 120
}
missing_image_never_run_body()
{
	ixgen_archive v.hwtrace -n 30000 -V
	run_status 0 "$HWTRACE" index -j 2 -o v.db v.hwtrace
	! grep -q "not in the archive" err ||
	    atf_fail "warned about a mapping never executed: $(tr '\n' '|' < err)"
	n=$(q v.db "SELECT count(*) FROM mappings WHERE path = '[vsyscall]'")
	[ "$n" = 2 ] || atf_fail "expected 2 [vsyscall] mappings, got $n"
	ixgen_archive w.hwtrace -n 30000 -V -m
	run_status 0 "$HWTRACE" index -j 2 -o w.db w.hwtrace
	n=$(grep -c "not in the archive" err)
	[ "$n" = 1 ] || atf_fail "expected one warning (the program), got $n: $(tr '\n' '|' < err)"
	grep -q "vsyscall" err && atf_fail "warned about [vsyscall]: $(tr '\n' '|' < err)"
	return 0
}

atf_test_case truncated_archive
truncated_archive_head()
{
	atf_set descr "an archive cut short: indexed from what it holds, or refused with exit 1 and no database"
	atf_set timeout 120
}
truncated_archive_body()
{
	ixgen_archive full.hwtrace -n 300000 -t 2
	size=$(stat -c %s full.hwtrace)
	head -c $((size * 2 / 3)) full.hwtrace > cut.hwtrace
	"$HWTRACE" index -q -o cut.db cut.hwtrace >out 2>err
	rc=$?
	case $rc in
	0)	[ -f cut.db ] || atf_fail "exit 0 but no database" ;;
	1)	[ ! -e cut.db ] && [ -z "$(ls cut.db.partial* 2>/dev/null)" ] ||
		    atf_fail "exit 1 but a database was left" ;;
	*)	atf_fail "exit status $rc: $(cat err)" ;;
	esac
}

# lldb_case NAME BUNDLE EXPECTED: import an LLDB bundle, index it, and
# compare the instruction addresses with ptxed's.
lldb_case()
{
	dir="$HWTRACE_CORPUS/lldb-intelpt"
	[ -d "$dir" ] || atf_skip "corpus not found at $dir"
	run_status 0 "$HWTRACE" import --lldb -o c.hwtrace "$dir/$2"
	run_status 0 "$HWTRACE" index -q -o c.db c.hwtrace
	q c.db ".load $EXT" "SELECT printf('%016x', ip) FROM exec_insns WHERE thread = 1" > got
	grep -oE '^[0-9a-f]{16}' "$dir/expected/$3" > want
	[ -s want ] || atf_fail "no addresses in $3"
	cmp -s want got || atf_fail "addresses differ from $3 ($(wc -l < want) expected, $(wc -l < got) decoded): $(diff want got | head -6)"
	# ptxed's own output has errors where the capture lacks an image
	# (multi-file: ld.so); the database must have the same ones.
	want=$(grep -c 'error:' "$dir/expected/$3" || true)
	n=$(q c.db "SELECT count(*) FROM events WHERE kind = 'decode-error'")
	[ "$n" = "$want" ] || atf_fail "$n decode errors, ptxed has $want"
	n=$(q c.db "SELECT count(*) FROM cycles")
	[ "$n" = 0 ] || atf_fail "Intel PT: expected an empty cycles table, got $n rows"
}

atf_test_case plt_names
plt_names_head()
{
	atf_set descr "PLT stubs are named as binutils names them; a static binary's IRELATIVE stubs by the ifunc its resolver belongs to"
}
plt_names_body()
{
	need_gen
	for t in objdump readelf nm; do
		command -v $t >/dev/null || atf_skip "$t (binutils) is needed"
	done
	dyn="$HWTRACE_PROGS/dynpie"
	[ -x "$dyn" ] || atf_skip "$dyn not built"
	# Static: each .plt stub jumps through a GOT slot (objdump) that an
	# IRELATIVE relocation fills with its resolver's result (readelf); the
	# database must name the stub after a function nm lists at the
	# resolver's address.
	ixgen_archive s.hwtrace -n 20000 -t 1
	run_status 0 "$HWTRACE" index -q -o s.db s.hwtrace
	objdump -d -j .plt "$PROG" |
	    sed -n 's/^ *\([0-9a-f]*\):.*jmp .*(%rip) *# \([0-9a-f]*\).*/\1 \2/p' > jmps
	readelf -rW "$PROG" | awk '$3 == "R_X86_64_IRELATIVE" { sub(/^0+/, "", $1); print $1, $4 }' > irel
	awk 'NR == FNR { res[$1] = $2; next } ($2 in res) { print $1, res[$2] }' irel jmps > stubs
	[ "$(wc -l < stubs)" -ge 10 ] ||
	    atf_fail "found $(wc -l < stubs) IRELATIVE stubs in $PROG, expected many (static glibc)"
	nm "$PROG" > syms
	while read -r stub res; do
		got=$(q s.db "SELECT name FROM symbols WHERE kind = 'plt' AND addr = $((0x$stub))")
		want=$(awk -v a="$res" '{ sub(/^0+/, "", $1) } $1 == a && $2 ~ /^[iTtWw]$/ { print $3 "@plt" }' syms)
		[ -n "$want" ] || atf_fail "nm has no function at $res (stub $stub)"
		echo "$want" | grep -qxF "$got" ||
		    atf_fail "stub 0x$stub: database '$got', nm names at 0x$res: $(echo $want)"
	done < stubs
	# Dynamic: the database names every stub as objdump does.
	"$HWTRACE" capture --source step -o d.hwtrace -- "$dyn" >/dev/null 2>&1 ||
	    atf_fail "capture of $dyn failed"
	run_status 0 "$HWTRACE" index -q -o d.db d.hwtrace
	objdump -d "$dyn" | sed -n 's/^0*\([0-9a-f]*\) <\(.*@plt\)>:$/\1 \2/p' > dstubs
	[ -s dstubs ] || atf_fail "objdump shows no PLT stubs in $dyn"
	while read -r stub name; do
		got=$(q d.db "SELECT s.name FROM symbols s JOIN images i ON i.id = s.image WHERE s.kind = 'plt' AND i.path = '$dyn' AND s.addr = $((0x$stub))")
		[ "$got" = "$name" ] ||
		    atf_fail "$dyn stub 0x$stub: objdump '$name', database '$got'"
	done < dstubs
}

atf_test_case lldb_single
lldb_single_head()
{
	atf_set descr "LLDB capture, one image: same instructions as ptxed, no decode error"
}
lldb_single_body()
{
	lldb_case single intelpt-trace/trace.json single.ptxed.txt
}

atf_test_case lldb_multi_file
lldb_multi_file_head()
{
	atf_set descr "LLDB capture over three images: same instructions and decode errors as ptxed (ld.so is not in the bundle)"
}
lldb_multi_file_body()
{
	lldb_case multi intelpt-trace-multi-file/multi-file-no-ld.json multifile.ptxed.txt
}

atf_init_test_cases()
{
	atf_add_test_case usage_errors
	atf_add_test_case default_name_and_tables
	atf_add_test_case jobs_give_identical_databases
	atf_add_test_case page_sizes_give_same_rows
	atf_add_test_case failures_while_decoding
	atf_add_test_case bit_flips
	atf_add_test_case truncated_stream
	atf_add_test_case garbage
	atf_add_test_case missing_image
	atf_add_test_case missing_image_never_run
	atf_add_test_case truncated_archive
	atf_add_test_case plt_names
	atf_add_test_case lldb_single
	atf_add_test_case lldb_multi_file
}
