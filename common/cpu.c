/*-
 * SPDX-License-Identifier: BSD-2-Clause
 *
 * Copyright (c) 2026 The hwtrace authors
 */

/*
 * The identity of the CPU this runs on, from CPUID: what a capture records
 * in its archive, what an import with --cpu auto stores (as libipt's
 * ptxed reads it with pt_cpu_read()) and the perf source's HEADER_CPUID.
 */

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <string.h>

#include "hwtr_common.h"

int
hwtr_cpu_host_id(char vendor[13], unsigned *family, unsigned *model,
    unsigned *stepping)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d, fam, mod;
#endif

	vendor[0] = '\0';
	*family = *model = *stepping = 0;
#if defined(__x86_64__) || defined(__i386__)
	if (!__get_cpuid(0, &a, &b, &c, &d))
		return (-HWTR_E_UNSUPPORTED);
	memcpy(vendor, &b, 4);
	memcpy(vendor + 4, &d, 4);
	memcpy(vendor + 8, &c, 4);
	vendor[12] = '\0';
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return (-HWTR_E_UNSUPPORTED);
	fam = (a >> 8) & 0xf;
	mod = (a >> 4) & 0xf;
	if (fam == 0xf)
		fam += (a >> 20) & 0xff;
	if (fam == 0x6 || fam >= 0xf)
		mod += ((a >> 16) & 0xf) << 4;
	*family = fam;
	*model = mod;
	*stepping = a & 0xf;
	return (0);
#else
	return (-HWTR_E_UNSUPPORTED);
#endif
}

void
hwtr_cpu_host(struct hwtr_cpu *cpu)
{
	unsigned fam, model, step;
	char vendor[13];

	memset(cpu, 0, sizeof(*cpu));
	if (hwtr_cpu_host_id(vendor, &fam, &model, &step) == 0 ||
	    vendor[0] != '\0') {
		if (strcmp(vendor, "GenuineIntel") == 0)
			cpu->vendor = HWTR_CPU_INTEL;
		else if (strcmp(vendor, "AuthenticAMD") == 0)
			cpu->vendor = HWTR_CPU_AMD;
		cpu->family = (uint16_t)fam;
		cpu->model = (uint8_t)model;
		cpu->stepping = (uint8_t)step;
	}
#if defined(__x86_64__) || defined(__i386__)
	{
		unsigned a, b, c, d, i;

		/* The brand string: 48 bytes in leaves 0x80000002..4. */
		if (__get_cpuid(0x80000000, &a, &b, &c, &d) &&
		    a >= 0x80000004) {
			for (i = 0; i < 3; i++) {
				__get_cpuid(0x80000002 + i, &a, &b, &c, &d);
				memcpy(cpu->brand + 16 * i, &a, 4);
				memcpy(cpu->brand + 16 * i + 4, &b, 4);
				memcpy(cpu->brand + 16 * i + 8, &c, 4);
				memcpy(cpu->brand + 16 * i + 12, &d, 4);
			}
			cpu->brand[48] = '\0';
		}
	}
#endif
}
