#! /usr/bin/env atf-sh
# SPDX-License-Identifier: BSD-2-Clause
#
# Hostile binaries: copies of a fixture program with bytes changed in
# what follows its loaded code (DWARF, symbol and string tables, section
# headers), each carried in a synthetic archive (bench/ixgen, which
# follows the unchanged code).  index and the query verbs must answer or
# refuse with exit 1 and a message; never a signal, a sanitizer report
# (exit 86 under `make sanitize`) or a hang.  The mutations are the same
# on every run: a Park-Miller generator in awk, seeded by the case.
# HWTR_ELFMUT_N sets how many (32 by default) for a longer check by hand,
# HWTR_ELFMUT_FROM the first (1 by default), to go on with a campaign.

. "$(atf_get_srcdir)/../env.sh"
. "$HWTRACE_SRC/tests/lib/hwtr_test.sh"

GEN="$HWTRACE_BUILD/bench/ixgen"
PROG="$HWTRACE_PROGS/calls"

# first_unloaded ELF: the file offset (decimal) of the first section
# with contents that is not loaded (objdump -h: CONTENTS without ALLOC).
first_unloaded()
{
	objdump -h "$1" | awk '
	    $1 ~ /^[0-9]+$/ { off = $6; next }
	    /CONTENTS/ && !/ALLOC/ && off != "" {
		v = 0
		for (i = 1; i <= length(off); i++)
			v = v * 16 + index("0123456789abcdef",
			    tolower(substr(off, i, 1))) - 1
		if (min == "" || v < min) min = v
		off = ""
	    }
	    END { if (min != "") print min }'
}

# edits SEED START SIZE: 1 to 24 lines "OFFSET VALUE": bytes to change,
# one in four in the last 4 KiB (section headers), the others anywhere
# from START on.
edits()
{
	awk -v x="$1" -v start="$2" -v size="$3" '
	    function r() { x = (x * 16807) % 2147483647; return x }
	    BEGIN {
		r(); r()
		k = 1 + r() % 24
		for (j = 0; j < k; j++) {
			if (r() % 4 == 0)
				off = size - 4096 + r() % 4096
			else
				off = start + r() % (size - start)
			print off, r() % 256
		}
	    }'
}

# mutate SEED OUT: $PROG with edits SEED applied, in OUT.
mutate()
{
	cp "$PROG" "$2" && chmod u+w "$2" || atf_fail "cannot copy $PROG"
	edits "$1" "$start" "$size" | while read -r off val; do
		printf "\\$(printf %03o "$val")" |
		    dd of="$2" bs=1 seek="$off" conv=notrunc status=none ||
		    atf_fail "dd into $2 at $off failed"
	done
}

# judge WHAT STATUS ERRFILE: fail on a status other than 0 and 1, and on
# exit 1 without a message.
judge()
{
	case $2 in
	0) ;;
	1) [ -s "$3" ] || atf_fail "$1: exit 1 with nothing on stderr" ;;
	124) atf_fail "$1: still running after 60 s" ;;
	*) atf_fail "$1: exit status $2: $(oneline "$3" 2000)" ;;
	esac
}

atf_test_case mutated_binaries
mutated_binaries_head()
{
	atf_set descr "index -j 2 and ten query verbs on archives whose binary has bytes changed after its code (DWARF, symbols, section headers): exit 0 or 1 with a message, never a signal or a hang"
	atf_set require.progs "objdump awk dd timeout"
	atf_set timeout 1800
}
mutated_binaries_body()
{
	need_gen
	start=$(first_unloaded "$PROG")
	size=$(wc -c <"$PROG")
	[ -n "$start" ] && [ "$start" -lt "$size" ] ||
	    atf_fail "no unloaded section in $PROG (objdump -h)"
	n=${HWTR_ELFMUT_N:-32}
	i=${HWTR_ELFMUT_FROM:-1}
	last=$((i + n - 1))
	made=0
	indexed=0
	while [ $i -le $last ]; do
		mutate $i m.elf
		rm -f a.hwtrace a.db
		# ixgen may refuse a binary it cannot read; index never sees
		# it then.  Its seed i: seed 23 leads into abort()'s loop
		# without trace (t_stuck), which once hung index.
		if ! timeout 60 "$GEN" -n 100000 -t 1 -s $i m.elf a.hwtrace \
		    >gen.out 2>&1; then
			i=$((i + 1))
			continue
		fi
		made=$((made + 1))
		timeout 60 "$HWTRACE" index -q -j 2 -o a.db a.hwtrace \
		    >ix.out 2>ix.err
		st=$?
		what="mutation $i ($(edits $i "$start" "$size" | tr '\n' ' '))"
		judge "$what: index" $st ix.err
		if [ -f a.db ]; then
			indexed=$((indexed + 1))
			for v in summary hot bt "last -n 50" coverage \
			    "tree --depth 2" "calls -n 20" "func main" \
			    "insns -n 50" "annotate main"; do
				# $v is split into the verb and its options.
				timeout 60 "$HWTRACE" query a.db $v \
				    >q.out 2>q.err
				judge "$what: query $v" $? q.err
			done
		fi
		i=$((i + 1))
	done
	# Enough of the copies must reach index and the queries, or the
	# case checks nothing.
	[ $made -ge $((n / 2)) ] ||
	    atf_fail "ixgen made archives for $made of $n mutations only"
	[ $indexed -ge $((n / 4)) ] ||
	    atf_fail "index made databases for $indexed of $n mutations only"
	echo "$n mutations: $made archives, $indexed databases"
}

atf_init_test_cases()
{
	atf_add_test_case mutated_binaries
}
