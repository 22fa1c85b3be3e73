# SPDX-License-Identifier: BSD-2-Clause
#
# The tables of docs/CONFORMANCE.md from the output of conform.sh:
#	sh tests/conform/conform.sh build | tee log; awk -f table.awk log
# hwtrace's figure first, then the reference's; for the per-instruction
# and name checkers, how many instructions differ of how many compared.
/^(PASS|FAIL) / {
	st = $1; cell = $2; ck = $3; sub(/:$/, "", ck)
	msg = $0; sub(/^[^:]*: /, "", msg)
	if (!(cell in seen)) { seen[cell] = 1; order[++n] = cell }
	if (ck == "calls-known" || ck == "calls-callgrind") {
		f = msg; sub(/: hwtrace.*/, "", f)
		m = msg; sub(/.*: hwtrace /, "", m); gsub(/[^0-9 ]/, " ", m)
		k = split(m, b, " "); v = f " " b[1] "/" b[k]
	} else if (ck == "insns-callgrind") {
		v = msg; sub(/.*hwtrace /, "", v); sub(/, callgrind /, "/", v)
	} else if (ck == "bt-gdb") {
		v = msg; gsub(/ ',/, "',", v); sub(/ '$/, "'", v)
	} else if (ck ~ /^fast-libipt/) {
		split(msg, a, " "); v = a[1] " of " a[3]
		if (ck == "fast-libipt-4k")
			v = "4 KiB segments " v
		ck = "fast-libipt"
	} else if (ck == "build" || ck == "capture") {
		v = ck ": " msg; ck = "calls-known"
	} else {
		split(msg, a, " "); v = a[1] " of " a[3]
	}
	if (st == "FAIL")
		v = "**FAIL** " v
	key = cell SUBSEP ck
	r[key] = (key in got) ? r[key] "; " v : v
	got[key] = 1
}
# A checker skipped ("SKIP cell checker: why"): that column only.
/^SKIP [^ :]+ [^ ]+: / { c = $2; ck = $3; sub(/:$/, "", ck)
	sub(/-4k$/, "", ck); m = $0; sub(/^[^:]*: /, "", m)
	r[c SUBSEP ck] = "skipped: " m; next }
/^SKIP / { c = $2; sub(/:$/, "", c); if (!(c in seen)) { seen[c] = 1
	order[++n] = c }; m = $0; sub(/^[^:]*: /, "", m)
	r[c SUBSEP "calls-known"] = r[c SUBSEP "bt-gdb"] = "skipped: " m }
END {
	print "| cell | calls-known | calls-callgrind | insns-callgrind | " \
	    "insn-callgrind | names-nm | names-addr2line | fast-libipt |"
	print "|---|---|---|---|---|---|---|---|"
	for (i = 1; i <= n; i++) {
		c = order[i]
		if (c ~ /^(crash|crashsig|inline)-/)
			continue
		printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", c,
		    r[c SUBSEP "calls-known"], r[c SUBSEP "calls-callgrind"],
		    r[c SUBSEP "insns-callgrind"], r[c SUBSEP "insn-callgrind"],
		    r[c SUBSEP "names-nm"], r[c SUBSEP "names-addr2line"],
		    r[c SUBSEP "fast-libipt"]
	}
	print ""
	print "| crash cell | bt-gdb | fast-libipt |"
	print "|---|---|---|"
	for (i = 1; i <= n; i++)
		if ((c = order[i]) ~ /^(crash|crashsig|inline)-/)
			printf "| %s | %s | %s |\n", c, r[c SUBSEP "bt-gdb"],
			    r[c SUBSEP "fast-libipt"]
}
