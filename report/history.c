/*
 * report/history.c: the history database (history.h, docs/history.md).
 * Tables: runs (one row per report appended), criteria (per run and
 * criterion: verdict, worst and median value, the worst element) and
 * elements (per run, criterion and element: the value judged; every scope
 * but node pairs, whose matrix grows with the square of the nodes). Element
 * and criterion names are stored once, in names, and elements refers to them
 * by number (a 1024-node run has some 100000 element values: as text they
 * made a database of 35 MB per run); the view element_values reads them
 * back by name.
 */
#include "history.h"
#include "htab.h"
#include "report.h"
#include "../fmt/fmt.h"
#include "../core/stats.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

static const char schema_sql[] =
	"CREATE TABLE IF NOT EXISTS runs(id INTEGER PRIMARY KEY AUTOINCREMENT, cluster TEXT NOT NULL, "
	"time_utc TEXT NOT NULL, generated_utc TEXT, profile TEXT, verdict TEXT, exit_code INTEGER, "
	"nodes INTEGER, run_ids TEXT);"
	"CREATE INDEX IF NOT EXISTS runs_by_cluster ON runs(cluster, time_utc);"
	"CREATE TABLE IF NOT EXISTS criteria(run INTEGER NOT NULL REFERENCES runs(id), "
	"criterion TEXT NOT NULL, title TEXT, unit TEXT, op TEXT, verdict TEXT, required INTEGER, "
	"elements INTEGER, worst REAL, worst_element TEXT, worst_host TEXT, median REAL, "
	"spread_pct REAL, PRIMARY KEY(run, criterion));"
	"CREATE TABLE IF NOT EXISTS names(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, host TEXT);"
	/* one criterion's rows together: the history view reads them a criterion at a time */
	"CREATE TABLE IF NOT EXISTS elements(crit INTEGER NOT NULL REFERENCES names(id), "
	"run INTEGER NOT NULL REFERENCES runs(id), elem INTEGER NOT NULL REFERENCES names(id), "
	"value REAL, spread_pct REAL, PRIMARY KEY(crit, run, elem)) WITHOUT ROWID;"
	"CREATE VIEW IF NOT EXISTS element_values AS SELECT e.run, c.name AS criterion, "
	"n.name AS element, n.host, e.value, e.spread_pct FROM elements e "
	"JOIN names c ON c.id = e.crit JOIN names n ON n.id = e.elem;";

/* the number of a name (element or criterion), stored once; cache holds those seen */
struct namer {
	sqlite3_stmt *ins, *sel;
	struct htab cache;
};

static sqlite3_int64 name_id(struct namer *nm, const char *name, const char *host)
{
	sqlite3_int64 id = -1;
	int k = htab_get(&nm->cache, name);

	if (k >= 0)
		return k;
	sqlite3_reset(nm->ins);
	sqlite3_bind_text(nm->ins, 1, name, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(nm->ins, 2, host, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(nm->ins) != SQLITE_DONE)
		return -1;
	sqlite3_reset(nm->sel);
	sqlite3_bind_text(nm->sel, 1, name, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(nm->sel) == SQLITE_ROW)
		id = sqlite3_column_int64(nm->sel, 0);
	if (id >= 0 && id < 0x7fffffff && htab_put(&nm->cache, name, (int)id))
		return -1;
	return id;
}

/* the exit code of an SQLite failure: locked or unwritable 3, not a history database 2 */
static int db_fail(sqlite3 *db, int rc, const char *path, const char *what, char *err, size_t len)
{
	const char *msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
	const char *t = getenv("CCREPORT_BUSY_TIMEOUT_MS");

	rc &= 0xff;
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED) {
		snprintf(err, len, "%s: cannot %s: the database is locked (another writer held it past the "
			 "busy timeout of %s ms)", path, what, t && *t ? t : "10000");
		return RPT_EXIT_OUTPUT;
	}
	if (rc == SQLITE_CORRUPT || rc == SQLITE_NOTADB) {
		snprintf(err, len, "%s: cannot %s: not a usable history database (%s)", path, what, msg);
		return RPT_EXIT_USAGE;
	}
	snprintf(err, len, "%s: cannot %s: %s", path, what, msg);
	return rc == SQLITE_CANTOPEN && strstr(what, "read") ? RPT_EXIT_USAGE : RPT_EXIT_OUTPUT;
}

static int busy_ms(void)
{
	const char *t = getenv("CCREPORT_BUSY_TIMEOUT_MS");
	long v = t && *t ? strtol(t, NULL, 10) : HISTORY_BUSY_MS;

	return v >= 0 && v < 3600000 ? (int)v : HISTORY_BUSY_MS;
}

/* opens path and checks its schema; creates it when write is set. 0 or an exit code */
static int db_open(const char *path, int write, sqlite3 **out, char *err, size_t len)
{
	const char *what = write ? "append to the history" : "read the history";
	sqlite3_stmt *st = NULL;
	sqlite3 *db = NULL;
	int rc, ver = -1;

	if (!write && access(path, R_OK)) {
		snprintf(err, len, "%s: cannot read the history: %s", path, strerror(errno));
		return RPT_EXIT_USAGE;
	}
	rc = sqlite3_open_v2(path, &db, write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE :
			     SQLITE_OPEN_READONLY, NULL);
	if (rc != SQLITE_OK) {
		rc = db_fail(db, rc, path, what, err, len);
		sqlite3_close(db);
		return rc;
	}
	sqlite3_busy_timeout(db, busy_ms());
	rc = sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		ver = sqlite3_column_int(st, 0);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK)
		goto fail;
	if (ver != 0 && ver != HISTORY_SCHEMA) {
		snprintf(err, len, "%s: history schema %d (ccreport reads schema %d)", path, ver, HISTORY_SCHEMA);
		sqlite3_close(db);
		return RPT_EXIT_USAGE;
	}
	if (ver == 0 && !write) {
		snprintf(err, len, "%s: not a ccdiag history database (no runs table)", path);
		sqlite3_close(db);
		return RPT_EXIT_USAGE;
	}
	*out = db;
	return 0;
fail:
	rc = db_fail(db, rc, path, what, err, len);
	sqlite3_close(db);
	return rc;
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
}

static void bind_num(sqlite3_stmt *st, int i, const json_t *o, const char *key)
{
	double v;

	if (j_num(o, key, &v) && isfinite(v))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

/* node pairs grow with the square of the nodes: only their worst is kept */
static int keep_elements(const json_t *c)
{
	return strcmp(j_str(c, "scope"), "link") != 0;
}

static double values_median(const json_t *c)
{
	const json_t *v;
	size_t i, n = 0;
	double *a = malloc((json_array_size(j_arr(c, "values")) + 1) * sizeof(*a)), m;

	if (!a)
		return NAN;
	json_array_foreach(j_arr(c, "values"), i, v)
		if (j_num(v, "value", &a[n]))
			n++;
	m = n ? stats_median(a, n) : NAN;
	free(a);
	return m;
}

static double worst_spread(const json_t *c)
{
	const char *el = j_str(json_object_get(c, "worst"), "element");
	const json_t *v;
	size_t i;
	double s;

	json_array_foreach(j_arr(c, "values"), i, v)
		if (!strcmp(j_str(v, "element"), el) && j_num(v, "spread_pct", &s))
			return s;
	return NAN;
}

static int insert_run(sqlite3 *db, const json_t *s, const char *cluster, sqlite3_int64 *id)
{
	const json_t *in0 = json_array_get(j_arr(s, "inputs"), 0), *v;
	sqlite3_stmt *st;
	char *ids = NULL;
	size_t i, n = 0;
	FILE *m = open_memstream(&ids, &n);
	int rc;

	json_array_foreach(j_arr(s, "inputs"), i, v)
		if (m)
			fprintf(m, "%s%s", i ? "," : "", j_str(v, "run_id"));
	if (m)
		fclose(m);
	rc = sqlite3_prepare_v2(db, "INSERT INTO runs(cluster, time_utc, generated_utc, profile, verdict, "
				"exit_code, nodes, run_ids) VALUES(?,?,?,?,?,?,?,?)", -1, &st, NULL);
	if (rc != SQLITE_OK) {
		free(ids);
		return rc;
	}
	bind_text(st, 1, cluster);
	bind_text(st, 2, *j_str(in0, "start_utc") ? j_str(in0, "start_utc") : j_str(s, "generated_utc"));
	bind_text(st, 3, j_str(s, "generated_utc"));
	bind_text(st, 4, j_str(json_object_get(s, "profile"), "name"));
	bind_text(st, 5, j_str(s, "verdict"));
	bind_num(st, 6, s, "exit_code");
	bind_num(st, 7, json_object_get(s, "cluster"), "nodes");
	bind_text(st, 8, ids ? ids : "");
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	free(ids);
	*id = sqlite3_last_insert_rowid(db);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int insert_criteria(sqlite3 *db, const json_t *s, sqlite3_int64 id)
{
	sqlite3_stmt *sc = NULL, *se = NULL;
	struct namer nm = { 0 };
	const json_t *c, *v;
	size_t i, j;
	int rc;

	rc = sqlite3_prepare_v2(db, "INSERT INTO criteria VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)", -1, &sc, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO elements VALUES(?,?,?,?,?)", -1, &se, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO names(name, host) VALUES(?,?)", -1, &nm.ins,
					NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "SELECT id FROM names WHERE name = ?", -1, &nm.sel, NULL);
	json_array_foreach(j_arr(s, "criteria"), i, c) {
		const json_t *w = json_object_get(c, "worst");
		double med = values_median(c), sp = worst_spread(c);
		sqlite3_int64 cid;

		if (rc != SQLITE_OK)
			break;
		sqlite3_reset(sc);
		sqlite3_bind_int64(sc, 1, id);
		bind_text(sc, 2, j_str(c, "id"));
		bind_text(sc, 3, j_str(c, "title"));
		bind_text(sc, 4, j_str(c, "unit"));
		bind_text(sc, 5, j_str(json_object_get(c, "bound"), "op"));
		bind_text(sc, 6, j_str(c, "verdict"));
		sqlite3_bind_int(sc, 7, json_is_true(json_object_get(c, "required")));
		bind_num(sc, 8, c, "elements");
		bind_num(sc, 9, w, "value");
		bind_text(sc, 10, j_str(w, "element"));
		bind_text(sc, 11, j_str(w, "host"));
		if (isfinite(med))
			sqlite3_bind_double(sc, 12, med);
		else
			sqlite3_bind_null(sc, 12);
		if (isfinite(sp))
			sqlite3_bind_double(sc, 13, sp);
		else
			sqlite3_bind_null(sc, 13);
		rc = sqlite3_step(sc) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
		if (rc != SQLITE_OK || !keep_elements(c))
			continue;
		cid = name_id(&nm, j_str(c, "id"), NULL);
		if (cid < 0)
			rc = sqlite3_errcode(db) != SQLITE_OK ? sqlite3_errcode(db) : SQLITE_NOMEM;
		json_array_foreach(j_arr(c, "values"), j, v) {
			sqlite3_int64 eid;

			if (rc != SQLITE_OK)
				break;
			eid = name_id(&nm, j_str(v, "element"), j_str(v, "host"));
			if (eid < 0) {
				rc = sqlite3_errcode(db) != SQLITE_OK ? sqlite3_errcode(db) : SQLITE_NOMEM;
				break;
			}
			sqlite3_reset(se);
			sqlite3_bind_int64(se, 1, cid);
			sqlite3_bind_int64(se, 2, id);
			sqlite3_bind_int64(se, 3, eid);
			bind_num(se, 4, v, "value");
			bind_num(se, 5, v, "spread_pct");
			rc = sqlite3_step(se) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
		}
	}
	sqlite3_finalize(sc);
	sqlite3_finalize(se);
	sqlite3_finalize(nm.ins);
	sqlite3_finalize(nm.sel);
	htab_free(&nm.cache);
	return rc;
}

int history_append(const json_t *s, const char *path, const char *cluster, char *err, size_t len)
{
	const json_t *hosts = j_arr(json_object_get(s, "cluster"), "hosts");
	sqlite3_int64 id = 0;
	sqlite3 *db;
	int rc, ver = 0;
	sqlite3_stmt *st;

	if (!cluster || !*cluster)
		cluster = json_array_size(hosts) ? json_string_value(json_array_get(hosts, 0)) : NULL;
	if (!cluster)
		cluster = "unnamed";
	rc = db_open(path, 1, &db, err, len);
	if (rc)
		return rc;
	/* IMMEDIATE: the write lock now, so two writers queue on the busy timeout, never deadlock */
	rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		goto fail;
	/* the schema under the same lock: two first writers do not both create it */
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			ver = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
	}
	if (ver == 0) {
		rc = sqlite3_exec(db, schema_sql, NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_exec(db, "PRAGMA user_version = 1", NULL, NULL, NULL);
		if (rc != SQLITE_OK)
			goto rollback;
	}
	rc = insert_run(db, s, cluster, &id);
	if (rc == SQLITE_OK)
		rc = insert_criteria(db, s, id);
	if (rc != SQLITE_OK)
		goto rollback;
	rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		goto rollback;
	sqlite3_close(db);
	return 0;
rollback:
	rc = db_fail(db, sqlite3_errcode(db), path, "append to the history", err, len);
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(db);
	return rc;
fail:
	rc = db_fail(db, rc, path, "append to the history", err, len);
	sqlite3_close(db);
	return rc;
}

/* ---- reading it back: criteria over time and drift ---- */

struct hrun {
	sqlite3_int64 id;
	char *time, *profile, *verdict;
};

/* "worse" by how much, in % of the reference: lower for >=, higher for <= */
static double worse_pct(const char *op, double v, double ref)
{
	if (!(ref > 0))
		return NAN;
	return !strcmp(op, "<=") ? 100 * (v - ref) / ref : 100 * (ref - v) / ref;
}

/* the median of up to k values before index i (NaN: absent); NaN when fewer than HISTORY_MIN_RUNS */
static double rolling(const double *v, int i, int k, double *buf)
{
	int n = 0;

	for (int j = i - 1; j >= 0 && n < k; j--)
		if (isfinite(v[j]))
			buf[n++] = v[j];
	return n >= HISTORY_MIN_RUNS ? stats_median(buf, n) : NAN;
}

struct elvals {
	struct htab idx;
	char **names, **hosts;
	double *v, *spread;      /* [element * nruns + run] */
	int n, cap;
};

static void elvals_free(struct elvals *e)
{
	for (int i = 0; i < e->n; i++) {
		free(e->names[i]);
		free(e->hosts[i]);
	}
	free(e->names);
	free(e->hosts);
	free(e->v);
	free(e->spread);
	htab_free(&e->idx);
}

static int elvals_load(sqlite3 *db, const char *cluster, const char *crit, const struct hrun *runs,
		       int nruns, struct elvals *e)
{
	sqlite3_stmt *st;
	int r = 0;

	memset(e, 0, sizeof(*e));
	if (sqlite3_prepare_v2(db, "SELECT e.run, n.name, n.host, e.value, e.spread_pct FROM elements e "
			       "JOIN names n ON n.id = e.elem JOIN runs r ON r.id = e.run "
			       "WHERE r.cluster = ? AND e.crit = (SELECT id FROM names WHERE name = ?) "
			       "ORDER BY r.time_utc, r.id", -1, &st, NULL) != SQLITE_OK)
		return -1;
	bind_text(st, 1, cluster);
	bind_text(st, 2, crit);
	while (sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_int64 run = sqlite3_column_int64(st, 0);
		const char *name = (const char *)sqlite3_column_text(st, 1);
		int k;

		while (r < nruns && runs[r].id != run)
			r++;
		if (r == nruns)
			break;
		if (!name || sqlite3_column_type(st, 3) == SQLITE_NULL)
			continue;
		k = htab_get(&e->idx, name);
		if (k < 0) {
			if (e->n == e->cap) {
				int cap = e->cap ? 2 * e->cap : 64;
				char **nn = realloc(e->names, cap * sizeof(*nn)), **hh;
				double *vv, *ss;

				if (nn)
					e->names = nn;
				hh = nn ? realloc(e->hosts, cap * sizeof(*hh)) : NULL;
				if (hh)
					e->hosts = hh;
				vv = hh ? realloc(e->v, (size_t)cap * nruns * sizeof(*vv)) : NULL;
				if (vv)
					e->v = vv;
				ss = vv ? realloc(e->spread, (size_t)cap * nruns * sizeof(*ss)) : NULL;
				if (!ss)
					goto nomem;
				e->spread = ss;
				e->cap = cap;
			}
			k = e->n++;
			e->names[k] = strdup(name);
			e->hosts[k] = strdup(sqlite3_column_text(st, 2) ? (const char *)sqlite3_column_text(st, 2) : "");
			for (int j = 0; j < nruns; j++)
				e->v[(size_t)k * nruns + j] = e->spread[(size_t)k * nruns + j] = NAN;
			if (!e->names[k] || !e->hosts[k] || htab_put(&e->idx, e->names[k], k))
				goto nomem;
		}
		e->v[(size_t)k * nruns + r] = sqlite3_column_double(st, 3);
		e->spread[(size_t)k * nruns + r] = sqlite3_column_type(st, 4) == SQLITE_NULL ? 0 :
						   sqlite3_column_double(st, 4);
	}
	sqlite3_finalize(st);
	return 0;
nomem:
	sqlite3_finalize(st);
	return -1;
}

static json_t *drift_entry(const char *crit, const char *unit, const struct hrun *run, const char *el,
			   const char *host, double v, double med, double w, double spread, int k)
{
	return json_pack("{s:s, s:s, s:I, s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:i}", "criterion", crit, "unit",
			 unit, "run", (json_int_t)run->id, "time_utc", run->time, "element", el, "host", host,
			 "value", v, "rolling_median", med, "worse_pct", w, "spread_pct", spread, "k", k);
}

/* one criterion of one cluster: its points over time, and drift added to drifts */
static json_t *criterion_history(sqlite3 *db, const char *cluster, const char *crit, const char *unit,
				 const char *op, const struct hrun *runs, int nruns, int k, double tol,
				 json_t *drifts)
{
	double *worst = malloc(nruns * sizeof(*worst)), *buf = malloc((k + 1) * sizeof(*buf)), *spr;
	json_t *pts = json_array();
	struct elvals ev;
	sqlite3_stmt *st;
	int r = 0;

	spr = malloc(nruns * sizeof(*spr));
	if (!worst || !buf || !spr || !pts)
		goto out;
	for (int i = 0; i < nruns; i++)
		worst[i] = spr[i] = NAN;
	if (sqlite3_prepare_v2(db, "SELECT c.run, c.verdict, c.worst, c.median, c.worst_element, c.spread_pct "
			       "FROM criteria c JOIN runs r ON r.id = c.run WHERE r.cluster = ? AND "
			       "c.criterion = ? ORDER BY r.time_utc, r.id", -1, &st, NULL) != SQLITE_OK)
		goto out;
	bind_text(st, 1, cluster);
	bind_text(st, 2, crit);
	while (sqlite3_step(st) == SQLITE_ROW) {
		sqlite3_int64 run = sqlite3_column_int64(st, 0);
		const char *el = (const char *)sqlite3_column_text(st, 4);
		json_t *p;

		while (r < nruns && runs[r].id != run)
			r++;
		if (r == nruns)
			break;
		p = json_pack("{s:I, s:s, s:s, s:s}", "run", (json_int_t)run, "time_utc", runs[r].time,
			      "verdict", sqlite3_column_text(st, 1) ? (const char *)sqlite3_column_text(st, 1) : "",
			      "worst_element", el ? el : "");
		if (!p)
			continue;
		if (sqlite3_column_type(st, 2) != SQLITE_NULL) {
			worst[r] = sqlite3_column_double(st, 2);
			json_object_set_new(p, "worst", json_real(worst[r]));
		} else {
			json_object_set_new(p, "worst", json_null());
		}
		spr[r] = sqlite3_column_type(st, 5) == SQLITE_NULL ? 0 : sqlite3_column_double(st, 5);
		json_object_set_new(p, "median", sqlite3_column_type(st, 3) == SQLITE_NULL ? json_null() :
				    json_real(sqlite3_column_double(st, 3)));
		json_array_append_new(pts, p);
	}
	sqlite3_finalize(st);
	if (elvals_load(db, cluster, crit, runs, nruns, &ev))
		goto out;
	for (int i = HISTORY_MIN_RUNS; i < nruns; i++) {
		double best = 0, bv = NAN, bm = NAN, bs = 0;
		int be = -1;

		/* per element against its own rolling median: the one that moved most */
		for (int e = 0; e < ev.n; e++) {
			double *v = ev.v + (size_t)e * nruns, m, w, s;

			if (!isfinite(v[i]))
				continue;
			m = rolling(v, i, k, buf);
			w = worse_pct(op, v[i], m);
			s = ev.spread[(size_t)e * nruns + i];
			if (isfinite(w) && w > tol * 100 && w > s && w > best) {
				best = w;
				be = e;
				bv = v[i];
				bm = m;
				bs = s;
			}
		}
		if (be >= 0) {
			json_array_append_new(drifts, drift_entry(crit, unit, &runs[i], ev.names[be], ev.hosts[be],
								  bv, bm, best, bs, k));
			continue;
		}
		/* no element kept (node pairs): the criterion's worst */
		if (!ev.n && isfinite(worst[i])) {
			double m = rolling(worst, i, k, buf), w = worse_pct(op, worst[i], m);

			if (isfinite(w) && w > tol * 100 && w > spr[i])
				json_array_append_new(drifts, drift_entry(crit, unit, &runs[i], "(worst)", "",
									  worst[i], m, w, spr[i], k));
		}
	}
	elvals_free(&ev);
out:
	free(worst);
	free(buf);
	free(spr);
	return json_pack("{s:s, s:s, s:s, s:o}", "id", crit, "unit", unit, "op", op, "points",
			 pts ? pts : json_array());
}

static void runs_free(struct hrun *runs, int n)
{
	for (int i = 0; i < n; i++) {
		free(runs[i].time);
		free(runs[i].profile);
		free(runs[i].verdict);
	}
	free(runs);
}

static char *col(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return strdup(t ? (const char *)t : "");
}

static json_t *cluster_history(sqlite3 *db, const char *cluster, int k, double tol)
{
	sqlite3_stmt *st;
	struct hrun *runs = NULL;
	int n = 0, cap = 0;
	json_t *jr = json_array(), *crits = json_array(), *drifts = json_array();

	if (sqlite3_prepare_v2(db, "SELECT id, time_utc, profile, verdict FROM runs WHERE cluster = ? "
			       "ORDER BY time_utc, id", -1, &st, NULL) != SQLITE_OK)
		goto out;
	bind_text(st, 1, cluster);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (n == cap) {
			struct hrun *nr = realloc(runs, (cap = cap ? 2 * cap : 16) * sizeof(*nr));

			if (!nr)
				break;
			runs = nr;
		}
		runs[n].id = sqlite3_column_int64(st, 0);
		runs[n].time = col(st, 1);
		runs[n].profile = col(st, 2);
		runs[n].verdict = col(st, 3);
		json_array_append_new(jr, json_pack("{s:I, s:s, s:s, s:s}", "run", (json_int_t)runs[n].id,
						    "time_utc", runs[n].time, "profile", runs[n].profile,
						    "verdict", runs[n].verdict));
		n++;
	}
	sqlite3_finalize(st);
	if (sqlite3_prepare_v2(db, "SELECT c.criterion, min(c.unit), min(c.op) FROM criteria c JOIN runs r "
			       "ON r.id = c.run WHERE r.cluster = ? GROUP BY c.criterion "
			       "ORDER BY min(c.rowid)", -1, &st, NULL) != SQLITE_OK)
		goto out;
	bind_text(st, 1, cluster);
	while (sqlite3_step(st) == SQLITE_ROW) {
		char *id = col(st, 0), *unit = col(st, 1), *op = col(st, 2);

		if (id && unit && op)
			json_array_append_new(crits, criterion_history(db, cluster, id, unit, op, runs, n, k,
								       tol, drifts));
		free(id);
		free(unit);
		free(op);
	}
	sqlite3_finalize(st);
out:
	runs_free(runs, n);
	return json_pack("{s:s, s:o, s:o, s:o}", "name", cluster, "runs", jr, "criteria", crits,
			 "drift", drifts);
}

/*
 * The history document (docs/history.md) of cluster (NULL: every cluster).
 * 0, or an exit code with err.
 */
int history_build(const char *path, const char *cluster, int k, double tol, json_t **out, char *err,
		  size_t len)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	json_t *cl = json_array();
	int rc = db_open(path, 0, &db, err, len);

	if (rc) {
		json_decref(cl);
		return rc;
	}
	/* a read transaction: one consistent view while writers append */
	sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
	rc = sqlite3_prepare_v2(db, "SELECT DISTINCT cluster FROM runs WHERE ?1 IS NULL OR cluster = ?1 "
				"ORDER BY cluster", -1, &st, NULL);
	if (rc != SQLITE_OK) {
		rc = db_fail(db, rc, path, "read the history", err, len);
		sqlite3_close(db);
		json_decref(cl);
		return rc;
	}
	if (cluster)
		bind_text(st, 1, cluster);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		char *name = col(st, 0);

		if (name)
			json_array_append_new(cl, cluster_history(db, name, k, tol));
		free(name);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		rc = db_fail(db, rc, path, "read the history", err, len);
		sqlite3_close(db);
		json_decref(cl);
		return rc;
	}
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	sqlite3_close(db);
	*out = json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:f, s:o}", "schema", 1, "tool", "ccreport",
			 "version", RPT_VERSION, "commit", ccdiag_commit, "kind", "history", "database", path, "k", k, "min_runs", HISTORY_MIN_RUNS, "tolerance", tol,
			 "clusters", cl);
	if (cluster && !json_array_size(cl)) {
		snprintf(err, len, "%s: no runs of cluster '%s'", path, cluster);
		json_decref(*out);
		return RPT_EXIT_USAGE;
	}
	return *out ? 0 : RPT_EXIT_USAGE;
}
