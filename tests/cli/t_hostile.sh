#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# Issue 33: hostile inputs and outputs.  Every sample is built here: a
# "secret" file outside the input, snapshots and bundles that name it by
# "..", by an absolute name or through a link, device nodes made with
# mknod(1) and FIFOs made with mkfifo(1) as operands and outputs.  What is
# expected follows from stat(1) and the bytes themselves (a database
# starts with "SQLite format 3"), not from an earlier run of ours.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

SECRET='root:$6$H0stileSecretHash$:19000:0:99999:7:::'

# A file outside the input, whose text must never be shown or archived.
plant_secret()
{
	printf '%s\n' "$SECRET" > secret.ini
	printf '%s\n' "$SECRET" > secret.bin
}

# Fail when file $1 holds the secret.
no_secret()
{
	! grep -q H0stileSecretHash "$1" ||
	    atf_fail "$2 shows the secret file's text: $(oneline "$1" 600)"
}

# refuse_import WHAT EXPECTED ARGS...: the import fails with status 1
# within 20 s, its message holds EXPECTED (a fixed string), shows no
# secret and leaves no archive.
refuse_import()
{
	what=$1 want=$2
	shift 2
	rm -f o.hwtrace
	timeout 20 "$HWTRACE" import "$@" -o o.hwtrace >out 2>err
	got=$?
	[ "$got" = 1 ] || atf_fail "$what: expected exit status 1, got $got; stderr: $(oneline err 800)"
	grep -qF -- "$want" err ||
	    atf_fail "$what: expected '$want' in the message, got: $(oneline err 800)"
	no_secret err "$what"
	[ ! -e o.hwtrace ] || atf_fail "$what: o.hwtrace was written"
}

# A snapshot s/ of our own: snapshot.ini names device DEV (the only
# device) and trace.ini; the device file is read before anything else.
mini_snapshot()
{
	rm -rf s && mkdir s
	cat > s/snapshot.ini <<EOF
[snapshot]
version=1.0
[device_list]
device0=$1
[trace]
metadata=trace.ini
EOF
	cat > s/cpu.ini <<EOF
[device]
name=cpu_0
class=core
type=Cortex-A53
EOF
}

atf_test_case snapshot_confined
snapshot_confined_head()
{
	atf_set descr "a CoreSight snapshot's device=, metadata= and file= names are opened inside the snapshot only: '..', absolute names and links leaving it are refused, and no error shows the text of a file outside it"
}
snapshot_confined_body()
{
	plant_secret
	mini_snapshot ../secret.ini
	refuse_import "device0=../secret.ini" "'s/../secret.ini': a '..' component" s
	mini_snapshot "$PWD/secret.ini"
	refuse_import "device0=absolute" "is outside 's'" s
	mini_snapshot dev.ini
	ln -s ../secret.ini s/dev.ini
	refuse_import "device0=link leaving" "'s/dev.ini': a symbolic link" s
	mini_snapshot sub/dev.ini
	mkdir s/sub && ln -s ../../secret.ini s/sub/dev.ini
	refuse_import "device0=sub/link" "'s/sub/dev.ini': a symbolic link" s
	# With --allow-outside the file is read, but its lines are not shown.
	mini_snapshot ../secret.ini
	refuse_import "--allow-outside, device0=../secret.ini" \
	    "'s/../secret.ini' line 1: not 'key=value' or '[section]'" \
	    --allow-outside s
	# A link to a directory on the way out.
	mini_snapshot up/secret.ini
	ln -s .. s/up
	refuse_import "device0=up/secret.ini, up -> .." "'s/up/secret.ini': a symbolic link" s

	# The corpus's TC2 reaches metadata=, [dump] file= and [buffer] file=.
	require_corpus opencsd/snapshots/TC2
	src=$HWTRACE_CORPUS/opencsd/snapshots/TC2
	fresh() { rm -rf s; cp -r "$src" s; }
	fresh; sed -i 's|^metadata=.*|metadata=../secret.ini|' s/snapshot.ini
	refuse_import "metadata=../secret.ini" "'s/../secret.ini': a '..' component" s
	fresh; sed -i "s|^metadata=.*|metadata=$PWD/secret.ini|" s/snapshot.ini
	refuse_import "metadata=absolute" "is outside 's'" s
	fresh; sed -i 's|^file=.*|file=../secret.bin|' s/cpu_0.ini
	refuse_import "dump file=../secret.bin" "'s/../secret.bin': a '..' component" s
	fresh; f=$(sed -n 's/^file=//p' s/cpu_0.ini | head -n 1)
	rm "s/$f" && ln -s ../secret.bin "s/$f"
	refuse_import "dump file, a link leaving" "'s/$f': a symbolic link" s
	fresh; sed -i "s|^file=cstrace.bin|file=$PWD/secret.bin|" s/trace.ini
	refuse_import "buffer file=absolute" "is outside 's'" s
	# The snapshot as it is still imports.
	fresh
	run_status 0 "$HWTRACE" import s -o ok.hwtrace
}

# A bundle b/ of our own: one thread whose trace is TRACE, one module FILE
# (a fixture program, an ELF file with a build-id).
mini_bundle()
{
	cat > b/trace.json <<EOF
{"type": "intel-pt",
 "cpuInfo": {"vendor": "GenuineIntel", "family": 6, "model": 79, "stepping": 1},
 "processes": [{"pid": 1234, "triple": "x86_64-*-linux",
   "threads": [{"tid": 1234, "iptTrace": "$1"}],
   "modules": [{"file": "$2", "systemPath": "/bin/hello",
     "loadAddress": 4194304}]}]}
EOF
}

atf_test_case lldb_confined
lldb_confined_head()
{
	atf_set descr "an LLDB bundle's iptTrace and module files are opened inside the bundle's directory only, unless --allow-outside"
}
lldb_confined_body()
{
	plant_secret
	mkdir b
	printf '\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\202\002\043' > b/t.trace
	cp "$HWTRACE_PROGS/hello" b/hello
	mini_bundle t.trace hello
	run_status 0 "$HWTRACE" import b/trace.json -o ok.hwtrace
	mini_bundle ../secret.bin hello
	refuse_import "iptTrace ../secret.bin" "'b/../secret.bin': a '..' component" b/trace.json
	mini_bundle "$PWD/secret.bin" hello
	refuse_import "iptTrace absolute" "is outside 'b'" b/trace.json
	ln -s ../secret.bin b/link.trace
	mini_bundle link.trace hello
	refuse_import "iptTrace link" "'b/link.trace': a symbolic link" b/trace.json
	mini_bundle t.trace "$HWTRACE_PROGS/hello"
	refuse_import "module absolute" "is outside 'b'" b/trace.json
	# --allow-outside reads it: an ELF of our own, outside b/.
	run_status 0 "$HWTRACE" import --allow-outside b/trace.json -o out.hwtrace
}

atf_test_case perf_symfs_dotdot
perf_symfs_dotdot_head()
{
	atf_set descr "a perf.data's recorded file name with '..' is not looked up under --symfs (strace shows no open of a path that leaves it)"
	atf_set require.progs "strace python3"
}
perf_symfs_dotdot_body()
{
	require_corpus perf-data/intel_pt/perf.data.intel_pt-4.14
	# Every copy of one module's name, replaced by a name of the same
	# length that climbs out of --symfs.
	python3 - "$HWTRACE_CORPUS/perf-data/intel_pt/perf.data.intel_pt-4.14" \
	    h.data <<'EOF'
import sys
data = open(sys.argv[1], 'rb').read()
old = b'/lib/modules/4.14.18/kernel/crypto/lzo.ko'
assert old in data
new = b'/..' * 12
new = new + b'/' + b'z' * (len(old) - len(new) - 1)
assert len(new) == len(old)
open(sys.argv[2], 'wb').write(data.replace(old, new))
EOF
	[ -s h.data ] || atf_fail "no hostile perf.data made"
	mkdir symfs
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	export ASAN_OPTIONS
	strace -f -e trace=open,openat -o st "$HWTRACE" import --symfs symfs \
	    h.data -o p.hwtrace >/dev/null 2>&1
	grep -q '"symfs//lib/modules' st ||
	    atf_fail "the import looked nothing up under --symfs: $(grep -c . st) opens"
	! grep -q '"symfs/*/\.\./' st ||
	    atf_fail "a name with '..' was looked up under --symfs: $(grep 'symfs/*/\.\.' st | head -n 2)"
}

# An archive and its database, of the fixture program hello.
hello_archive()
{
	run_status 0 "$HWTRACE" capture --source valgrind -o a.hwtrace -- \
	    "$HWTRACE_PROGS/hello"
}

# Fail unless $1 is still a character device (mknod c 1 3: /dev/null).
still_device()
{
	[ -c "$1" ] || atf_fail "$2 replaced the device node $1: now $(stat -c %F "$1")"
}

atf_test_case outputs_into_devices
outputs_into_devices_head()
{
	atf_set descr "index -o, import -o, capture -o, export --perfetto/--folded and coverage --lcov write into a character device, never replace it"
	atf_set require.progs "valgrind"
	atf_set require.user "root"
}
outputs_into_devices_body()
{
	mknod nd c 1 3 || atf_skip "mknod failed"
	hello_archive
	run_status 0 "$HWTRACE" index -o nd a.hwtrace
	still_device nd "index -o"
	head -c 100 /dev/urandom > code.bin
	head -c 4096 /dev/urandom > trace.pt
	run_status 0 "$HWTRACE" import --cpu 6/79/1 --raw code.bin:0x1000 \
	    --pt trace.pt -o nd
	still_device nd "import -o"
	run_status 0 "$HWTRACE" capture --source valgrind --force -o nd -- \
	    "$HWTRACE_PROGS/hello"
	still_device nd "capture --force -o"
	run_status 0 "$HWTRACE" query a.hwtrace export --perfetto nd
	still_device nd "export --perfetto"
	run_status 0 "$HWTRACE" query a.hwtrace export --folded nd
	still_device nd "export --folded"
	run_status 0 "$HWTRACE" query a.hwtrace coverage --lcov nd
	still_device nd "coverage --lcov"
	ls -a | grep -q '^nd\.partial' && atf_fail "a temporary nd.partial* is left: $(ls -a)"
	return 0
}

atf_test_case outputs_into_fifos
outputs_into_fifos_head()
{
	atf_set descr "index -o FIFO and export --folded - write the whole output into the FIFO or standard output: the reader gets a database (\"SQLite format 3\") and folded lines, the FIFO stays a FIFO"
	atf_set require.progs "valgrind"
}
outputs_into_fifos_body()
{
	hello_archive
	mkfifo p
	timeout 30 cat p > got.db &
	reader=$!
	run_status 0 timeout 30 "$HWTRACE" index -o p a.hwtrace
	wait $reader
	[ -p p ] || atf_fail "index -o p replaced the FIFO: now $(stat -c %F p)"
	[ "$(head -c 15 got.db)" = "SQLite format 3" ] ||
	    atf_fail "the FIFO's reader got no database: $(head -c 32 got.db | od -c | head -n 2 | tr -s "\n " " ")"
	sqlite3 got.db 'SELECT count(*) FROM threads' > n 2>&1 ||
	    atf_fail "what came through the FIFO is not a whole database: $(cat n)"
	# Standard output: the whole database, and nothing named '-'.
	"$HWTRACE" index -o - a.hwtrace > std.db 2>err ||
	    atf_fail "index -o - failed: $(cat err)"
	cmp -s got.db std.db || [ "$(head -c 15 std.db)" = "SQLite format 3" ] ||
	    atf_fail "index -o - wrote no database to standard output"
	[ ! -e ./- ] || atf_fail "index -o - created a file named '-'"
	"$HWTRACE" query a.hwtrace export --folded - > folded 2>err ||
	    atf_fail "export --folded - failed: $(cat err)"
	grep -q '^[^ ]* [0-9][0-9]*$' folded ||
	    atf_fail "export --folded - printed no folded line: $(oneline folded 300)"
	[ ! -e ./- ] || atf_fail "export --folded - created a file named '-'"
	# A FIFO nobody reads: SIGTERM still stops the writer at once.
	mkfifo q
	timeout -s KILL 20 "$HWTRACE" index -o q a.hwtrace >/dev/null 2>err &
	writer=$!
	sleep 2
	kill -TERM $writer
	wait $writer
	got=$?
	[ "$got" != 0 ] && [ "$got" != 137 ] ||
	    atf_fail "index -o FIFO without a reader: expected SIGTERM to end it with an error, got status $got (137: it ignored SIGTERM)"
	[ -p q ] || atf_fail "index -o q replaced the FIFO"
}

# refuse_fifo WHAT ARGS...: "$HWTRACE" ARGS... exits 1 within 10 s saying
# "not a regular file".
refuse_fifo()
{
	what=$1
	shift
	timeout -s KILL 10 "$HWTRACE" "$@" >out 2>err
	got=$?
	[ "$got" = 1 ] || atf_fail "$what on a FIFO: expected exit status 1 at once, got $got (137: still blocked after 10 s); stderr: $(oneline err 500)"
	grep -q "not a regular file" err ||
	    atf_fail "$what on a FIFO: expected 'not a regular file', got: $(oneline err 500)"
}

atf_test_case fifo_operands_refused
fifo_operands_refused_head()
{
	atf_set descr "a FIFO operand of info, verify, index, query and import, and a FIFO a snapshot names as a memory dump, are refused at once with 'not a regular file'"
}
fifo_operands_refused_body()
{
	mkfifo f
	refuse_fifo info info f
	refuse_fifo verify verify f
	refuse_fifo "index -o f.db" index -o f.db f
	[ ! -e f.db ] || atf_fail "index of a FIFO left f.db"
	refuse_fifo query query f summary
	refuse_fifo import import f -o o.hwtrace
	refuse_fifo "import --lldb" import --lldb f -o o.hwtrace
	refuse_fifo "import --pt" import --cpu 6/79/1 --pt f -o o.hwtrace
	require_corpus opencsd/snapshots/TC2
	cp -r "$HWTRACE_CORPUS/opencsd/snapshots/TC2" s
	d=$(sed -n 's/^file=//p' s/cpu_0.ini | head -n 1)
	rm "s/$d" && mkfifo "s/$d"
	refuse_fifo "snapshot dump" import s -o o.hwtrace
}

# A shell loop of $1 turns under valgrind: an archive that takes about a
# second to index.
shell_archive()
{
	run_status 0 "$HWTRACE" capture --source valgrind -o s.hwtrace -- \
	    /bin/sh -c "i=0; while [ \$i -lt $1 ]; do i=\$((i+1)); done"
}

atf_test_case concurrent_queries_index_once
concurrent_queries_index_once_head()
{
	atf_set descr "four concurrent 'query ARCHIVE summary' index the archive once (strace: one creates the temporary database), the others wait and answer the same; a waiter whose indexer is killed with SIGKILL takes over; a waiter stops on SIGTERM"
	atf_set require.progs "valgrind strace"
	atf_set timeout 300
}
concurrent_queries_index_once_body()
{
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	export ASAN_OPTIONS
	shell_archive 3000
	for i in 1 2 3 4; do
		strace -f -e trace=openat -o st.$i "$HWTRACE" query s.hwtrace \
		    summary >sum.$i 2>err.$i &
	done
	wait
	for i in 1 2 3 4; do
		[ -s sum.$i ] || atf_fail "query $i answered nothing: $(cat err.$i)"
		cmp -s sum.1 sum.$i || atf_fail "query $i answered otherwise than query 1"
	done
	n=$(cat st.1 st.2 st.3 st.4 | grep -c 's\.hwtrace\.db\.partial\.[^"]*", [^)]*O_CREAT')
	[ "$n" = 1 ] || atf_fail "expected the archive indexed once, it was indexed $n times"

	# The indexer killed: the waiter indexes, and is not left hanging.
	rm -f s.hwtrace.db
	"$HWTRACE" query s.hwtrace summary >/dev/null 2>&1 &
	first=$!
	i=0
	while ! ls s.hwtrace.db.partial.* >/dev/null 2>&1 && [ $i -lt 200 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	timeout 120 "$HWTRACE" query s.hwtrace summary >sum.w 2>err.w &
	waiter=$!
	sleep 0.3
	kill -9 $first
	wait $waiter
	got=$?
	[ "$got" = 0 ] || atf_fail "the waiter exited $got after its indexer was killed (124: hung): $(cat err.w)"
	cmp -s sum.1 sum.w || atf_fail "the waiter answered otherwise: $(cat sum.w)"

	# A waiter stops on SIGTERM while another process holds the lock.
	if command -v flock >/dev/null; then
		rm -f s.hwtrace.db
		term_while_locked s.hwtrace.db.lock "a waiting query" \
		    "$HWTRACE" query s.hwtrace summary
	fi
}

atf_test_case exec_chunks_overflow_refused
exec_chunks_overflow_refused_head()
{
	atf_set descr "a database whose exec_chunks.insn is INT64_MAX is refused as corrupt (no signed overflow, no silent empty answer)"
	atf_set require.progs "valgrind sqlite3"
}
exec_chunks_overflow_refused_body()
{
	hello_archive
	run_status 0 "$HWTRACE" index -o a.db a.hwtrace
	sqlite3 a.db 'UPDATE exec_chunks SET insn = 9223372036854775807' ||
	    atf_fail "sqlite3 could not change exec_chunks"
	run_status 1 "$HWTRACE" query a.db last
	grep -q "corrupt exec_chunks" err ||
	    atf_fail "expected 'corrupt exec_chunks', got: $(cat err)"
}

atf_test_case csv_tsv_escape_controls
csv_tsv_escape_controls_head()
{
	atf_set descr "--format csv and tsv write ESC and BEL of a symbol name as \\e and \\x07, never raw"
	atf_set require.progs "valgrind sqlite3"
}
csv_tsv_escape_controls_body()
{
	hello_archive
	run_status 0 "$HWTRACE" index -o a.db a.hwtrace
	sqlite3 a.db "UPDATE symbols SET name = 'ev' || char(27) || '[2J' || char(7) || 'il' WHERE name = '_start'" ||
	    atf_fail "sqlite3 could not rename _start"
	for f in csv tsv; do
		run_status 0 "$HWTRACE" query a.db calls --format $f
		! LC_ALL=C grep -q "$(printf '[\033\007]')" out ||
		    atf_fail "--format $f printed a raw ESC or BEL: $(grep ev out | od -c | head -n 3 | tr -s "\n " " ")"
		grep -qF 'ev\e[2J\x07il' out ||
		    atf_fail "--format $f: expected 'ev\\e[2J\\x07il', got: $(grep ev out)"
	done
}

atf_test_case cache_refusal_names_db
cache_refusal_names_db_head()
{
	atf_set descr "a cache that is not a regular file is refused with a message naming --db (the option that exists), not --cache"
	atf_set require.progs "valgrind"
}
cache_refusal_names_db_body()
{
	hello_archive
	mkdir a.hwtrace.db
	run_status 1 "$HWTRACE" query a.hwtrace summary
	grep -q -- "--db" err || atf_fail "expected --db named, got: $(cat err)"
	! grep -q -- "--cache" err || atf_fail "names --cache, which does not exist: $(cat err)"
	run_status 2 "$HWTRACE" query --cache x a.hwtrace summary
}

atf_test_case long_paths_keep_the_reason
long_paths_keep_the_reason_head()
{
	atf_set descr "paths of hundreds of bytes: the messages keep their reason to the end, and a database path longer than SQLite opens (512 bytes) says so, with its length"
	atf_set require.progs "valgrind"
}
long_paths_keep_the_reason_body()
{
	hello_archive
	# Three components of 200 bytes: about 650 bytes with the test's
	# directory, under PATH_MAX (4096) and NAME_MAX (255).
	c=$(printf '%0200d' 0)
	deep="$PWD/$c/$c/$c"
	mkdir -p "$deep" || atf_fail "cannot make a directory 600 bytes deep"
	# An archive cut short, so that the lazy index has a warning and an
	# error, each naming two long paths.
	head -c 5000 a.hwtrace > "$deep/cut.hwtrace"

	run_status 1 "$HWTRACE" index -o "$deep/x.db" a.hwtrace
	path=$(sed -n "s/.*cannot create '\([^']*\)'.*/\1/p" err)
	[ -n "$path" ] || atf_fail "index: no path named: $(oneline err 3000)"
	grep -qF "the path is ${#path} bytes long, and SQLite opens none longer than 512" err ||
	    atf_fail "index: expected the path's ${#path} bytes and SQLite's limit, got: $(oneline err 3000)"
	[ -z "$(ls "$deep" | grep -v '^cut.hwtrace$')" ] ||
	    atf_fail "index left files behind: $(ls "$deep")"
	# A short name through a symbolic link: SQLite follows it.
	ln -s "$deep" L || atf_fail "cannot make a symbolic link"
	run_status 1 "$HWTRACE" index -o L/y.db a.hwtrace
	grep -q "bytes long once its symbolic links are followed, and SQLite opens none longer than 512\$" err ||
	    atf_fail "index through a link: expected the followed path's length, got: $(oneline err 3000)"

	run_status 1 "$HWTRACE" query "$deep/cut.hwtrace" summary
	grep -qF "cannot index '$deep/cut.hwtrace': cannot create '$deep/cut.hwtrace.db." err ||
	    atf_fail "query: expected both paths whole, got: $(oneline err 3000)"
	grep -q "SQLite opens none longer than 512 (name another database with --db)\$" err ||
	    atf_fail "query: the reason was cut off, or --db not named: $(oneline err 3000)"
	[ "$(wc -c < err)" -gt 1024 ] ||
	    atf_fail "query: a message of $(wc -c < err) bytes cannot hold three long paths"

	# A database SQLite can open, some 300 bytes deep (whatever the
	# test's directory, within reason): a damaged one is named and so is
	# its damage, and a good archive gets its cache beside it.
	m=$(printf '%0150d' 0)
	mid="$PWD/$m/$m"
	mkdir -p "$mid" || atf_fail "cannot make a directory 300 bytes deep"
	cp a.hwtrace "$mid/a.hwtrace"
	printf 'not a database, not an archive' > "$mid/b.db"
	run_status 1 "$HWTRACE" query "$mid/b.db" summary
	grep -qF "'$mid/b.db' is neither a hwtrace database nor a hwtrace archive" err ||
	    atf_fail "query of a bad file: got: $(oneline err 3000)"
	run_status 0 "$HWTRACE" query "$mid/a.hwtrace" summary
	[ -s "$mid/a.hwtrace.db" ] || atf_fail "no cache beside a ${#mid}-byte directory"
}

atf_test_case full_output_loses_nothing
full_output_loses_nothing_head()
{
	atf_set descr "writes cut short by a full disk (RLIMIT_FSIZE, SIGXFSZ ignored: EFBIG) fail with exit 1 and the system's reason, and leave the earlier output as it was"
	atf_set require.progs "valgrind prlimit"
}
# limited CMD...: CMD with files limited to 200,000 bytes.
limited()
{
	sh -c 'trap "" XFSZ; exec prlimit --fsize=200000 "$@"' sh "$@" >out 2>err
}
full_output_loses_nothing_body()
{
	hello_archive
	[ "$(stat -c %s a.hwtrace)" -gt 200000 ] ||
	    atf_skip "the capture of hello is too small to fill 200,000 bytes"
	echo keep > c.hwtrace
	echo keep > x.db
	limited "$HWTRACE" capture --force --source valgrind -o c.hwtrace -- \
	    "$HWTRACE_PROGS/hello"
	[ $? = 1 ] || atf_fail "capture: expected exit status 1: $(oneline err 2000)"
	grep -q "c.hwtrace.*File too large" err ||
	    atf_fail "capture: expected the file and EFBIG's reason, got: $(oneline err 2000)"
	limited "$HWTRACE" index -o x.db a.hwtrace
	[ $? = 1 ] || atf_fail "index: expected exit status 1: $(oneline err 2000)"
	grep -q "File too large" err ||
	    atf_fail "index: expected EFBIG's reason, got: $(oneline err 2000)"
	for f in c.hwtrace x.db; do
		[ "$(cat $f)" = keep ] || atf_fail "$f was replaced by a failed write"
	done
	[ -z "$(ls | grep partial)" ] || atf_fail "partial files left: $(ls)"
}

atf_init_test_cases()
{
	atf_add_test_case snapshot_confined
	atf_add_test_case lldb_confined
	atf_add_test_case perf_symfs_dotdot
	atf_add_test_case outputs_into_devices
	atf_add_test_case outputs_into_fifos
	atf_add_test_case fifo_operands_refused
	atf_add_test_case concurrent_queries_index_once
	atf_add_test_case exec_chunks_overflow_refused
	atf_add_test_case csv_tsv_escape_controls
	atf_add_test_case cache_refusal_names_db
	atf_add_test_case long_paths_keep_the_reason
	atf_add_test_case full_output_loses_nothing
}
