/*
 * report/import_perftest.c: the text output of perftest's ib_write_bw,
 * ib_read_bw, ib_send_bw (one way or -b both ways; MiB/s, the older "MB/sec"
 * label of the same unit, or Gb/s under --report_gbits) and ib_write_lat,
 * ib_read_lat, ib_send_lat: one ib probe record per size, as ccprobe's ib
 * probe writes them (docs/rdma.md), named by what the output says: the local
 * device, and the hosts by the GID's IPv4 address (RoCE) or the LID
 * (InfiniBand). docs/import.md says what cannot be known from it.
 */
#include "import.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXTOK 48

struct st {
	struct imp *im;
	char test[32];           /* write_bw_uni, write_bw_bidir, write_lat, ... */
	int lat;
	char dev[64], link[32], host[64], peer[64];
	double unit_GBps;        /* one unit of the bandwidth columns in GB/s; 0: not seen */
	int c_min, c_max, c_typ, c_avg, c_std, c_p99, c_p999, ncols;
	int rows, closed, titles;
	long head_line;
};

/* "RDMA_Write Bidirectional BW Test" -> write_bw_bidir */
static int title(struct st *st, const char *s, long line)
{
	const char *verb = strstr(s, "RDMA_Write") ? "write" : strstr(s, "RDMA_Read") ? "read" :
			   strstr(s, "Send") ? "send" : NULL;

	if (!verb)
		return imp_fail(st->im, line, "a perftest test perftest's importer does not read: '%s' "
				"(RDMA_Write, RDMA_Read and Send BW and Latency tests are)", s);
	if (st->titles++)
		return imp_fail(st->im, line, "a second perftest test starts here (two runs in one file? "
				"give each as its own file)");
	st->lat = strstr(s, "Latency") != NULL;
	snprintf(st->test, sizeof(st->test), "%s_%s", verb,
		 st->lat ? "lat" : strstr(s, "Bidirectional") ? "bw_bidir" : "bw_uni");
	return 0;
}

/* the host a " local address:" or " remote address:" line and its GID line name */
static void address(char *out, size_t len, char **tok, int k)
{
	for (int i = 0; i + 1 < k; i++)
		if (!strcmp(tok[i], "LID")) {
			snprintf(out, len, "lid-%s", tok[i + 1]);
			return;
		}
}

/* " GID: 00:00:00:00:00:00:00:00:00:00:255:255:192:168:01:02": an IPv4-mapped one names the host */
static void gid(char *out, size_t len, const char *g)
{
	int b[16], n = 0;
	const char *p = g;

	while (n < 16) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v < 0 || v > 255)
			return;
		b[n++] = (int)v;
		if (*end != ':')
			break;
		p = end + 1;
	}
	if (n != 16)
		return;
	for (int i = 0; i < 10; i++)
		if (b[i])
			return;
	if (b[10] == 255 && b[11] == 255)
		snprintf(out, len, "%d.%d.%d.%d", b[12], b[13], b[14], b[15]);
}

static int results_header(struct st *st, char **tok, int k, const char *s, long line)
{
	st->c_min = st->c_max = st->c_typ = st->c_avg = st->c_std = st->c_p99 = st->c_p999 = -1;
	st->head_line = line;
	if (!st->test[0])
		return imp_fail(st->im, line, "a perftest results header before the test's title line");
	if (!st->lat) {
		if (strstr(s, "[Gb/sec]"))
			st->unit_GBps = 1.0 / 8;
		else if (strstr(s, "[MiB/sec]") || strstr(s, "[MB/sec]"))
			st->unit_GBps = 1048576 / 1e9;
		else
			return imp_fail(st->im, line, "a perftest bandwidth header in a unit the importer does "
					"not know (MiB/sec, MB/sec or Gb/sec)");
		st->ncols = 4;
		return 0;
	}
	/* " #bytes #iterations t_min[usec] t_max[usec] t_typical[usec] t_avg[usec] t_stdev[usec] 99% percentile[usec] 99.9% percentile[usec]" */
	for (int i = 0, c = 0; i < k; i++) {
		if (!strncmp(tok[i], "percentile", 10))
			continue;
		if (!strncmp(tok[i], "t_min", 5)) st->c_min = c;
		else if (!strncmp(tok[i], "t_max", 5)) st->c_max = c;
		else if (!strncmp(tok[i], "t_typical", 9)) st->c_typ = c;
		else if (!strncmp(tok[i], "t_avg", 5)) st->c_avg = c;
		else if (!strncmp(tok[i], "t_stdev", 7)) st->c_std = c;
		else if (!strcmp(tok[i], "99%")) st->c_p99 = c;
		else if (!strcmp(tok[i], "99.9%")) st->c_p999 = c;
		c++;
		st->ncols = c;
	}
	if (st->c_typ < 0 && st->c_avg < 0)
		return imp_fail(st->im, line, "a perftest latency header without t_typical or t_avg");
	return 0;
}

static int row(struct st *st, char **tok, int k, long line, int unterminated)
{
	struct imp *im = st->im;
	char el[300];
	double v[16], bytes;
	json_t *rec;

	if (!st->ncols)
		return imp_fail(im, line, "a perftest results row before its ' #bytes' header");
	if (st->closed)
		return imp_fail(im, line, "a perftest results row after the results' closing line (two runs "
				"in one file?)");
	if (k < st->ncols || unterminated)
		return imp_fail(im, line, unterminated ? "truncated results row (the file ends inside it)" :
				"a perftest results row with %d columns, its header names %d", k, st->ncols);
	for (int i = 0; i < st->ncols && i < 16; i++)
		if (imp_count(tok[i], &v[i]))
			return imp_fail(im, line, "malformed perftest results row: '%s' is not a number", tok[i]);
	bytes = v[0];
	if (!st->host[0])
		snprintf(st->host, sizeof(st->host), "local");
	if (!st->peer[0])
		snprintf(st->peer, sizeof(st->peer), "remote");
	if (!st->dev[0])
		snprintf(st->dev, sizeof(st->dev), "unknown-hca");
	if (!strcmp(st->host, st->peer))
		snprintf(st->peer + strlen(st->peer), sizeof(st->peer) - strlen(st->peer), "-peer");
	snprintf(el, sizeof(el), "%s/%s-%s/remote-hca", st->host, st->dev, st->peer);
	rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I}", "type", "measurement",
			"kind", "probe", "name", "ib", "test", st->test, "scope", "rail_pair", "element", el,
			"host", st->host, "peer", st->peer, "nic", st->dev, "bytes", (json_int_t)bytes,
			"iters", (json_int_t)v[1]);
	if (!rec)
		return imp_fail(im, line, "out of memory");
	if (st->link[0])
		json_object_set_new(rec, "link_layer", json_string(st->link));
	if (!st->lat) {
		/* BW average is the value judged; peak and message rate kept beside it */
		double gb = v[3] * st->unit_GBps;

		json_object_set_new(rec, "bw_GBps", json_real(gb));
		json_object_set_new(rec, "bw_Gbps", json_real(gb * 8));
		json_object_set_new(rec, "bw_peak_GBps", json_real(v[2] * st->unit_GBps));
		if (k > 4 && !imp_count(tok[4], &v[4]))
			json_object_set_new(rec, "msg_rate_Mpps", json_real(v[4]));
	} else {
		json_t *lat = json_pack("{s:I}", "n", (json_int_t)v[1]);
		double mean = st->c_avg >= 0 ? v[st->c_avg] : NAN;

		if (st->c_min >= 0) json_object_set_new(lat, "min", json_real(v[st->c_min]));
		if (st->c_typ >= 0) json_object_set_new(lat, "median", json_real(v[st->c_typ]));
		if (st->c_avg >= 0) json_object_set_new(lat, "mean", json_real(mean));
		if (st->c_max >= 0) json_object_set_new(lat, "max", json_real(v[st->c_max]));
		if (st->c_p99 >= 0) json_object_set_new(lat, "p99", json_real(v[st->c_p99]));
		if (st->c_p999 >= 0) json_object_set_new(lat, "p999", json_real(v[st->c_p999]));
		if (st->c_std >= 0 && mean > 0 && v[st->c_std] / mean <= 1e6)
			json_object_set_new(lat, "cv", json_real(v[st->c_std] / mean));
		json_object_set_new(rec, "lat_us", lat);
	}
	st->rows++;
	return imp_record(im, rec, line) ? imp_fail(im, line, "out of memory") : 0;
}

static int perf_parse(struct imp *im, const json_t *doc)
{
	struct st st = { .im = im };
	struct imp_lines l;
	const char *s;
	size_t n;
	long last = 0;
	int in_local = -1;       /* the side of the last address line: 1 local, 0 remote */

	(void)doc;
	imp_lines_init(&l, im->buf, im->size);
	while (imp_next_line(&l, &s, &n)) {
		char buf[2048], line[1024], *tok[MAXTOK];
		int k = imp_tokens(s, n, buf, sizeof(buf), tok, MAXTOK);

		if (!k)
			continue;
		last = l.no;
		snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), s);
		if (!strncmp(tok[0], "-----", 5)) {
			/* the closing line of the results table */
			if (st.rows)
				st.closed = 1;
			continue;
		}
		if (strstr(line, " Test") && (strstr(line, "BW") || strstr(line, "Latency")) && k <= 6 &&
		    tok[0][0] != '#') {
			if (title(&st, line, l.no))
				return -1;
			continue;
		}
		if (!strcmp(tok[0], "#bytes")) {
			if (st.ncols)
				return imp_fail(im, l.no, "a second perftest results header (two runs in one file? "
						"give each as its own file)");
			if (results_header(&st, tok, k, line, l.no))
				return -1;
			continue;
		}
		if (tok[0][0] >= '0' && tok[0][0] <= '9' && st.ncols) {
			if (row(&st, tok, k, l.no, l.unterminated))
				return -1;
			continue;
		}
		for (int i = 0; i + 2 < k; i++) {
			if (!strcmp(tok[i], "Device") && !strcmp(tok[i + 1], ":"))
				snprintf(st.dev, sizeof(st.dev), "%s", tok[i + 2]);
			if (!strcmp(tok[i], "Link") && !strcmp(tok[i + 1], "type"))
				snprintf(st.link, sizeof(st.link), "%s", i + 3 < k ? tok[i + 3] : "");
		}
		/* the hosts are named by the address lines before the results: rows already written keep theirs */
		if (st.rows && ((k > 1 && !strcmp(tok[1], "address:")) || !strcmp(tok[0], "GID:") || !strcmp(tok[0], "MGID:")))
			continue;
		if (k > 2 && !strcmp(tok[1], "address:") && (!strcmp(tok[0], "local") || !strcmp(tok[0], "remote"))) {
			in_local = !strcmp(tok[0], "local");
			/* the first pair of address lines: more QPs print more, of the same hosts */
			if (!(in_local ? st.host : st.peer)[0])
				address(in_local ? st.host : st.peer, sizeof(st.host), tok, k);
			continue;
		}
		if (k >= 2 && (!strcmp(tok[0], "GID:") || !strcmp(tok[0], "MGID:")) && in_local >= 0) {
			char ip[64] = "";

			gid(ip, sizeof(ip), tok[1]);
			if (ip[0] && (in_local ? !strncmp(st.host, "lid-", 4) : !strncmp(st.peer, "lid-", 4)))
				snprintf(in_local ? st.host : st.peer, sizeof(st.host), "%s", ip);
			continue;
		}
	}
	if (!st.test[0])
		return imp_fail(im, last, "a perftest output without its test's title line");
	if (!st.rows || !st.closed)
		return imp_fail(im, last, "truncated perftest output: %s (the run did not finish, or the "
				"log was cut)", st.rows ? "no closing line after the results" : "no results row");
	if (imp_host(im, st.host) != 0 || imp_host_rank(im, 0, 0) || imp_host(im, st.peer) != 1 ||
	    imp_host_rank(im, 1, 1))
		return imp_fail(im, 0, "out of memory");
	im->world_size = 2;
	json_object_set_new(im->extra, "options", json_pack("{s:s, s:s}", "test", st.test, "device", st.dev));
	return 0;
}

static int perf_detect(const char *buf, size_t n, const json_t *doc)
{
	size_t m = n < 65536 ? n : 65536;

	(void)doc;
	return memmem(buf, m, " #bytes", 7) && (memmem(buf, m, "BW Test", 7) || memmem(buf, m, "Latency Test", 12)) &&
	       (memmem(buf, m, "Device", 6) || memmem(buf, m, "address:", 8));
}

const struct importer import_perftest = {
	.name = "perftest",
	.what = "ib_write_bw, ib_read_bw, ib_send_bw (-b, --report_gbits), ib_*_lat text output",
	.detect = perf_detect,
	.parse = perf_parse,
};
