#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Issue 16: outputs in shared directories, the query cache, file modes and
# what an archive records.  Archives are captured here from the fixture
# programs with the valgrind source; what is expected follows from
# stat(1), strace(1) and sqlite3(1), not from an earlier run of ours.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

# capture NAME PROG [ARGS...]: NAME.hwtrace of a fixture program.
capture()
{
	out=$1
	shift
	run_status 0 "$HWTRACE" capture --source valgrind -o "$out.hwtrace" \
	    -- "$HWTRACE_PROGS/$@"
}

# The octal mode of file $1.
mode_of()
{
	stat -c %a "$1"
}

atf_test_case partial_link_not_followed
partial_link_not_followed_head()
{
	atf_set descr "a link planted at NAME.partial is replaced, never written through (capture, import, export --perfetto)"
	atf_set require.progs "valgrind"
}
partial_link_not_followed_body()
{
	umask 022
	echo keep > victim
	ln -s "$PWD/victim" o.hwtrace.partial
	capture o hello
	[ "$(cat victim)" = keep ] ||
	    atf_fail "capture wrote through the link o.hwtrace.partial: victim now holds $(wc -c < victim) bytes"
	[ -f o.hwtrace ] && ! [ -L o.hwtrace ] || atf_fail "no archive o.hwtrace"
	run_status 0 "$HWTRACE" verify o.hwtrace

	head -c 4096 /dev/urandom > trace.pt
	head -c 100 /dev/urandom > code.bin
	ln -s "$PWD/victim" i.hwtrace.partial
	run_status 0 "$HWTRACE" import --cpu 6/79/1 --raw code.bin:0x1000 \
	    --pt trace.pt -o i.hwtrace
	[ "$(cat victim)" = keep ] || atf_fail "import wrote through the link"
	run_status 0 "$HWTRACE" verify i.hwtrace

	ln -s "$PWD/victim" p.json.partial
	run_status 0 "$HWTRACE" query o.hwtrace export --perfetto p.json
	[ "$(cat victim)" = keep ] || atf_fail "export wrote through the link"
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' p.json ||
	    atf_fail "p.json is not JSON"
	# A dangling link to a file that does not exist yet: not created.
	ln -s "$PWD/made" d.hwtrace.partial
	capture d hello
	! [ -e made ] || atf_fail "capture created the target of a dangling link"
}

atf_test_case temporaries_created_exclusively
temporaries_created_exclusively_head()
{
	atf_set descr "every temporary output is created with O_EXCL, never through a link; the database's name is unpredictable and SQLite opens it with O_NOFOLLOW"
	atf_set require.progs "valgrind strace"
}
temporaries_created_exclusively_body()
{
	# LeakSanitizer cannot run under ptrace (make sanitize).
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	export ASAN_OPTIONS
	capture a hello
	strace -f -e trace=open,openat,rename -o st.index "$HWTRACE" index \
	    -o a.db a.hwtrace >/dev/null 2>&1 || atf_fail "index failed"
	# The temporary: a.db.partial.XXXXXX, O_CREAT|O_EXCL, mode 0600.
	tmp=$(sed -n 's/.*openat(AT_FDCWD, "\(a\.db\.partial\.[A-Za-z0-9]\{6\}\)", [^)]*O_CREAT|O_EXCL[^)]*, 0600) = [0-9]*$/\1/p' st.index | head -n 1)
	[ -n "$tmp" ] || atf_fail "no a.db.partial.XXXXXX created with O_CREAT|O_EXCL 0600: $(grep a.db st.index)"
	grep -q "openat(AT_FDCWD, \"[^\"]*$tmp\", O_RDWR|O_NOFOLLOW" st.index ||
	    atf_fail "SQLite did not open $tmp with O_NOFOLLOW: $(grep a.db st.index)"
	if grep 'a\.db[^"]*"' st.index | grep 'O_CREAT' | grep -v O_EXCL; then
		atf_fail "a database file was opened with O_CREAT but without O_EXCL"
	fi
	grep -q "rename(\"$tmp\", \"a.db\") = 0" st.index ||
	    atf_fail "$tmp was not renamed to a.db: $(grep a.db st.index)"
	# A second index run gets another name.
	strace -f -e trace=openat -o st2 "$HWTRACE" index -o a.db a.hwtrace \
	    >/dev/null 2>&1 || atf_fail "index failed"
	grep -q "\"$tmp\"" st2 && atf_fail "the same temporary name twice: $tmp"

	strace -f -e trace=open,openat -o st.cap "$HWTRACE" capture \
	    --source valgrind -o b.hwtrace -- "$HWTRACE_PROGS/hello" \
	    >/dev/null 2>&1 || atf_fail "capture failed"
	grep -q 'openat(AT_FDCWD, "b.hwtrace.partial", O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0600) = [0-9]' st.cap ||
	    atf_fail "b.hwtrace.partial not created O_EXCL|O_NOFOLLOW 0600: $(grep b.hwtrace st.cap)"
	if grep 'b\.hwtrace' st.cap | grep O_TRUNC; then
		atf_fail "the archive was opened with O_TRUNC"
	fi
}

atf_test_case outputs_are_private
outputs_are_private_head()
{
	atf_set descr "archives, databases and exports are created 0600 whatever the umask"
	atf_set require.progs "valgrind"
}
outputs_are_private_body()
{
	umask 022
	capture a hello
	[ "$(mode_of a.hwtrace)" = 600 ] ||
	    atf_fail "capture: a.hwtrace has mode $(mode_of a.hwtrace), expected 600"
	run_status 0 "$HWTRACE" index -o a.db a.hwtrace
	[ "$(mode_of a.db)" = 600 ] ||
	    atf_fail "index: a.db has mode $(mode_of a.db), expected 600"
	run_status 0 "$HWTRACE" query a.hwtrace summary
	[ "$(mode_of a.hwtrace.db)" = 600 ] ||
	    atf_fail "query: a.hwtrace.db has mode $(mode_of a.hwtrace.db), expected 600"
	head -c 4096 /dev/urandom > trace.pt
	head -c 100 /dev/urandom > code.bin
	run_status 0 "$HWTRACE" import --cpu 6/79/1 --raw code.bin:0x1000 \
	    --pt trace.pt -o i.hwtrace
	[ "$(mode_of i.hwtrace)" = 600 ] ||
	    atf_fail "import: i.hwtrace has mode $(mode_of i.hwtrace), expected 600"
	run_status 0 "$HWTRACE" query a.db export --perfetto p.json
	[ "$(mode_of p.json)" = 600 ] ||
	    atf_fail "export: p.json has mode $(mode_of p.json), expected 600"
}

atf_test_case cache_tied_to_its_archive
cache_tied_to_its_archive_head()
{
	atf_set descr "query answers from ARCHIVE.db only when it was made from that very archive: a replaced archive (cp -p keeps the old time) is indexed again"
	atf_set require.progs "valgrind sqlite3"
}
cache_tied_to_its_archive_body()
{
	capture a hello
	capture b loop 3
	touch -d '2001-01-01' b.hwtrace
	run_status 0 "$HWTRACE" query a.hwtrace summary
	expect_line out "command           $HWTRACE_PROGS/hello"
	id=$(sqlite3 a.hwtrace.db "SELECT value FROM meta WHERE key = 'archive_id'")
	case "$id" in
	sha256:????????????????????????????????????????????????????????????????) ;;
	*)	atf_fail "meta archive_id is '$id', expected sha256:HEX" ;;
	esac
	# The cache is newer than b, which replaces a keeping its old time.
	cp -p b.hwtrace a.hwtrace
	run_status 0 "$HWTRACE" query a.hwtrace summary
	expect_line out "command           $HWTRACE_PROGS/loop 3"
	[ "$(sqlite3 a.hwtrace.db "SELECT value FROM meta WHERE key = 'archive_id'")" != "$id" ] ||
	    atf_fail "the cache still has the identity of the replaced archive"
	# A cache whose identity was changed is not believed either.
	sqlite3 a.hwtrace.db "UPDATE meta SET value = 'sha256:00' WHERE key = 'archive_id'"
	touch a.hwtrace.db
	run_status 0 "$HWTRACE" query a.hwtrace summary
	expect_line out "command           $HWTRACE_PROGS/loop 3"
	[ "$(sqlite3 a.hwtrace.db "SELECT value FROM meta WHERE key = 'archive_id'")" != sha256:00 ] ||
	    atf_fail "a cache with another archive's identity was used"
}

atf_test_case cache_of_another_user_refused
cache_of_another_user_refused_head()
{
	atf_set descr "a cache that belongs to another user, or that is a link, is refused, not believed"
	atf_set require.progs "valgrind sqlite3"
	atf_set require.user "root"
}
cache_of_another_user_refused_body()
{
	capture a hello
	run_status 0 "$HWTRACE" index -o a.hwtrace.db a.hwtrace
	# Forged: it says the program was another one.
	sqlite3 a.hwtrace.db "UPDATE meta SET value = '/forged' WHERE key = 'argv'"
	chown nobody a.hwtrace.db
	run_status 1 "$HWTRACE" query a.hwtrace summary
	grep -q "^hwtrace query: cache 'a.hwtrace.db' belongs to uid $(id -u nobody), not to this user (uid 0): not trusted" err ||
	    atf_fail "expected the cache refused as another user's, got: $(cat err)"
	grep -q forged out && atf_fail "the forged cache was believed"
	rm -f a.hwtrace.db
	run_status 0 "$HWTRACE" index -o real.db a.hwtrace
	ln -s real.db a.hwtrace.db
	run_status 1 "$HWTRACE" query a.hwtrace summary
	grep -q "cache 'a.hwtrace.db' is not a regular file" err ||
	    atf_fail "expected the link refused, got: $(cat err)"
}

atf_test_case redact_args
redact_args_head()
{
	atf_set descr "capture --redact-args records argv[0] only: the arguments are nowhere in the archive's bytes (zstdcat)"
	atf_set require.progs "valgrind zstdcat"
}
redact_args_body()
{
	# The control: without the option the argument is recorded.
	capture plain hello --password=hunter2
	zstdcat plain.hwtrace 2>/dev/null | grep -q -a hunter2 ||
	    atf_fail "control: the argument is not in the archive without --redact-args"
	run_status 0 "$HWTRACE" capture --source valgrind --redact-args \
	    -o r.hwtrace -- "$HWTRACE_PROGS/hello" --password=hunter2 x
	if zstdcat r.hwtrace 2>/dev/null | grep -a -c hunter2; then
		atf_fail "--redact-args: the argument is in the archive"
	fi
	run_status 0 "$HWTRACE" info --json r.hwtrace
	grep -q "\"argv\":\[\"$HWTRACE_PROGS/hello\"\]" out ||
	    atf_fail "expected argv [\"$HWTRACE_PROGS/hello\"], got: $(grep -o '"argv":[^]]*]' out)"
}

atf_test_case terminal_escapes_escaped
terminal_escapes_escaped_head()
{
	atf_set descr "control characters from an archive or a database reach no terminal: info, query tables and messages escape them, JSON stays exact"
	atf_set require.progs "python3 zstd sqlite3"
}
terminal_escapes_escaped_body()
{
	# An archive made with python3's tarfile and the zstd command, one
	# frame per member: a host that retitles and clears the terminal.
	cat > mk.py <<'X'
import subprocess, sys, tarfile
def member(name, data):
    ti = tarfile.TarInfo(name)
    ti.size = len(data)
    ti.mode = 0o644
    b = ti.tobuf(format=tarfile.PAX_FORMAT) + data + b"\0" * ((512 - len(data) % 512) % 512)
    open("m.tmp", "wb").write(b)
    return subprocess.run(["zstd", "-q", "-c", "m.tmp"], capture_output=True, check=True).stdout
man = ('{"format": "1.0", "writer": "craft", "host": "\\u001b]0;pwned\\u0007\\u001b[2J", '
       '"source": "step", "source_version": null, "sideband_origin": null, "caveats": [], '
       '"cpu": {"vendor": "amd", "family": 25, "model": 1, "stepping": 1, "brand": ""}, '
       '"argv": ["/bin/x", "\\u001b[31mred\\r\\u009b"], "start_ns": 0, "timeconv": null}').encode()
st = b'{"id": 0, "name": "s\\u001b[1m", "format": "none", "pid": -1, "tid": -1, "cpu": -1}'
sys.stdout.buffer.write(member("hwtrace.json", man) + member("streams/0/stream.json", st))
X
	python3 mk.py > e.hwtrace || atf_fail "cannot craft e.hwtrace"
	run_status 0 "$HWTRACE" info e.hwtrace
	if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" out; then
		atf_fail "info printed control characters: $(grep -n "$(printf '\033')" out | cat -v)"
	fi
	expect_line out 'host: \e]0;pwned\x07\e[2J'
	expect_line out 'command: /bin/x \e[31mred\r\xc2\x9b'
	expect_line out "  stream 0 's\\e[1m': none, pid -1, tid -1, cpu -1, 0 chunks, 0 bytes"
	run_status 0 "$HWTRACE" info --json e.hwtrace
	grep -qF '"host":"\u001b]0;pwned\u0007\u001b[2J"' out ||
	    atf_fail "info --json does not carry the host exactly: $(cut -c1-300 out)"

	"$HWTRACE_BUILD/bench/qmkdb" fix.db "$HWTRACE_SRC/tests/query/fixture.sql" ||
	    atf_fail "cannot make the fixture database"
	sqlite3 fix.db "UPDATE symbols SET name = char(27) || ']0;x' || char(7) || name WHERE id = 1"
	run_status 0 "$HWTRACE" query fix.db sql "SELECT name FROM symbols WHERE id = 1"
	if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" out; then
		atf_fail "the table printed control characters: $(cat -v out)"
	fi
	grep -q '^\\e\]0;x\\x07' out || atf_fail "expected the name escaped, got: $(cat -v out)"
	run_status 0 "$HWTRACE" query --format json fix.db sql "SELECT name FROM symbols WHERE id = 1"
	grep -qF '\u001b]0;x\u0007' out || atf_fail "JSON is not exact: $(cat -v out)"
	# Messages quote what they refuse.
	run_status 1 "$HWTRACE" query fix.db sql "SELECT * FROM \"$(printf '\033[2J')\""
	if LC_ALL=C grep -q "$(printf '\033')" err; then
		atf_fail "an error message printed ESC: $(cat -v err)"
	fi
}

atf_test_case json_bomb_bounded
json_bomb_bounded_head()
{
	atf_set descr "a 20 MB archive whose manifest holds 20 million JSON values is refused by info in bounded memory (jansson would need 0.8 GB)"
	atf_set require.progs "python3 zstd"
}
json_bomb_bounded_body()
{
	cat > mk.py <<'X'
import os, subprocess, sys, tarfile
n = 20000000
d = bytearray(2 * n - 1)
d[0::2] = bytes(48 + b % 10 for b in os.urandom(n))
d[1::2] = b"," * (n - 1)
man = (b'{"format": "1.0", "writer": "craft", "host": "h", "source": "step", '
       b'"source_version": null, "sideband_origin": null, "caveats": [], '
       b'"cpu": {"vendor": "amd", "family": 25, "model": 1, "stepping": 1, '
       b'"brand": ""}, "argv": ["x"], "start_ns": 0, "timeconv": null, '
       b'"pad": [' + bytes(d) + b']}')
ti = tarfile.TarInfo("hwtrace.json")
ti.size = len(man)
b = ti.tobuf(format=tarfile.PAX_FORMAT) + man + b"\0" * ((512 - len(man) % 512) % 512)
open("m.tmp", "wb").write(b)
sys.stdout.buffer.write(subprocess.run(["zstd", "-q", "-c", "m.tmp"],
    capture_output=True, check=True).stdout)
X
	python3 mk.py > j.hwtrace || atf_fail "cannot craft j.hwtrace"
	rm -f m.tmp
	/usr/bin/time -f %M -o rss "$HWTRACE" info j.hwtrace >out 2>err
	st=$?
	[ $st -eq 1 ] || atf_fail "info: exit status $st, expected 1"
	grep -q "hwtrace.json: more than 1048576 JSON values" err ||
	    atf_fail "expected the JSON value limit, got: $(cat err)"
	[ "$(tail -n 1 rss)" -lt 524288 ] ||
	    atf_fail "info took $(tail -n 1 rss) KB at peak, the limit is 512 MB"
}

atf_init_test_cases()
{
	atf_add_test_case json_bomb_bounded
	atf_add_test_case terminal_escapes_escaped
	atf_add_test_case redact_args
	atf_add_test_case partial_link_not_followed
	atf_add_test_case temporaries_created_exclusively
	atf_add_test_case outputs_are_private
	atf_add_test_case cache_tied_to_its_archive
	atf_add_test_case cache_of_another_user_refused
}
