/* test.h: the unit-test harness.  ASSERT(expected, actual) compares two
 * integers; CHECK(cond) a condition.  Each test binary prints one line
 * per failure and exits non-zero if any failed. */
#ifndef TLX_TEST_H
#define TLX_TEST_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;

#define ASSERT(expected, actual)                                              \
	do {                                                                  \
		long long e_ = (long long)(expected), a_ = (long long)(actual); \
		if (e_ != a_) {                                               \
			fprintf(stderr, "%s:%d: %s: expected %lld, got %lld\n", \
				__FILE__, __LINE__, #actual, e_, a_);         \
			test_failures++;                                      \
		}                                                             \
	} while (0)
#define CHECK(cond)                                                           \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
				__LINE__, #cond);                             \
			test_failures++;                                      \
		}                                                             \
	} while (0)
#define ASSERT_STR(expected, actual)                                          \
	do {                                                                  \
		const char *e_ = (expected), *a_ = (actual);                  \
		if (!a_ || strcmp(e_, a_) != 0) {                             \
			fprintf(stderr, "%s:%d: %s: expected \"%s\", got \"%s\"\n", \
				__FILE__, __LINE__, #actual, e_, a_ ? a_ : "(null)"); \
			test_failures++;                                      \
		}                                                             \
	} while (0)
#define TEST_MAIN_END()                                                       \
	do {                                                                  \
		if (test_failures)                                            \
			fprintf(stderr, "%d failure(s)\n", test_failures);    \
		return test_failures ? 1 : 0;                                 \
	} while (0)
#endif
