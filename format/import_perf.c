/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

#include <string.h>

#include "hwtrace.h"
#include "hwtr_common.h"
#include "hwtr_import.h"

static int
perf_bid(const char *path)
{
	return (0);
}

static int
perf_load(const char *path, const struct hwtr_import_opts *o,
    struct hwtr_import_sink *sk)
{
	hwtr_import_err(sk->errbuf, sk->errlen, "not yet");
	return (-HWTR_E_INVAL);
}

const struct hwtr_importer hwtr_importer_perf = {
	.name = "perf",
	.bid = perf_bid,
	.load = perf_load,
};
