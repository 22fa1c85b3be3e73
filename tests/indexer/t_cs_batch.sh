#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Copyright (c) 2026 The hwtrace authors
#
# CoreSight batches: a CoreSight buffer is one segment, whose operations
# go to the writer in batches of HWTRACE_IX_CS_BATCH elements per trace ID
# while OpenCSD is still decoding, trace IDs without trace left for the
# end.  On every snapshot of OpenCSD's corpus the database must be the one
# an index without batches (HWTRACE_IX_CS_BATCH=0) writes: sqlite3 .dump
# compared with batches of 1 element (every element its own batch, and
# trace IDs left for later then get trace after all, so that the index is
# done again), of 7, and of the default size, at -j 1 and -j 2.  The dump
# holds every table, the cycle counts of TC2 and Snowball included.

. "$(atf_get_srcdir)/../env.sh"

SNAPS=$HWTRACE_CORPUS/opencsd/snapshots

# index BATCH JOBS ARCHIVE DB
index()
{
	if [ "$1" = default ]; then
		env -u HWTRACE_IX_CS_BATCH "$HWTRACE" index -q -j "$2" -o "$4" "$3" 2>err
	else
		HWTRACE_IX_CS_BATCH=$1 "$HWTRACE" index -q -j "$2" -o "$4" "$3" 2>err
	fi || atf_fail "index $3 (batches of $1, -j $2) failed: $(tr '\n' '|' < err)"
}

atf_test_case same_as_unbatched
same_as_unbatched_head()
{
	atf_set descr "every OpenCSD snapshot: batches of 1, 7 and the default size give the database an index without batches gives, at -j 1 and -j 2"
	atf_set timeout 300
}
same_as_unbatched_body()
{
	[ -d "$SNAPS" ] || atf_skip "shared corpus not found at $SNAPS"
	n=0 cc=0
	for d in "$SNAPS"/*/; do
		name=$(basename "$d")
		"$HWTRACE" import "$d" -o "$name.hwtrace" 2>err ||
		    atf_fail "$name: import failed: $(tr '\n' '|' < err)"
		index 0 1 "$name.hwtrace" whole.db
		sqlite3 -batch whole.db .dump > whole.sql
		for run in 1:1 7:2 default:1 default:2; do
			index "${run%:*}" "${run#*:}" "$name.hwtrace" b.db
			sqlite3 -batch b.db .dump > b.sql
			cmp -s whole.sql b.sql ||
			    atf_fail "$name: batches of ${run%:*} at -j ${run#*:} give another database than no batches: $(diff whole.sql b.sql | head -6 | tr '\n' '|')"
			[ "$run" != default:1 ] || cp b.db j1.db
		done
		cmp -s j1.db b.db ||
		    atf_fail "$name: -j 1 and -j 2 database files differ"
		n=$((n + 1))
		cc=$((cc + $(sqlite3 -batch whole.db "SELECT count(*) FROM cycles")))
	done
	[ "$n" -gt 0 ] || atf_skip "no snapshot in $SNAPS"
	# Not vacuous for cycle counts: TC2 and Snowball have them.
	[ "$cc" -gt 0 ] || atf_fail "no snapshot gave a cycles row"
	echo "$n snapshots: the same database with and without batches ($cc cycle counts)"
}

atf_init_test_cases()
{
	atf_add_test_case same_as_unbatched
}
