/*
 * The reference for scripts/bench_allreduce.sh: a bare MPI_Allreduce loop
 * timed with MPI_Wtime, the way a hand-written benchmark would do it.
 * usage: bare_allreduce BYTES ITERS REPS WARMUP
 * Prints "BYTES median_us" where each rep is the slowest rank's mean per op.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	size_t bytes, count;
	int iters, reps, warmup, rank;
	float *s, *r;
	double *t;

	MPI_Init(&argc, &argv);
	if (argc != 5) {
		fprintf(stderr, "usage: bare_allreduce BYTES ITERS REPS WARMUP\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	bytes = strtoull(argv[1], NULL, 10);
	iters = atoi(argv[2]);
	reps = atoi(argv[3]);
	warmup = atoi(argv[4]);
	count = bytes / sizeof(float);
	s = calloc(count, sizeof(float));
	r = calloc(count, sizeof(float));
	t = calloc((size_t)reps, sizeof(double));
	for (size_t i = 0; i < count; i++)
		s[i] = r[i] = 1.0f;  /* touch every page, as real data would */
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (int i = 0; i < warmup; i++)
		MPI_Allreduce(s, r, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
	for (int k = 0; k < reps; k++) {
		double t0, dt;

		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int i = 0; i < iters; i++)
			MPI_Allreduce(s, r, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		dt = (MPI_Wtime() - t0) / iters;
		MPI_Reduce(&dt, &t[k], 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	}
	if (rank == 0) {
		qsort(t, (size_t)reps, sizeof(double), cmp);
		printf("%zu %.3f\n", bytes, (reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2) * 1e6);
	}
	free(s);
	free(r);
	free(t);
	MPI_Finalize();
	return 0;
}
