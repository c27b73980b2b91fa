#include "schedule.h"

#include <stdlib.h>

/*
 * Circle method. With m = n rounded up to even, the m-1 "moving" positions
 * 0..m-2 sit on a circle and position m-1 in the centre. In round r the
 * node at r plays the centre and every other node x plays the node
 * opposite it across the axis through r, which is (2r - x) mod (m-1): the
 * pairs {r+i, r-i}. For odd n the centre is a phantom (m-1 == n), so the
 * node at r has the bye. Each pair {x, y} (x, y < m-1) meets in the single
 * round with 2r = x + y mod (m-1), which exists and is unique because m-1
 * is odd; the centre meets every x once, in round x.
 */
int schedule_rounds(int n)
{
	if (n < 2)
		return 0;
	return n % 2 ? n : n - 1;
}

int schedule_pair(int n, int round, int node)
{
	int k = n % 2 ? n : n - 1;   /* positions on the circle */
	int p;

	if (n < 2 || round < 0 || round >= k || node < 0 || node >= n)
		return -1;
	if (node == k)                /* the centre (even n only) */
		return round;
	if (node == round)
		return n % 2 ? -1 : k;
	p = (2 * round - node) % k;
	return p < 0 ? p + k : p;
}

int schedule_round(int n, int round, int *partner)
{
	int pairs = 0;

	if (n < 2 || round < 0 || round >= schedule_rounds(n))
		return -1;
	for (int x = 0; x < n; x++) {
		partner[x] = schedule_pair(n, round, x);
		if (partner[x] > x)
			pairs++;
	}
	return pairs;
}

int schedule_pack(int n, const int *pairs, int npairs, int *round_of)
{
	/* busy[r * n + x]: node x already plays in round r; at most npairs rounds */
	unsigned char *busy;
	int rounds = 0;

	if (n < 1 || npairs < 0)
		return -1;
	if (npairs == 0)
		return 0;
	busy = calloc((size_t)npairs * (size_t)n, 1);
	if (!busy)
		return -1;
	for (int i = 0; i < npairs; i++) {
		int a = pairs[2 * i], b = pairs[2 * i + 1], r;

		if (a < 0 || a >= n || b < 0 || b >= n || a == b) {
			free(busy);
			return -1;
		}
		for (r = 0; busy[(size_t)r * n + a] || busy[(size_t)r * n + b]; r++)
			;
		busy[(size_t)r * n + a] = busy[(size_t)r * n + b] = 1;
		round_of[i] = r;
		if (r + 1 > rounds)
			rounds = r + 1;
	}
	free(busy);
	return rounds;
}

int schedule_cap(int *round_of, int npairs, int nrounds, int k)
{
	int *count, *first, total = 0;

	if (npairs < 0 || nrounds < 0)
		return -1;
	if (k < 1)
		return nrounds;
	count = calloc((size_t)nrounds + 1, sizeof(int));
	first = calloc((size_t)nrounds + 1, sizeof(int));
	if (!count || !first) {
		free(count);
		free(first);
		return -1;
	}
	for (int i = 0; i < npairs; i++) {
		if (round_of[i] < 0 || round_of[i] >= nrounds) {
			free(count);
			free(first);
			return -1;
		}
		count[round_of[i]]++;
	}
	/* first[r]: the first new round of old round r */
	for (int r = 0; r < nrounds; r++) {
		first[r] = total;
		total += (count[r] + k - 1) / k;
		count[r] = 0;
	}
	for (int i = 0; i < npairs; i++) {
		int r = round_of[i];

		round_of[i] = first[r] + count[r]++ / k;
	}
	free(count);
	free(first);
	return total;
}
