# SPDX-License-Identifier: BSD-2-Clause
#
# Helpers of the fleet tests (sourced): a throw-away PostgreSQL server from
# Debian's package, in a temporary directory, listening on a Unix socket
# only.  initdb refuses to run as root, so as root the server belongs to
# the system user "nobody" (runuser).  pg_start skips the test with the
# reason when no server can be started; pg_stop is for the cleanup.

# The newest PostgreSQL's bin directory, or nothing.
pg_bindir()
{
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5 -n -r); do
		[ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && { echo "$d"; return 0; }
	done
	return 1
}

# Run a server command as the server's owner.
pg_as()
{
	if [ "$(id -u)" -eq 0 ]; then
		runuser -u nobody -- "$@"
	else
		"$@"
	fi
}

# pg_start: sets PGDIR (data and socket), PGBIN, PGUSERNAME and URL (the
# database "hwtr"); records PGDIR in ./pgdir for pg_stop.
pg_start()
{
	PGBIN=$(pg_bindir) || atf_skip "PostgreSQL is not installed (/usr/lib/postgresql/*/bin/initdb)"
	command -v psql >/dev/null || atf_skip "psql is not installed"
	PGDIR=$(mktemp -d /tmp/hwtr-pg.XXXXXX) || atf_fail "mktemp failed"
	echo "$PGDIR" > pgdir
	if [ "$(id -u)" -eq 0 ]; then
		id nobody >/dev/null 2>&1 || atf_skip "running as root and no user 'nobody' to own the server"
		command -v runuser >/dev/null || atf_skip "running as root and no runuser(1)"
		chown nobody "$PGDIR"
		PGUSERNAME=nobody
	else
		PGUSERNAME=$(id -un)
	fi
	chmod 700 "$PGDIR"
	if ! pg_as "$PGBIN/initdb" -D "$PGDIR/data" -A trust -U "$PGUSERNAME" \
	    --no-sync > "$PGDIR/initdb.log" 2>&1; then
		atf_skip "initdb failed: $(tail -n 3 "$PGDIR/initdb.log" | tr '\n' ' ')"
	fi
	if ! pg_as "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w \
	    -o "-k $PGDIR -c listen_addresses='' -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
	    start > "$PGDIR/pg_ctl.log" 2>&1; then
		atf_skip "PostgreSQL did not start: $(tail -n 3 "$PGDIR/server.log" | tr '\n' ' ')"
	fi
	URL="postgresql://$PGUSERNAME@/hwtr?host=$PGDIR"
	psql -X -q -v ON_ERROR_STOP=1 "postgresql://$PGUSERNAME@/postgres?host=$PGDIR" \
	    -c "CREATE DATABASE hwtr" || atf_fail "cannot create database hwtr"
}

# psql giving one value per line, fields split by '|': $PSQL "$URL" -c SQL
# (a command, not a function, so that atf_check can run it).
PSQL="psql -X -q -A -t -v ON_ERROR_STOP=1"

# pg_is WANT SQL: SQL's answer in the database $URL, as $PSQL prints it,
# is the line WANT (atf_check shows both when it is not).
pg_is()
{
	atf_check -s exit:0 -o inline:"$1\n" $PSQL "$URL" -c "$2"
}

pg_stop()
{
	[ -f pgdir ] || return 0
	d=$(cat pgdir)
	b=$(pg_bindir) || return 0
	[ -d "$d/data" ] && pg_as "$b/pg_ctl" -D "$d/data" -m immediate stop >/dev/null 2>&1
	rm -rf "$d"
}
