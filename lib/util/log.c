// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <xnf/runtime/log.h>

#include <stdarg.h>
#include <stdio.h>

bool xnf_verbose;

/* Messages quote what the user gave (a rule, a file name): its control bytes are written
 * as \xNN, so a message never moves the terminal's cursor or changes its colours. */
static void emit(const char *level, const char *fmt, va_list ap)
{
	char text[2048];

	vsnprintf(text, sizeof(text), fmt, ap);
	fprintf(stderr, "xnf: %s", level);
	for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
		if ((*c < 0x20 && *c != '\n' && *c != '\t') || *c == 0x7f)
			fprintf(stderr, "\\x%02x", *c);
		else
			fputc(*c, stderr);
	}
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
