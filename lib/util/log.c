// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/runtime/log.h>

#include <stdarg.h>
#include <stdio.h>

bool xnf_verbose;

static void emit(const char *level, const char *fmt, va_list ap)
{
	fprintf(stderr, "xnf: %s", level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void xnf_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit("error: ", fmt, ap);
	va_end(ap);
}

void xnf_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit("warning: ", fmt, ap);
	va_end(ap);
}

void xnf_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit("", fmt, ap);
	va_end(ap);
}
