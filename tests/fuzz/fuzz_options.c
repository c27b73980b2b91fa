/*
 * Fuzz target: ccprobe's command line. The input is argv, NUL separated.
 * Whatever it holds, options_parse must return 0 or -1, leave a one-line
 * message on -1, and on 0 leave options that the sweep can use. Built
 * with driver.c for make check (fixed corpus + seeded random inputs), or
 * with clang -fsanitize=fuzzer for open-ended fuzzing (make fuzz).
 */
#include "../../bench/sweep.h"
#include "../../core/options.h"
#include "../../core/size.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>


static size_t fz_size;
static int fz_int;
static double fz_double;
static const char *fz_string;
static const struct cc_param fz_params[] = {
	{ "fz-size", CC_PARAM_SIZE, &fz_size, "" },
	{ "fz-int", CC_PARAM_INT, &fz_int, "" },
	{ "fz-double", CC_PARAM_DOUBLE, &fz_double, "" },
	{ "fz-string", CC_PARAM_STRING, &fz_string, "" },
	{ NULL, 0, NULL, NULL },
};
static const struct cc_param *const fz_all[] = { fz_params, NULL };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *argv[66];
	int argc = 1, rc;
	struct cc_options o;
	char err[512];
	size_t v, sizes[SWEEP_MAX_SIZES];

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = '\0';
	argv[0] = "ccprobe";
	for (size_t i = 0; i < size && argc < 64; i++) {
		argv[argc++] = buf + i;
		i += strlen(buf + i);
	}
	argv[argc] = NULL;
	options_defaults(&o);
	err[0] = '\0';
	rc = options_parse(&o, argc, argv, fz_all, err, sizeof(err));
	if (rc != 0 && rc != -1)
		abort();
	if (rc == -1 && (!err[0] || strchr(err, '\n')))
		abort();
	if (rc == 0) {
		if (o.min_bytes > o.max_bytes || o.factor < 2 || o.iters < 1 || o.reps < 1 ||
		    o.warmup < 0 || o.check_iters < 0 || o.timeout_s < 0 || o.nnames < 0 ||
		    o.nnames > argc)
			abort();
		/* the sweep ends, stays in range and grows */
		if (o.min_bytes > 0) {
			size_t n = sweep_sizes(&o, sizes, SWEEP_MAX_SIZES);

			for (size_t i = 0; i < n; i++)
				if (sizes[i] < o.min_bytes || sizes[i] > o.max_bytes ||
				    (i && sizes[i] <= sizes[i - 1]))
					abort();
		}
	}
	/* every argument as a size: parse and format agree */
	for (int i = 1; i < argc; i++) {
		char s[32];

		if (size_parse(argv[i], &v) == 0 &&
		    (size_parse(size_format(v, s, sizeof(s)), &sizes[0]) || sizes[0] != v))
			abort();
	}
	free(buf);
	return 0;
}
