/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The checks of every unit test.  A failed check prints
 *   file:line: check failed: EXPRESSION[: message]
 * and counts in `failures`; `checks` counts them all.
 *
 *   CHECK(cond)                       the expression is the message
 *   CHECK(cond, "fmt", args...)       and a printf message with the values
 *   CHECK_EQ_U(got, want)             unsigned values, both printed
 *   CHECK_EQ_I(got, want)             signed values, both printed
 *   CHECK_STREQ(got, want)            strings (NULL allowed), both printed
 *
 * After CHECK_MAX_FAILURES failures the test stops: a loop of thousands of
 * checks gone wrong would bury the first failure.  check_summary() ends
 * main(): it prints the totals and returns the exit status.
 */
#ifndef SLUICE_TEST_CHECK_H
#define SLUICE_TEST_CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_MAX_FAILURES 20

__attribute__((unused)) static int failures, checks;

__attribute__((unused)) static void check_failed(const char *file, int line, const char *expr)
{
	fprintf(stderr, "%s:%d: check failed: %s", file, line, expr);
}

__attribute__((unused, format(printf, 1, 2))) static void check_msg(const char *fmt, ...)
{
	va_list ap;

	fputs(": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

__attribute__((unused)) static void check_end(void)
{
	fputc('\n', stderr);
	if (++failures >= CHECK_MAX_FAILURES) {
		fprintf(stderr, "%d checks failed: stopping\n", failures);
		exit(1);
	}
}

/* The check of `cond`, reported as `expr`. */
#define CHECK_AS(cond, expr, ...)                                        \
	do {                                                             \
		checks++;                                                \
		if (!(cond)) {                                           \
			check_failed(__FILE__, __LINE__, expr);          \
			__VA_OPT__(check_msg(__VA_ARGS__);)              \
			check_end();                                     \
		}                                                        \
	} while (0)

#define CHECK(cond, ...) CHECK_AS(cond, #cond __VA_OPT__(, ) __VA_ARGS__)

#define CHECK_EQ_U(got, want)                                                          \
	do {                                                                           \
		uint64_t got_ = (uint64_t)(got), want_ = (uint64_t)(want);             \
		CHECK_AS(got_ == want_, #got " == " #want,                             \
			 "%" PRIu64 " (0x%" PRIx64 "), want %" PRIu64 " (0x%" PRIx64 ")", \
			 got_, got_, want_, want_);                                    \
	} while (0)

#define CHECK_EQ_I(got, want)                                                             \
	do {                                                                              \
		int64_t got_ = (int64_t)(got), want_ = (int64_t)(want);                   \
		CHECK_AS(got_ == want_, #got " == " #want, "%" PRId64 ", want %" PRId64, got_, \
			 want_);                                                          \
	} while (0)

#define CHECK_STREQ(got, want)                                                           \
	do {                                                                             \
		const char *got_ = (got), *want_ = (want);                               \
		CHECK_AS(got_ == want_ || (got_ && want_ && strcmp(got_, want_) == 0),   \
			 #got " == " #want, "\"%s\", want \"%s\"", got_ ? got_ : "(null)", \
			 want_ ? want_ : "(null)");                                      \
	} while (0)

/* The last line of main(): totals on stdout, 0 or 1. */
__attribute__((unused)) static int check_summary(const char *name)
{
	if (failures) {
		fprintf(stderr, "%s: %d of %d checks failed\n", name, failures, checks);
		return 1;
	}
	printf("%s: %d checks passed\n", name, checks);
	return 0;
}

#endif /* SLUICE_TEST_CHECK_H */
