/*
 * A stand-in for libFuzzer's main, so make check runs the fuzz target with
 * gcc: every file named on the command line, then N inputs from a seeded
 * generator of option-like tokens, then (when files were named) N mutations
 * of those files: bit flips, syntax bytes, cut, repeated and spliced ranges.
 * usage: fuzz_X [-n N] [-s SEED] FILE...
 * Prints "fuzz: N inputs" and exits 0; a broken invariant aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const tokens[] = {
	"-b", "-e", "-f", "-i", "-n", "-w", "-r", "-c", "-o", "-d", "-t", "-v", "-q", "-B",
	"--op", "--root", "--timeout", "--list", "--help", "--fz-size", "--fz-int=",
	"--fz-double", "--fz-string", "8", "0", "1", "2", "64K", "1M", "8G", "16T", "-5",
	"12Q", "1KiB", "18446744073709551615", "99999999999999999999", "1e308", "nan",
	"inf", "-0", "float,double", "sum,max", "", "=", "--", "-", "all_reduce", "1.5",
};

static uint64_t rng = 88172645463325252ULL;

#define MAX_FILES 64
#define FILE_MAX 65536
static unsigned char files[MAX_FILES][FILE_MAX];
static size_t file_len[MAX_FILES];
static int nfiles;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static const unsigned char syntax[] = "{}[]\":,\n\\0919-.eE+ \0\xff";

/* one to four mutations of a corpus file into buf; returns the length */
static size_t mutate(unsigned char *buf, size_t cap)
{
	int f = (int)(next() % nfiles), ops = 1 + (int)(next() % 4);
	size_t len = file_len[f];

	memcpy(buf, files[f], len);
	for (int o = 0; o < ops; o++) {
		size_t at = len ? next() % len : 0, n = 1 + next() % 16;
		int g = (int)(next() % nfiles);

		switch (next() % 6) {
		case 0:         /* flip a bit */
			if (len)
				buf[at] ^= (unsigned char)(1u << (next() % 8));
			break;
		case 1:         /* a byte that matters to a parser */
			if (len)
				buf[at] = syntax[next() % (sizeof(syntax) - 1)];
			break;
		case 2:         /* cut the rest: a truncated file */
			len = at;
			break;
		case 3:         /* delete a range */
			if (at + n > len)
				n = len - at;
			memmove(buf + at, buf + at + n, len - at - n);
			len -= n;
			break;
		case 4:         /* repeat a range */
			if (at + n > len)
				n = len - at;
			if (len + n <= cap) {
				memmove(buf + at + n, buf + at, len - at);
				len += n;
			}
			break;
		default:        /* splice a slice of another file in */
			if (file_len[g]) {
				size_t from = next() % file_len[g];

				if (from + n > file_len[g])
					n = file_len[g] - from;
				if (len + n <= cap) {
					memmove(buf + at + n, buf + at, len - at);
					memcpy(buf + at, files[g] + from, n);
					len += n;
				}
			}
		}
	}
	return len;
}

int main(int argc, char **argv)
{
	static unsigned char buf[FILE_MAX];
	long n = 10000, done = 0;
	int first = 1;

	for (; first + 1 < argc && argv[first][0] == '-'; first += 2) {
		if (!strcmp(argv[first], "-n"))
			n = atol(argv[first + 1]);
		else if (!strcmp(argv[first], "-s"))
			rng = strtoull(argv[first + 1], NULL, 10) | 1;
	}
	for (int i = first; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		size_t len;

		if (!f) {
			perror(argv[i]);
			return 2;
		}
		len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		if (nfiles < MAX_FILES && len <= FILE_MAX) {
			memcpy(files[nfiles], buf, len);
			file_len[nfiles++] = len;
		}
		LLVMFuzzerTestOneInput(buf, len);
		done++;
	}
	for (long k = 0; k < n; k++) {
		size_t len = 0;
		int parts = 1 + (int)(next() % 12);

		for (int p = 0; p < parts && len < sizeof(buf) - 64; p++) {
			const char *t = tokens[next() % (sizeof(tokens) / sizeof(tokens[0]))];
			size_t tl = strlen(t);

			memcpy(buf + len, t, tl);
			len += tl;
			/* sometimes glue tokens or flip a byte */
			if (next() % 5)
				buf[len++] = '\0';
			if (next() % 9 == 0 && len)
				buf[next() % len] ^= (unsigned char)(1u << (next() % 8));
		}
		LLVMFuzzerTestOneInput(buf, len);
		done++;
	}
	for (long k = 0; nfiles && k < n; k++) {
		size_t len = mutate(buf, sizeof(buf));

		LLVMFuzzerTestOneInput(buf, len);
		done++;
	}
	printf("fuzz: %ld inputs\n", done);
	return 0;
}
