/*
 * tests/fuzz/invariant.h: CHECK(cond) for fuzz targets. A broken invariant
 * says which, keeps the input in fuzz-failure.bin (a regression fixture to
 * be) and aborts, so libFuzzer and the seeded driver both stop on it. The
 * target sets fuzz_input/fuzz_input_size at the start of each input.
 */
#ifndef CCDIAG_FUZZ_INVARIANT_H
#define CCDIAG_FUZZ_INVARIANT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const uint8_t *fuzz_input;
static size_t fuzz_input_size;

#define CHECK(cond) do { if (!(cond)) fuzz_broken(#cond, __FILE__, __LINE__); } while (0)

static void fuzz_broken(const char *what, const char *file, int line)
{
	FILE *f = fopen("fuzz-failure.bin", "wb");

	if (f) {
		fwrite(fuzz_input, 1, fuzz_input_size, f);
		fclose(f);
	}
	fprintf(stderr, "%s:%d: invariant broken: %s (input in fuzz-failure.bin)\n", file, line, what);
	abort();
}

#endif
