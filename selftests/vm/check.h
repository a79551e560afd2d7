/* SPDX-License-Identifier: GPL-2.0 */
/*
 * check.h - the result lines of the VM tests' C helpers (attach_test,
 * token_test): "ok - ..." or "not ok - ..." per check, counted in
 * failures; the calling test passes when failures is 0 at the end.
 */
#ifndef SELFTESTS_VM_CHECK_H
#define SELFTESTS_VM_CHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int failures;

static void __attribute__((format(printf, 2, 3)))
check(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	if (!cond)
		failures++;
}

#endif /* SELFTESTS_VM_CHECK_H */
