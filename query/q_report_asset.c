/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The script hwtrace report inlines into its page, embedded in the
 * binary so that writing a report needs no file beside it and no
 * network: make builds HWTR_REPORT_JS (build/report/report.js, the
 * drawing libraries npm installed at build time and query/report/'s own
 * code) and compiles this file with its path.  Without it (clang
 * --analyze) the asset is empty and hwtr_q_report() says so.
 */

#include <stddef.h>

#include "q_report.h"

#ifdef HWTR_REPORT_JS
__asm__(".section .rodata\n"
    ".balign 16\n"
    "q_rp_js_start:\n"
    ".incbin \"" HWTR_REPORT_JS "\"\n"
    "q_rp_js_end:\n"
    ".byte 0\n"
    ".previous\n");
extern const char q_rp_js_start[] __asm__("q_rp_js_start");
extern const char q_rp_js_end[] __asm__("q_rp_js_end");

const char *
q_rp_asset(size_t *lenp)
{
	*lenp = (size_t)(q_rp_js_end - q_rp_js_start);
	return (q_rp_js_start);
}
#else
const char *
q_rp_asset(size_t *lenp)
{
	*lenp = 0;
	return ("");
}
#endif
