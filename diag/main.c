/*
 * diag/main.c: ccdiag, one command for a whole acceptance run (docs/ccdiag.md).
 *
 * It plans from the profile (report/profile.c's reader) and the probe registry
 * (ccprobe --plan: each probe's phase and estimated seconds) with the planner
 * (diag/plan.c), prints the plan with an estimate per phase, holds it to
 * --budget, runs each phase as a separate launch (posix_spawn, an argument
 * vector) into one results folder (launcher output in the phase's log),
 * records phases that did not run, and ends with ccreport on the folder: its
 * terminal verdict and its exit code. Installed beside ccprobe and ccreport.
 */
#include "plan.h"
#include "provenance.h"
#include "registry.h"
#include "results.h"
#include "../core/spawn.h"
#include "spotcheck.h"
#include "strv.h"
#include "topo.h"
#include "../core/topology.h"
#include "../core/version.h"
#include "../report/profile.h"
#include "../report/workload.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define EXIT_BAD_INPUT 2
#define EMU_STORAGE_DIR "/run/ccdiag-emu/storage"  /* where emucluster --storage mounts the volume */

static const char usage_text[] =
"usage: ccdiag quick -p PROFILE [-o DIR] [-q] [-- CCPROBE OPTIONS...]\n"
"       ccdiag run -p PROFILE [-o DIR] [--budget DURATION [--shrink]] [--soak DURATION]\n"
"                  [--nonce VALUE] [--dry-run] [launch options] [-q] [-- CCPROBE OPTIONS...]\n"
"       ccdiag drain-list REPORT_DIR|summary.json\n"
"       ccdiag spot-check -p PROFILE --against DIR [-k K] [--seed N] [--tol PCT] [-o OUT]\n"
"                  [launch options] [-q] [-- CCPROBE OPTIONS...]\n"
"       ccdiag sign DIR -f KEY\n"
"       ccdiag verify DIR [-f ALLOWED_SIGNERS -I IDENTITY] [--nonce VALUE]\n"
"       ccdiag --help | --version\n"
"\n"
"Plans the acceptance run the profile judges (only its probes, collectives,\n"
"backends and sizes), prints it with an estimated duration per phase for this\n"
"node count, runs each phase as its own launch into DIR, then ccreport on DIR.\n"
"\n"
"  -p, --profile NAME|FILE  acceptance profile (as ccreport -p)\n"
"  -o, --out DIR            results folder [ccdiag-YYYYmmdd-HHMMSS]; phase-K-NAME.jsonl\n"
"                           and .log per phase, report/ from ccreport\n"
"      --budget DURATION    refuse a plan estimated above it (90, 90s, 10m, 1h30m);\n"
"                           with --dry-run, the plan refused is shown first\n"
"      --shrink             instead fit the plan into --budget: shorter time per\n"
"                           size, fewer sizes, repetitions and pair steps; the\n"
"                           cuts are listed\n"
"      --dry-run            print the plan only\n"
"      --time-per-size SEC  collectives: seconds per size [2] (ccprobe --time-per-size)\n"
"      --max-size SIZE      collectives: largest size [mpi 1M, nccl 8G]\n"
"      --soak DURATION      add a soak phase after the collectives: what the profile's\n"
"                           soak criteria judge (else netpair and all_reduce) repeated\n"
"                           for DURATION in all (shared among them; 90s, 10m, 1h30m),\n"
"                           one sample per second (-- --soak-interval SEC to change)\n"
"  -q, --quiet              no progress lines (the plan, phase lines and verdict stay)\n"
"      --nonce VALUE        a value the customer chose (1-128 letters, digits, ._:+/=-):\n"
"                           into every phase's header and DIR/MANIFEST\n"
"A profile with a [workload] gets two train phases last: ccprobe trainstep and the\n"
"framework's step (workloads/torch_step.py, PyTorch DDP) on the workload's shape, run by\n"
"the first python3 that imports torch (CCDIAG_PYTHON to choose); without it the train\n"
"phase is recorded not run, with the reason. Under --soak each steps for DURATION / 4.\n"
"Launch (one of; default: inside Slurm when SLURM_JOB_ID is set, else this host):\n"
"  -H, --host LIST          hosts a,b,c through mpirun (each must answer first)\n"
"      --hosts FILE         hosts, one per line (# comments)\n"
"      --emulated N         build an emulated cluster of N hosts for the run and\n"
"                           remove it after (root; scripts/emucluster), with\n"
"      --rate R             its link rate [1gbit]\n"
"      --degrade HOST=R     one host's lower rate (repeatable)\n"
"      --storage S[:R]      S storage hosts serving a GlusterFS volume mounted on\n"
"                           every host: the storage phase's --storage-dir\n"
"      --leaves K           its hosts behind K leaf switches under a spine, each\n"
"      --uplink-rate R      leaf's uplink at R [--rate]; --degrade-uplink leafJ=R\n"
"                           one uplink lower; the leaves are the run's topology\n"
"Topology (docs/ccdiag.md): the groups netpair and ib pair inside first (1,000 nodes)\n"
"      --topology FILE      Slurm topology.conf, ibnetdiscover output, 'HOST GROUP\n"
"                           [SPINE]' lines, or nvlink (NVML's NVLink domains); inside\n"
"                           Slurm by default what scontrol show topology prints\n"
"Storage (the profile's storage criteria):\n"
"      --storage-dir DIR    the filesystem the storage phase tests (on every node);\n"
"                           without it (and without --emulated --storage) the phase\n"
"                           is recorded as not run\n"
"Providers:\n"
"      --drain-list FILE    write one line per node the report blames, in scontrol's\n"
"                           words: NodeName=N State=DRAIN Reason=\"check, value, bound\"\n"
"                           (feed it: xargs -L1 scontrol update < FILE); a name that\n"
"                           is not one Slurm node name is refused, said on stderr\n"
"      --drain              run scontrol update for each of those nodes (needs Slurm)\n"
"\n"
"ccdiag quick: this node's node-local checks of the profile (its node phase: GPU\n"
"inventory and health, pcie, hbm, nvlink: short sweeps) in about a minute, judged\n"
"by the profile's criteria of those probes alone; the exit code (ccreport's) suits\n"
"a Slurm prolog or health check: 0 healthy.\n"
"\n"
"Inside Slurm each phase runs under srun with one task per GPU (GPU phases) or per\n"
"node, and --cpus-per-task=K --cpu-bind=cores, K = the node's CPUs / tasks (so a\n"
"rank has a core for its thread and one for NCCL's proxy); CCDIAG_SRUN_CPUS_PER_TASK\n"
"sets K (off: Slurm's default binding), CCDIAG_SRUN_CPU_BIND the --cpu-bind value.\n"
"\n"
"A phase running past 3x its estimate + 2 min (CCDIAG_PHASE_DEADLINE seconds, if set)\n"
"is stopped: one SIGTERM to its launcher, SIGKILL 30 s later. A launch that wrote\n"
"nothing because a rank died of a signal (under srun: its \"task N: <signal>\" line\n"
"stops the step) is launched once more, and the phase line says so.\n"
"\n"
"DIR/MANIFEST: the SHA-256 of every phase file, log and report/summary.json (as\n"
"sha256sum -c reads it), tool versions, hosts planned and actual, times, nonce.\n"
"ccdiag spot-check: reruns a random sample of a received run DIR on these hosts (the\n"
"profile's node phase, short, on K random nodes; its pairs phase on the hosts of K\n"
"random links; K 2) and compares each figure the profile judges with the received one,\n"
"both judged by ccreport from the results files; a figure not reproduced is measured\n"
"up to 3 times, the best kept. --tol PCT: the least tolerance [30%], or the spread its\n"
"records report when wider; --seed N repeats a sample (printed). OUT/spotcheck.json;\n"
"exit 0 reproduced, 1 a received figure beyond what the cluster does now (named), 4\n"
"the cluster is slower now across the board (neither confirmed nor refuted) or\n"
"nothing comparable measured, 2 bad input.\n"
"ccdiag sign: ssh-keygen -Y sign -n ccdiag over DIR/MANIFEST (DIR/MANIFEST.sig), after\n"
"checking the files still match. ccdiag verify: the signature (ssh-keygen -Y verify\n"
"with the allowed signers file), every file's SHA-256, no results file unlisted, the\n"
"nonce in the MANIFEST and every header; exit 0 verified, 1 a check failed, 2 no or\n"
"a malformed MANIFEST, 4 the files match but the signature was not checked.\n"
"\n"
"Exit codes: ccreport's (0 pass, 1 fail, 3 outputs not written, 4 incomplete);\n"
"2 bad input before anything ran (unknown profile, no runnable criterion,\n"
"unreachable host, a budget the minimal plan does not fit, drain-list of a file\n"
"that is not a summary.json), one line.\n";

/* ------------------------------------------------------------------ state */
static struct {
	const char *profile, *out, *tps, *max_size, *storage_dir, *drain_list, *nonce;
	char run_id[17];         /* this run's id: MANIFEST's, and each not-run phase's */
	long budget, soak;
	int shrink, dry, quiet, quick, drain, emu_n;
	int spot, spot_k, seed_set;  /* ccdiag spot-check: its sample size and --seed */
	unsigned long long seed;
	double spot_tol;         /* --tol, a fraction */
	const char *against;     /* --against DIR */
	struct strv only;        /* the hosts a spot-check launch runs on (empty: the job's) */
	const char *hosts, *hostfile, *topology;
	int leaves;
	struct strv emu_args, extra, hostlist;
	char *ccprobe, *ccreport, *emucluster, *workload_script;
	char *python;            /* the interpreter that imports torch on every host (the train phase) */
	char *framework_why;     /* or why there is none */
	int framework;           /* 1 present, 0 absent, -1 not checked yet */
	enum plan_launch launch;
	int nodes;
	char *quick_profile;     /* ccdiag quick's copy of the profile (a temporary file) */
	int emu_up;
	char *emu_log;
} g = { .tps = "2", .budget = -1, .spot_k = 2, .spot_tol = 0.3, .framework = -1 };

static volatile sig_atomic_t interrupted, term_sent;
static volatile pid_t child;

static void emu_down(void)
{
	if (g.emu_up) {
		char *argv[] = { g.emucluster, "down", NULL };
		pid_t pid;

		g.emu_up = 0;
		if ((pid = spawn_logged(argv, g.emu_log, 0)) > 0)
			spawn_wait(pid);
	}
}

static struct diag_topo topo;   /* the run's topology (diag/topo.h) */
static int topo_arg = -1;        /* its path's index in g.extra, after "--topology" */

static void cleanup(void)
{
	emu_down();
	diag_topo_free(&topo);
	if (g.quick_profile) {
		unlink(g.quick_profile);
		free(g.quick_profile);
		g.quick_profile = NULL;
	}
}

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(stderr, fmt, ap);
	va_end(ap);
	exit(EXIT_BAD_INPUT);
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(stdout, fmt, ap);
	va_end(ap);
}

static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...)
{
	va_list ap;

	if (g.quiet)
		return;
	va_start(ap, fmt);
	vsay(stderr, fmt, ap);
	va_end(ap);
}

static int match(const char *s, const char *ere)
{
	regex_t re;
	int ok;

	if (regcomp(&re, ere, REG_EXTENDED | REG_NOSUB))
		return 0;
	ok = !regexec(&re, s, 0, NULL, 0);
	regfree(&re);
	return ok;
}

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

/* a host name mpirun's -H and ssh take as one host: no option, list or slot syntax */
static int host_ok(const char *h)
{
	return strlen(h) <= 253 && match(h, "^[A-Za-z0-9_][A-Za-z0-9._-]*$");
}

static time_t now(void)
{
	return time(NULL);
}

static char *hm(double s)
{
	static char bufs[8][32];
	static int k;

	k = (k + 1) % 8;
	return human(s, bufs[k], sizeof(bufs[k]));
}

/* ------------------------------------------------------------------ launch */
/* node_cpus: the CPUs Slurm gave the job on each node, the fewest ("72(x2),36" -> 36),
 * else SLURM_CPUS_ON_NODE; 0 when unknown */
static long node_cpus(void)
{
	const char *v = env("SLURM_JOB_CPUS_PER_NODE");

	if (v && match(v, "^[0-9]+(\\(x[0-9]+\\))?(,[0-9]+(\\(x[0-9]+\\))?)*$")) {
		long least = 0;

		for (const char *p = v; *p;) {
			long n = strtol(p, (char **)&p, 10);

			if (!least || n < least)
				least = n;
			p += strcspn(p, ",");
			if (*p == ',')
				p++;
		}
		return least;
	}
	v = env("SLURM_CPUS_ON_NODE");
	return v && match(v, "^[0-9]+$") ? atol(v) : 0;
}

/* the launch command of a phase of rpn ranks per node (ccprobe and its arguments after it) */
static void launcher(int rpn, struct strv *a)
{
	int fault = env("CCPROBE_FAULT") != NULL;

	const struct strv *hosts = g.only.n ? &g.only : &g.hostlist;

	switch (g.launch) {
	case PLAN_EMULATED:
		strv_add(a, g.emucluster);
		strv_add(a, "mpirun");
		strv_add(a, "--ppn");
		strv_addf(a, "%d", rpn);
		if (g.only.n) {
			/* a spot-check's sample: those hosts of the emulated cluster only */
			struct strv hl = { 0 };
			char *h;

			for (int i = 0; i < g.only.n; i++)
				strv_addf(&hl, "%s:%d", g.only.v[i], rpn);
			h = strv_join(&hl, ",");
			strv_add(a, "-H");
			strv_add(a, h);
			free(h);
			strv_free(&hl);
		}
		strv_add(a, "-np");
		strv_addf(a, "%d", g.nodes * rpn);
		break;
	case PLAN_MPIRUN: {
		struct strv hl = { 0 };
		char *h;

		for (int i = 0; i < hosts->n; i++)
			strv_addf(&hl, "%s:%d", hosts->v[i], rpn);
		h = strv_join(&hl, ",");
		strv_add(a, "mpirun");
		strv_add(a, "-np");
		strv_addf(a, "%d", g.nodes * rpn);
		strv_add(a, "-H");
		strv_add(a, h);
		strv_add(a, "--map-by");
		strv_addf(a, "ppr:%d:node", rpn);
		free(h);
		strv_free(&hl);
		break;
	}
	case PLAN_SRUN: {
		const char *k = env("CCDIAG_SRUN_CPUS_PER_TASK");
		long cpt = 0;

		strv_add(a, "srun");
		strv_add(a, "-N");
		strv_addf(a, "%d", g.nodes);
		if (g.only.n) {
			char *w = strv_join(&g.only, ",");

			strv_add(a, "-w");
			strv_add(a, w);
			free(w);
		}
		strv_addf(a, "--ntasks-per-node=%d", rpn);
		/* one task per GPU or per node, each on its own cores */
		if (!k) {
			long cpus = node_cpus();

			if (cpus)
				cpt = cpus / rpn >= 1 ? cpus / rpn : 1;
		} else if (strcmp(k, "off")) {
			cpt = atol(k);
		}
		if (cpt) {
			strv_addf(a, "--cpus-per-task=%ld", cpt);
			strv_addf(a, "--cpu-bind=%s", env("CCDIAG_SRUN_CPU_BIND") ?: "cores");
		}
		strv_addf(a, "--mpi=%s", env("CCDIAG_SRUN_MPI") ?: "pmix");
		strv_add(a, "--kill-on-bad-exit=0");
		fault = 0;
		break;
	}
	default:
		strv_add(a, "mpirun");
		strv_add(a, "--oversubscribe");
		strv_add(a, "-np");
		strv_addf(a, "%d", rpn);
		fault = 0;
	}
	/* CCPROBE_FAULT (fault injection for tests, docs/results.md) reaches every rank */
	if (fault) {
		strv_add(a, "-x");
		strv_add(a, "CCPROBE_FAULT");
	}
}

/* ------------------------------------------------------------------ files */
static int mkdir_p(const char *dir)
{
	char *d = xstrdup(dir);
	int rc = 0;

	for (char *p = d + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(d, 0777) && errno != EEXIST)
				rc = -1;
			*p = '/';
		}
	if (mkdir(d, 0777) && errno != EEXIST)
		rc = -1;
	free(d);
	struct stat st;
	return rc || stat(dir, &st) || !S_ISDIR(st.st_mode) ? -1 : 0;
}

static void remove_matching(const char *dir, const char *const *patterns)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		for (const char *const *p = patterns; *p; p++)
			if (!fnmatch(*p, e->d_name, 0)) {
				unlinkat(dirfd(d), e->d_name, 0);
				break;
			}
	closedir(d);
}

static off_t file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : st.st_size;
}

/* appends text to a file made by ccdiag in the results folder */
static void append(const char *path, const char *text, int truncate)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (truncate ? O_TRUNC : O_APPEND), 0644);

	if (fd < 0)
		return;
	if (write(fd, text, strlen(text)) < 0) {
		/* the log is a convenience: the phase still runs */
	}
	close(fd);
}

/* the last line of a file (for one-line messages), malloc'd */
static char *last_line(const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *last = xstrdup("");
	size_t cap = 0;
	ssize_t n;

	if (!f)
		return last;
	while ((n = getline(&line, &cap, f)) > 0) {
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = '\0';
		if (n) {
			free(last);
			last = xstrdup(line);
		}
	}
	free(line);
	fclose(f);
	return last;
}

/*
 * ccdiag quick's profile: a copy of path keeping every section but [workload]
 * and the criteria not in keep (the planner's list). A private temporary file
 * (mkstemps: O_EXCL, a name nobody can plant). Returns its malloc'd path.
 */
static char *quick_profile(const char *path, const struct strv *keep)
{
	const char *tmp = env("TMPDIR") ?: "/tmp";
	char *name = xasprintf("%s/ccdiag-quick.XXXXXX.ini", tmp), *line = NULL;
	FILE *in = fopen(path, "r"), *out;
	size_t cap = 0;
	int fd, keep_sec = 1;

	if (!in)
		die("cannot read the profile '%s'", path);
	fd = mkstemps(name, 4);
	if (fd < 0 || !(out = fdopen(fd, "w")))
		die("cannot make a temporary file in '%s': %s", tmp, strerror(errno));
	while (getline(&line, &cap, in) > 0) {
		const char *p = line + strspn(line, " \t");

		if (*p == '[') {
			char sec[256] = "", *e;

			snprintf(sec, sizeof(sec), "%s", p + 1);
			if ((e = strchr(sec, ']')))
				*e = '\0';
			if (!strcmp(sec, "workload")) {
				keep_sec = 0;
			} else if (!strncmp(sec, "criterion", 9) && (sec[9] == ' ' || sec[9] == '\t')) {
				char *id = sec + 10;
				size_t n;

				id += strspn(id, " \t");
				n = strlen(id);
				while (n && (id[n - 1] == ' ' || id[n - 1] == '\t'))
					id[--n] = '\0';
				keep_sec = strv_find(keep, id) >= 0;
			} else {
				keep_sec = 1;
			}
		}
		if (keep_sec)
			fputs(line, out);
	}
	free(line);
	fclose(in);
	if (fclose(out))
		die("cannot write the temporary file '%s'", name);
	return name;
}

/* not_run: the phase's results file says so, for ccreport (docs/ccdiag.md) */
static void not_run(const struct plan *pl, int k, const char *path, const char *why)
{
	const struct plan_phase *ph = &pl->ph[k];
	static const char *const kinds[] = { "probe", "collective", "soak", "probe" };  /* by plan_kind */
	char t[32], *r;
	time_t ts = now();
	FILE *f;
	json_t *rec;
	char id[17];

	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%SZ", gmtime(&ts));
	/* its own id: two phases not run are two files, never "the same run given twice" */
	random_run_id(id);
	unlink(path);
	f = fopen(path, "wx");
	if (f) {
		rec = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:[]}", "type", "run",
				"schema", 1, "run_id", id, "start_utc", t, "tool", "ccdiag",
				"version", CCDIAG_VERSION, "commit", ccdiag_commit, "phase", ph->name,
				"world_size", 0, "nodes", g.nodes,
				"hosts");
		json_object_set_new(rec, "ccdiag_run_id", json_string(g.run_id));
		if (g.nonce)
			json_object_set_new(rec, "nonce", json_string(g.nonce));
		json_dumpf(rec, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', f);
		json_decref(rec);
		r = xasprintf("not run: %s", why);
		for (int i = 0; i < ph->names.n; i++) {
			rec = json_pack("{s:s, s:s, s:s, s:s}", "type", "skip", "kind", kinds[ph->kind],
					"name", ph->names.v[i], "reason", r);
			json_dumpf(rec, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
			fputc('\n', f);
			json_decref(rec);
		}
		free(r);
		rec = json_pack("{s:s, s:s, s:s}", "type", "end", "status", "not_run", "reason", why);
		json_dumpf(rec, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
		fputc('\n', f);
		json_decref(rec);
		fclose(f);
	}
	say("phase %d/%d %s: not run: %s", k + 1, pl->nph, ph->name, why);
}

/* a phase's ccprobe (or torch_step.py) options: the plan's, then --nonce */
static void phase_args(const struct plan *pl, int k, struct strv *args)
{
	plan_args(pl, k, pl->level, args);
	if (g.nonce) {
		strv_add(args, "--nonce");
		strv_add(args, g.nonce);
	}
}

/* DIR/MANIFEST of the files this run wrote (docs/provenance.md); 0 or -1, said */
static int write_manifest(const struct plan *pl, const char *pname, const char *ppath, time_t start)
{
	static const char *const more[] = { "emucluster.log", "drain.txt", "drain.log", "report/summary.json", NULL };
	struct strv files = { 0 }, planned = { 0 };
	struct run_manifest r = { .dir = g.out, .files = &files, .run_id = g.run_id, .nonce = g.nonce,
				  .profile = pname, .profile_path = ppath, .planned = &planned,
				  .ccprobe = g.ccprobe, .ccreport = g.ccreport, .start = start };
	char err[600], host[256] = "";
	int rc;

	for (int k = 0; k < pl->nph; k++) {
		strv_addf(&files, "phase-%d-%s.jsonl", k + 1, pl->ph[k].name);
		strv_addf(&files, "phase-%d-%s.log", k + 1, pl->ph[k].name);
	}
	for (int i = 0; more[i]; i++)
		strv_add(&files, more[i]);
	switch (g.launch) {
	case PLAN_EMULATED:
		r.launcher = "emulated (scripts/emucluster)";
		for (int i = 0; i < g.nodes; i++)
			strv_addf(&planned, "node%d", i);
		break;
	case PLAN_MPIRUN:
		r.launcher = "mpirun -H";
		strv_addv(&planned, &g.hostlist);
		break;
	case PLAN_SRUN:
		r.launcher = "srun";
		strv_addf(&planned, "slurm:%s", env("SLURM_JOB_NODELIST") ?: env("SLURM_NODELIST") ?: "?");
		break;
	default:
		r.launcher = "mpirun on this host";
		gethostname(host, sizeof(host) - 1);
		strv_add(&planned, host);
	}
	r.end = now();
	rc = manifest_write(&r, err, sizeof(err));
	if (rc)
		say("%s", err);
	else
		say("manifest: %s/MANIFEST (sha256sum -c MANIFEST; ccdiag sign %s -f KEY to sign it)", g.out, g.out);
	strv_free(&files);
	strv_free(&planned);
	return rc;
}

/* --emulated: the cluster, built before the first phase (its log in DIR), or one line and exit 2 */
static void emu_build(void)
{
	struct strv up = { 0 };
	char *ea = strv_join(&g.emu_args, " ");
	pid_t pid;
	int urc;

	g.emu_log = xasprintf("%s/emucluster.log", g.out);
	progress("building the emulated cluster (%s up %d%s%s)", g.emucluster, g.nodes, *ea ? " " : "", ea);
	free(ea);
	strv_add(&up, g.emucluster);
	strv_add(&up, "up");
	strv_addf(&up, "%d", g.nodes);
	strv_addv(&up, &g.emu_args);
	append(g.emu_log, "", 1);
	pid = spawn_logged(up.v, g.emu_log, 0);
	urc = pid < 0 ? 127 : spawn_wait(pid);
	strv_free(&up);
	if (urc != 0) {
		char *l = last_line(g.emu_log);

		die("cannot build the emulated cluster: %s", l);
	}
	g.emu_up = 1;
}

/* ------------------------------------------------------------------ signals */
static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
	/* one SIGTERM to the launcher: mpirun takes a second as "kill now" */
	if (child > 0 && !term_sent) {
		term_sent = 1;
		kill(child, SIGTERM);
	}
}

/* Ctrl-C and SIGTERM: one SIGTERM to the running launch, later phases not run */
static void catch_signals(void)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* ------------------------------------------------------------------ options */
static const char *need_value(int argc, char **argv, int i)
{
	if (i + 1 >= argc)
		die("option '%s' needs a value", argv[i]);
	return argv[i + 1];
}

static void parse_options(int argc, char **argv, int i)
{
	for (; i < argc; i++) {
		const char *o = argv[i], *v;

		if (!strcmp(o, "-h") || !strcmp(o, "--help")) {
			/* ccdiag run --help, ccdiag quick --help: the usage, as ccdiag --help */
			fputs(usage_text, stdout);
			exit(0);
		} else if (!strcmp(o, "-p") || !strcmp(o, "--profile")) {
			g.profile = need_value(argc, argv, i++);
		} else if (!strcmp(o, "-o") || !strcmp(o, "--out")) {
			g.out = need_value(argc, argv, i++);
		} else if (!strcmp(o, "--budget")) {
			v = need_value(argc, argv, i++);
			if ((g.budget = duration_parse(v)) < 0)
				die("invalid duration '%s' for --budget (e.g. 90, 90s, 10m, 1h30m)", v);
		} else if (!strcmp(o, "--shrink")) {
			g.shrink = 1;
		} else if (!strcmp(o, "--dry-run")) {
			g.dry = 1;
		} else if (!strcmp(o, "-q") || !strcmp(o, "--quiet")) {
			g.quiet = 1;
		} else if (!strcmp(o, "--time-per-size")) {
			v = need_value(argc, argv, i++);
			if (!match(v, "^[0-9]*\\.?[0-9]+$") || strlen(v) > 12)
				die("invalid time '%s' for --time-per-size", v);
			g.tps = v;
		} else if (!strcmp(o, "--max-size")) {
			v = need_value(argc, argv, i++);
			if (!match(v, "^[0-9]+[KMGT]?$"))
				die("invalid size '%s' for --max-size (e.g. 1M, 8G)", v);
			g.max_size = v;
		} else if (!strcmp(o, "--soak")) {
			v = need_value(argc, argv, i++);
			if ((g.soak = duration_parse(v)) <= 0)
				die("invalid duration '%s' for --soak (e.g. 90, 90s, 10m, 1h30m)", v);
		} else if (!strcmp(o, "-H") || !strcmp(o, "--host")) {
			g.hosts = need_value(argc, argv, i++);
		} else if (!strcmp(o, "--hosts")) {
			g.hostfile = need_value(argc, argv, i++);
		} else if (!strcmp(o, "--emulated")) {
			v = need_value(argc, argv, i++);
			if (!match(v, "^[0-9]{1,6}$") || atoi(v) < 2)
				die("invalid host count '%s' for --emulated (2 or more)", v);
			g.emu_n = atoi(v);
		} else if (!strcmp(o, "--rate") || !strcmp(o, "--degrade") || !strcmp(o, "--storage") ||
			   !strcmp(o, "--leaves") || !strcmp(o, "--uplink-rate") ||
			   !strcmp(o, "--degrade-uplink")) {
			v = need_value(argc, argv, i++);
			if (!strcmp(o, "--leaves") && (!match(v, "^[0-9]{1,6}$") || atoi(v) < 2))
				die("invalid leaf count '%s' for --leaves (2 or more)", v);
			if (!strcmp(o, "--leaves"))
				g.leaves = atoi(v);
			strv_add(&g.emu_args, o);
			strv_add(&g.emu_args, v);
		} else if (!strcmp(o, "--topology")) {
			g.topology = need_value(argc, argv, i++);
		} else if (!strcmp(o, "--storage-dir")) {
			g.storage_dir = need_value(argc, argv, i++);
		} else if (!strcmp(o, "--drain-list")) {
			g.drain_list = need_value(argc, argv, i++);
		} else if (!strcmp(o, "--drain")) {
			g.drain = 1;
		} else if (g.spot && !strcmp(o, "--against")) {
			g.against = need_value(argc, argv, i++);
		} else if (g.spot && !strcmp(o, "-k")) {
			v = need_value(argc, argv, i++);
			if (!match(v, "^[1-9][0-9]{0,5}$"))
				die("invalid count '%s' for -k (nodes and links to sample, 1 or more)", v);
			g.spot_k = atoi(v);
		} else if (g.spot && !strcmp(o, "--seed")) {
			v = need_value(argc, argv, i++);
			if (!match(v, "^[1-9][0-9]{0,18}$"))
				die("invalid seed '%s' for --seed (a positive integer, as a spot-check prints it)", v);
			g.seed = strtoull(v, NULL, 10);
			g.seed_set = 1;
		} else if (g.spot && !strcmp(o, "--tol")) {
			v = need_value(argc, argv, i++);
			if (!match(v, "^[0-9]{1,2}(\\.[0-9]+)?%$") || atof(v) <= 0)
				die("invalid tolerance '%s' for --tol (a percentage above 0 and below 100, e.g. 30%%)", v);
			g.spot_tol = atof(v) / 100.0;
		} else if (!strcmp(o, "--nonce")) {
			v = need_value(argc, argv, i++);
			/* as ccprobe --nonce takes it: it reaches every phase's command line */
			if (!match(v, "^[A-Za-z0-9._:+/=-]{1,128}$"))
				die("invalid value '%s' for --nonce (1 to 128 letters, digits, '.', '_', ':', '+', '/', '=', '-')", v);
			g.nonce = v;
		} else if (!strcmp(o, "--")) {
			for (i++; i < argc; i++)
				strv_add(&g.extra, argv[i]);
		} else {
			die("unknown option '%s' (try: ccdiag --help)", o);
		}
	}
}

/* the binaries beside this one: BIN/ccprobe, BIN/ccreport, BIN/../scripts/emucluster */
static void find_binaries(void)
{
	char exe[PATH_MAX], *bin;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	bin = dirname(exe);
	g.ccprobe = xstrdup(env("CCPROBE") ?: "");
	if (!*g.ccprobe) {
		free(g.ccprobe);
		g.ccprobe = xasprintf("%s/ccprobe", bin);
	}
	g.ccreport = xstrdup(env("CCREPORT") ?: "");
	if (!*g.ccreport) {
		free(g.ccreport);
		g.ccreport = xasprintf("%s/ccreport", bin);
	}
	{
		const char *const rel[] = { "../workloads/torch_step.py", "../share/ccdiag/workloads/torch_step.py",
					    NULL };

		if (env("CCDIAG_WORKLOAD"))
			g.workload_script = xstrdup(env("CCDIAG_WORKLOAD"));
		for (int i = 0; rel[i] && !g.workload_script; i++) {
			char *p = xasprintf("%s/%s", bin, rel[i]), real[PATH_MAX];

			if (!access(p, R_OK) && realpath(p, real))
				g.workload_script = xstrdup(real);
			free(p);
		}
	}
	if (env("EMUCLUSTER")) {
		g.emucluster = xstrdup(env("EMUCLUSTER"));
	} else {
		const char *const rel[] = { "../scripts/emucluster", "../share/ccdiag/scripts/emucluster", NULL };

		for (int i = 0; rel[i] && !g.emucluster; i++) {
			char *p = xasprintf("%s/%s", bin, rel[i]), real[PATH_MAX];

			if (!access(p, X_OK) && realpath(p, real))
				g.emucluster = xstrdup(real);
			free(p);
		}
	}
}

/*
 * The run's topology (--topology, Slurm's, the emulated leaves), checked
 * against the job's hosts where they are known, and given to every phase's
 * ccprobe (and its estimates) as --topology. A topology that does not read,
 * or lacks a host of the job, stops the run before anything ran (exit 2).
 */
static void find_topology(void)
{
	struct strv hosts = { 0 };
	char err[512];

	if (g.launch == PLAN_EMULATED) {
		for (int k = 0; k < g.nodes; k++)
			strv_addf(&hosts, "node%d", k);
	} else if (g.launch == PLAN_MPIRUN) {
		strv_addv(&hosts, &g.hostlist);
	} else if (g.launch == PLAN_SRUN && env("SLURM_JOB_NODELIST")) {
		char **v;
		int n;

		if (!topo_hostlist(env("SLURM_JOB_NODELIST"), &v, &n, err, sizeof(err))) {
			for (int i = 0; i < n; i++) {
				strv_add(&hosts, v[i]);
				free(v[i]);
			}
			free(v);
		}
	}
	if (diag_topo_find(&topo, g.topology, g.launch, g.nodes, g.leaves, &hosts, err, sizeof(err)))
		die("%s", err);
	strv_free(&hosts);
	if (topo.path) {
		strv_add(&g.extra, "--topology");
		topo_arg = g.extra.n;
		strv_add(&g.extra, topo.path);
	}
}

/* the plan's line on the node-pair schedule: ccprobe --plan's note of netpair (or ib) */
static void pair_schedule_line(const struct plan *pl)
{
	const char *name = NULL;
	struct strv cmd = { 0 };
	char *out = NULL, *note;

	for (int k = 0; k < pl->nph && !name; k++)
		for (int i = 0; i < pl->ph[k].names.n && !name; i++)
			if (!strcmp(pl->ph[k].names.v[i], "netpair") || !strcmp(pl->ph[k].names.v[i], "ib"))
				name = pl->ph[k].names.v[i];
	if (!name || g.nodes < 2)
		return;
	strv_add(&cmd, g.ccprobe);
	strv_addv(&cmd, &g.extra);
	strv_add(&cmd, "--plan");
	strv_addf(&cmd, "%d", g.nodes);
	strv_add(&cmd, name);
	if (spawn_capture(cmd.v, &out, NULL, 30) == 0 && out && (note = strstr(out, "; ")) &&
	    strchr(note, '\n')) {
		*strchr(note, '\n') = '\0';
		say("pairs (%s): %s", name, note + 2);
	}
	free(out);
	strv_free(&cmd);
}

/* the hosts of -H or --hosts, each checked to be one host name */
static void read_hosts(void)
{
	if (g.hostfile) {
		FILE *f = fopen(g.hostfile, "r");
		char *line = NULL;
		size_t cap = 0;

		if (!f)
			die("cannot read hosts file '%s'", g.hostfile);
		while (getline(&line, &cap, f) > 0) {
			size_t k = 0;

			line[strcspn(line, "#")] = '\0';
			for (char *p = line; *p; p++)
				if (!strchr(" \t\r\n\v\f", *p))
					line[k++] = *p;
			line[k] = '\0';
			if (k)
				strv_add(&g.hostlist, line);
		}
		free(line);
		fclose(f);
		if (!g.hostlist.n)
			die("%s: no hosts in the file", g.hostfile);
	} else {
		strv_split(&g.hostlist, g.hosts, ',');
		if (g.hostlist.n > 1 && !*g.hostlist.v[g.hostlist.n - 1])
			strv_remove(&g.hostlist, g.hostlist.n - 1);
	}
	for (int i = 0; i < g.hostlist.n; i++)
		if (!host_ok(g.hostlist.v[i]))
			die("invalid host name '%s'%s%s (one host: letters, digits, '.', '-', '_', not first '-')",
			    g.hostlist.v[i], g.hostfile ? " in " : "", g.hostfile ? g.hostfile : "");
}

/* every host must answer the agent of mpirun before anything runs */
static void check_hosts(void)
{
	const char *agent = env("OMPI_MCA_plm_rsh_agent") ?: "ssh -o BatchMode=yes -o ConnectTimeout=5";
	struct strv a = { 0 };
	char *copy = xstrdup(agent), *save = NULL, *base;

	for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
		strv_add(&a, w);
	free(copy);
	if (!a.n)
		die("empty OMPI_MCA_plm_rsh_agent");
	copy = xstrdup(a.v[0]);
	base = basename(copy);
	for (int i = 0; i < g.hostlist.n; i++) {
		struct strv c = { 0 };
		int rc;

		strv_addv(&c, &a);
		if (!strcmp(base, "ssh"))
			strv_add(&c, "--");  /* no host is ever an option of ssh */
		strv_add(&c, g.hostlist.v[i]);
		strv_add(&c, "true");
		rc = spawn_capture(c.v, NULL, NULL, 20);
		strv_free(&c);
		if (rc != 0)
			die("host '%s' is unreachable (%s %s true failed)", g.hostlist.v[i], a.v[0], g.hostlist.v[i]);
	}
	free(copy);
	strv_free(&a);
}

/* ------------------------------------------------------------------ drain */
static int drain_list_command(int argc, char **argv)
{
	struct strv nodes = { 0 }, reasons = { 0 }, refused = { 0 };
	char err[1024], *f;
	struct stat st;

	if (argc == 3 && (!strcmp(argv[2], "-h") || !strcmp(argv[2], "--help"))) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (argc != 3)
		die("usage: ccdiag drain-list REPORT_DIR|summary.json");
	f = !stat(argv[2], &st) && S_ISDIR(st.st_mode) ? xasprintf("%s/summary.json", argv[2]) : xstrdup(argv[2]);
	if (access(f, R_OK))
		die("cannot read '%s'", f);
	if (drain_list(f, NULL, &nodes, &reasons, &refused, err, sizeof(err)))
		die("%s", err);
	for (int i = 0; i < refused.n; i++)
		fprintf(stderr, "ccdiag: %s\n", refused.v[i]);
	for (int i = 0; i < nodes.n; i++)
		printf("NodeName=%s State=DRAIN Reason=\"%s\"\n", nodes.v[i], reasons.v[i]);
	/* stdout stays empty for xargs; the terminal is told why */
	if (!nodes.n && !refused.n) {
		char *t = safe_text(f);

		fprintf(stderr, "ccdiag: no node to drain: the report '%s' blames none\n", t);
		free(t);
	}
	free(f);
	strv_free(&nodes);
	strv_free(&reasons);
	strv_free(&refused);
	return 0;
}

/* the drain list after the report, and --drain: scontrol, one node per call */
static void drain_after(const char *summary, const char *pname)
{
	struct strv nodes = { 0 }, reasons = { 0 }, refused = { 0 };
	char *list = g.drain_list ? xstrdup(g.drain_list) : xasprintf("%s/drain.txt", g.out);
	char *dlog = xasprintf("%s/drain.log", g.out), *names, err[1024];
	FILE *f;

	if (drain_list(summary, pname, &nodes, &reasons, &refused, err, sizeof(err)) ||
	    !(f = fopen(list, "w"))) {
		say("cannot write the drain list '%s'", list);
		goto out;
	}
	for (int i = 0; i < refused.n; i++)
		say("%s", refused.v[i]);
	for (int i = 0; i < nodes.n; i++)
		fprintf(f, "NodeName=%s State=DRAIN Reason=\"%s\"\n", nodes.v[i], reasons.v[i]);
	if (fclose(f)) {
		say("cannot write the drain list '%s'", list);
		goto out;
	}
	names = strv_join(&nodes, ",");
	say("%d node(s) to drain%s%s (in %s)", nodes.n, *names ? ": " : "", names, list);
	if (g.drain && nodes.n) {
		int ok = 1;

		for (int i = 0; i < nodes.n; i++) {
			char *a0 = "scontrol", *a1 = "update", *a2 = xasprintf("NodeName=%s", nodes.v[i]);
			char *a4 = xasprintf("Reason=%s", reasons.v[i]);
			char *argv[] = { a0, a1, a2, "State=DRAIN", a4, NULL };
			pid_t pid;

			fflush(stdout);
			pid = spawn_logged(argv, dlog, 0);
			if (pid < 0 || spawn_wait(pid) != 0)
				ok = 0;
			free(a2);
			free(a4);
		}
		if (ok) {
			say("drained: %s (scontrol update; log %s)", names, dlog);
		} else {
			char *l = last_line(dlog);

			say("cannot drain: scontrol update failed: %s", l);
			free(l);
		}
	}
	free(names);
out:
	free(list);
	free(dlog);
	strv_free(&nodes);
	strv_free(&reasons);
	strv_free(&refused);
}

/* ------------------------------------------------------------------ the framework */
/*
 * The interpreters tried, in order: CCDIAG_PYTHON alone when set; else every python3 on
 * PATH (the first may be a pyenv shim without torch), then the system's.
 */
static void add_unique_str(struct strv *s, const char *str)
{
	if (strv_find(s, str) < 0)
		strv_add(s, str);
}

static void python_candidates(struct strv *c)
{
	const char *path = env("PATH") ?: "/usr/bin:/bin";
	struct strv dirs = { 0 };

	if (env("CCDIAG_PYTHON")) {
		strv_add(c, env("CCDIAG_PYTHON"));
		return;
	}
	strv_split(&dirs, path, ':');
	for (int i = 0; i < dirs.n; i++) {
		char *p;

		if (!*dirs.v[i] || dirs.v[i][0] != '/')
			continue;
		p = xasprintf("%s/python3", dirs.v[i]);
		if (!access(p, X_OK))
			add_unique_str(c, p);
		free(p);
	}
	strv_free(&dirs);
	add_unique_str(c, "/usr/bin/python3");
	add_unique_str(c, "/usr/local/bin/python3");
}

#define TORCH_CHECK "import torch, torch.distributed as d; assert d.is_available(); print(torch.__version__)"

/*
 * On this host (the emulated hosts share its files): the first candidate that imports
 * torch with torch.distributed. Sets g.python, or g.framework_why.
 */
static void framework_local(void)
{
	struct strv c = { 0 };
	char *tried;

	python_candidates(&c);
	for (int i = 0; i < c.n && !g.python; i++) {
		char *argv[] = { c.v[i], "-c", TORCH_CHECK, NULL }, *out = NULL;

		if (spawn_capture(argv, &out, NULL, 120) == 0)
			g.python = xstrdup(c.v[i]);
		free(out);
	}
	tried = strv_join(&c, ", ");
	g.framework = g.python ? 1 : 0;
	if (!g.python)
		g.framework_why = xasprintf("the framework is not present: no python3 imports torch with "
					    "torch.distributed on this host (tried %s; Debian: apt-get install "
					    "python3-torch)", tried);
	free(tried);
	strv_free(&c);
}

/*
 * On every host through the launcher (one rank per node): the first candidate that
 * imports torch there; the interpreter must be the same path on every host.
 */
static void framework_hosts(void)
{
	struct strv c = { 0 }, cmd = { 0 };
	char *script, *tried, *out = NULL, *save = NULL, *mine = NULL, *none = NULL;
	int rc, hosts = 0;

	python_candidates(&c);
	tried = strv_join(&c, " ");
	script = xasprintf("for p in %s; do if [ -x \"$p\" ] && \"$p\" -c '%s' >/dev/null 2>&1; then "
			   "echo \"ok $(hostname) $p\"; exit 0; fi; done; echo \"none $(hostname)\"", tried,
			   TORCH_CHECK);
	launcher(1, &cmd);
	strv_add(&cmd, "/bin/sh");
	strv_add(&cmd, "-c");
	strv_add(&cmd, script);
	rc = spawn_capture(cmd.v, &out, NULL, 300);
	for (char *l = out ? strtok_r(out, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save)) {
		char w[8], h[256], p[PATH_MAX];
		int k = sscanf(l, "%7s %255s %4095s", w, h, p);

		if (k >= 2 && !strcmp(w, "none") && !none)
			none = xstrdup(h);
		else if (k == 3 && !strcmp(w, "ok")) {
			hosts++;
			if (!mine)
				mine = xstrdup(p);
			else if (strcmp(mine, p) && !none)
				none = xasprintf("%s (it imports torch with %s, another host with %s)", h, p, mine);
		}
	}
	if (rc == 0 && !none && hosts >= g.nodes && mine) {
		g.python = mine;
		g.framework = 1;
	} else {
		g.framework = 0;
		g.framework_why = none ? xasprintf("the framework is not present on %s: no python3 there imports "
						   "torch with torch.distributed (tried %s)", none, tried) :
			xasprintf("cannot tell whether the hosts have the framework: the check through the "
				  "launcher answered for %d of %d host(s) (exit %d)", hosts, g.nodes, rc);
		free(mine);
	}
	free(none);
	free(out);
	free(script);
	free(tried);
	strv_free(&cmd);
	strv_free(&c);
}

/* the framework phase's command: the launcher, the interpreter, the script, its options */
static void framework_cmd(const struct plan *pl, int k, const char *python, const char *f, struct strv *cmd)
{
	const struct plan_phase *ph = &pl->ph[k];
	struct strv args = { 0 };
	const char *master = "127.0.0.1";
	char *first = NULL;

	switch (g.launch) {
	case PLAN_EMULATED:
		master = "node0";
		break;
	case PLAN_MPIRUN:
		master = g.hostlist.v[0];
		break;
	case PLAN_SRUN: {
		char *argv[] = { "scontrol", "show", "hostnames", NULL };

		if (spawn_capture(argv, &first, NULL, 20) == 0 && first && *first) {
			first[strcspn(first, "\n")] = '\0';
			master = first;
		}
		break;
	}
	default:
		break;
	}
	launcher(ph->rpn, cmd);
	strv_add(cmd, python);
	strv_add(cmd, g.workload_script ? g.workload_script : "workloads/torch_step.py");
	phase_args(pl, k, &args);
	strv_addv(cmd, &args);
	strv_add(cmd, "--master");
	strv_add(cmd, master);
	strv_add(cmd, "-o");
	strv_add(cmd, f);
	strv_free(&args);
	free(first);
}

/* ------------------------------------------------------------------ run */
struct phase_run {
	const struct plan *pl;
	int k;
	double est;
	const double *ests;
	int tty;
};

static void show_progress(const struct phase_run *r, time_t ts, long tick)
{
	static long every = -1;
	double rest = 0, left;
	long el = now() - ts;

	if (g.quiet)
		return;
	if (every < 0) {
		const char *e = env("CCDIAG_PROGRESS_EVERY");

		every = e && atol(e) > 0 ? atol(e) : 60;
	}
	for (int j = r->k + 1; j < r->pl->nph; j++)
		rest += r->ests[j];
	left = (long)((r->est - el > 0 ? r->est - el : 0) + rest);
	if (r->tty)
		fprintf(stderr, "\r\033[Kccdiag: phase %d/%d %s: %s elapsed (est. %s), ~%s left in the run",
			r->k + 1, r->pl->nph, r->pl->ph[r->k].name, hm(el), hm(r->est), hm(left));
	else if (tick % every == 0)
		fprintf(stderr, "ccdiag: phase %d/%d %s: %s elapsed (est. %s), ~%s left in the run\n",
			r->k + 1, r->pl->nph, r->pl->ph[r->k].name, hm(el), hm(r->est), hm(left));
	fflush(stderr);
}

/* srun's line for a task that ended before the run began, after offset off of log; malloc'd */
static char *srun_early(const char *log, off_t off)
{
	FILE *f = fopen(log, "r");
	char *line = NULL, *found = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!f)
		return NULL;
	if (fseeko(f, off, SEEK_SET) == 0)
		while (!found && (n = getline(&line, &cap, f)) > 0) {
			if (line[n - 1] == '\n')
				line[n - 1] = '\0';
			if (match(line, "^srun: error: [^ ]+: tasks? [0-9,-]+: "))
				found = xstrdup(line);
		}
	free(line);
	fclose(f);
	return found;
}

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, ms % 1000 * 1000000L };

	nanosleep(&t, NULL);
}

/* runs phase k; returns 0 when it wrote results (why: the exit status's words) */
static void run_phase(const struct plan *pl, int k, const double *ests, time_t t0)
{
	const struct plan_phase *ph = &pl->ph[k];
	struct phase_run r = { pl, k, ests[k], ests, isatty(2) };
	char *f = xasprintf("%s/phase-%d-%s.jsonl", g.out, k + 1, ph->name);
	char *log = xasprintf("%s/phase-%d-%s.log", g.out, k + 1, ph->name);
	char *why = NULL, *cmdline, *logbase, *names = strv_join(&ph->names, " ");
	struct strv cmd = { 0 }, args = { 0 };
	long deadline;
	const char *dl_what;
	time_t ts = now(), dt;
	int rc = 0, late = 0;

	logbase = strrchr(log, '/') + 1;
	if (interrupted) {
		not_run(pl, k, f, "interrupted (SIGINT) during an earlier phase");
		goto out;
	}
	if (g.budget >= 0 && (now() - t0) + r.est > g.budget * 1.2) {
		char *w = xasprintf("--budget %s spent (%s so far, ~%s more needed)", hm(g.budget),
				    hm(now() - t0), hm(r.est));

		not_run(pl, k, f, w);
		free(w);
		goto out;
	}
	if (ph->skipped) {
		not_run(pl, k, f, ph->skip_why);
		goto out;
	}
	if (ph->kind == PK_FRAMEWORK) {
		/* the framework on the hosts: checked now that they are up, when it was not before */
		if (g.framework < 0)
			framework_hosts();
		if (!g.framework) {
			not_run(pl, k, f, g.framework_why);
			goto out;
		}
		if (!g.workload_script) {
			not_run(pl, k, f, "workloads/torch_step.py not found beside ccdiag (CCDIAG_WORKLOAD names it)");
			goto out;
		}
		framework_cmd(pl, k, g.python, f, &cmd);
	} else {
		launcher(ph->rpn, &cmd);
		strv_add(&cmd, g.ccprobe);
		phase_args(pl, k, &args);
		strv_addv(&cmd, &args);
		strv_add(&cmd, "-q");
		strv_add(&cmd, "-o");
		strv_add(&cmd, f);
	}
	/* a phase far beyond its estimate is stopped (SIGTERM: its interrupted record) */
	deadline = (long)(3 * r.est + 120);
	dl_what = "3x its estimate + 2 min";
	if (g.quick) {
		deadline = 60;
		dl_what = "quick's deadline";
	}
	if (env("CCDIAG_PHASE_DEADLINE")) {
		deadline = atol(env("CCDIAG_PHASE_DEADLINE"));
		dl_what = "CCDIAG_PHASE_DEADLINE";
	}
	progress("phase %d/%d %s: running %s (~%s; log %s)", k + 1, pl->nph, ph->name, names, hm(r.est), log);
	cmdline = strv_quoted(&cmd);
	cmdline[strlen(cmdline) - 1] = '\n';
	append(log, cmdline, 1);
	/* a launch that wrote nothing because a rank crashed is launched once more: it died
	 * before any measurement, so nothing measured is replaced; both tries are in the log */
	for (int try = 1; try <= 2; try++) {
		off_t off = file_size(log);
		char *early = NULL;
		long tick = 0;
		time_t kill_at = 0;
		pid_t pid;

		ts = now();
		late = 0;
		term_sent = 0;
		fflush(stdout);
		pid = spawn_logged(cmd.v, log, 1);
		if (pid < 0) {
			rc = 127;
		} else {
			int w, done = 0;

			child = pid;
			if (interrupted && !term_sent) {
				term_sent = 1;
				kill(pid, SIGTERM);
			}
			/* progress while it runs (from its start: in place on a terminal, a line a
			 * minute otherwise); past the deadline SIGTERM, 30 s later SIGKILL */
			show_progress(&r, ts, 0);
			while (!done) {
				for (int ms = 0; ms < 1000 && !done; ms += 100) {
					pid_t p = waitpid(pid, &w, WNOHANG);

					if (p == pid)
						done = 1;
					else if (p < 0 && errno != EINTR)
						done = 1, w = 0;
					else
						sleep_ms(100);
				}
				if (done)
					break;
				tick++;
				if (term_sent && !kill_at)
					kill_at = now() + 30;
				if (now() - ts >= deadline && !kill_at) {
					late = 1;
					term_sent = 1;
					kill(pid, SIGTERM);
					kill_at = now() + 30;
				} else if (kill_at && now() >= kill_at) {
					kill(-pid, SIGKILL);
				} else if (g.launch == PLAN_SRUN && !kill_at && !file_size(f) &&
					   (early = srun_early(log, off))) {
					/* a task ended before the run began: the others wait in MPI_Init */
					term_sent = 1;
					kill(pid, SIGTERM);
					kill_at = now() + 30;
				}
				show_progress(&r, ts, tick);
			}
			child = 0;
			rc = spawn_status(w);
		}
		if (r.tty && !g.quiet)
			fputs("\r\033[K", stderr);
		dt = now() - ts;
		free(why);
		if (interrupted)
			why = xstrdup("interrupted");
		else if (late)
			why = xasprintf("stopped after %s (%s)", hm(deadline), dl_what);
		else if (early)
			why = xasprintf("stopped: %s", early + strlen("srun: error: "));
		else if (rc > 128)
			why = xasprintf("exit %d, signal %d", rc, rc - 128);
		else
			why = xasprintf("exit %d", rc);
		/* relaunched only when a rank died of a signal, before anything was written */
		if (file_size(f) || try == 2 || interrupted || late ||
		    (early ? strstr(early, "Exited with exit code") != NULL : rc <= 128)) {
			free(early);
			break;
		}
		free(early);
		say("phase %d/%d %s: the launch failed (%s; see %s); launching it once more", k + 1, pl->nph,
		    ph->name, why, logbase);
		{
			char *t = xasprintf("ccdiag: the launch failed (%s); launching it once more\n%s", why, cmdline);

			append(log, t, 0);
			free(t);
		}
		unlink(f);
	}
	free(cmdline);
	if (!file_size(f)) {
		/* it never started (nothing written): recorded as not run, the next phase goes on */
		char *w = xasprintf("the launch failed (%s; see %s)", why, logbase);

		not_run(pl, k, f, w);
		free(w);
	} else {
		char *found = phase_found(f);

		say("phase %d/%d %s: %s: %s (est. %s), %s: %s", k + 1, pl->nph, ph->name, names, hm(dt),
		    hm(r.est), why, found);
		free(found);
	}
out:
	free(why);
	free(names);
	free(f);
	free(log);
	strv_free(&cmd);
	strv_free(&args);
}

/* ------------------------------------------------------------------ spot-check */
struct spot_ctx {
	const struct plan_input *in;
	const struct plan_registry *reg;
};

/* spot_ops.run: the profile's phase on a sample's hosts, through run_phase (docs/provenance.md) */
static char *spot_run(void *ctx, const char *phase, const struct strv *hosts, const char *dir)
{
	const struct spot_ctx *sc = ctx;
	struct plan_input in = *sc->in;
	struct plan pl;
	double ests[PLAN_MAX_PHASES];
	char err[1024], *f = NULL;
	int k = -1;

	in.nodes = hosts->n;
	in.quick = !strcmp(phase, "node");
	in.budget_s = -1;
	in.shrink = 0;
	in.soak_s = 0;
	if (plan_make(&pl, &in, sc->reg, err, sizeof(err))) {
		say("spot-check: %s", err);
		plan_free(&pl);
		return NULL;
	}
	for (int i = 0; i < pl.nph; i++) {
		ests[i] = pl.ph[i].est[pl.level];
		if (!strcmp(pl.ph[i].name, phase))
			k = i;
	}
	if (k >= 0 && !interrupted) {
		strv_free(&g.only);
		strv_addv(&g.only, hosts);
		g.nodes = hosts->n;
		g.out = dir;
		if (mkdir_p(dir))
			die("cannot create '%s'", dir);
		run_phase(&pl, k, ests, now());
		f = xasprintf("%s/phase-%d-%s.jsonl", dir, k + 1, pl.ph[k].name);
	}
	plan_free(&pl);
	return f;
}

/* ccdiag spot-check: the launcher as for run, then spotcheck() (diag/spotcheck.c) */
static int spot_main(const struct plan_input *in, const struct plan_registry *reg, const char *ppath)
{
	struct spot_ctx sc = { in, reg };
	struct spot_ops ops = { spot_run, &sc };
	struct spot_args a = { .profile = ppath, .against = g.against, .ccreport = g.ccreport, .k = g.spot_k,
			       .tol = g.spot_tol };
	struct strv reach = { 0 };
	struct stat st;
	char *top;
	int rc;

	if (stat(g.against, &st) || !S_ISDIR(st.st_mode))
		die("spot-check: '%s' is not a folder (the received run's, with its phase-*.jsonl)", g.against);
	if (g.launch == PLAN_LOCAL) {
		die("spot-check runs on the received run's hosts: give --hosts FILE or -H, run it inside "
		    "their Slurm allocation, or --emulated N");
	} else if (g.launch == PLAN_SRUN) {
		/* Slurm's allocation: srun -w reaches the job's nodes; a host outside it fails its
		 * launch, said in the phase line */
		a.reach = NULL;
	} else if (g.launch == PLAN_EMULATED) {
		for (int i = 0; i < g.nodes; i++)
			strv_addf(&reach, "node%d", i);
		a.reach = &reach;
	} else {
		a.reach = &g.hostlist;
	}
	if (!g.out) {
		static char def[64];
		time_t t = now();

		strftime(def, sizeof(def), "spotcheck-%Y%m%d-%H%M%S", gmtime(&t));
		g.out = def;
	}
	if (mkdir_p(g.out) || access(g.out, W_OK))
		die("cannot write into '%s'", g.out);
	top = xstrdup(g.out);
	a.out = top;
	if (g.seed_set) {
		a.seed = g.seed;
	} else {
		char id[17];

		random_run_id(id);
		a.seed = strtoull(id, NULL, 16) >> 1 ?: 1;
	}
	if (g.launch == PLAN_MPIRUN)
		check_hosts();
	catch_signals();
	if (g.launch == PLAN_EMULATED)
		emu_build();
	rc = spotcheck(&a, &ops);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	emu_down();
	if (interrupted && rc != 1)
		rc = 4;
	g.out = top;
	strv_free(&reach);
	return rc;
}

int main(int argc, char **argv)
{
	struct profile prof;
	struct plan pl;
	struct plan_input in = { 0 };
	struct plan_registry reg;
	struct ccprobe_registry cr = { 0 };
	char err[1024], *ppath, *where;
	double ests[PLAN_MAX_PHASES];
	const char *v;
	int nset = 0, rc, refused;
	time_t t0, start;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2) {
		fputs(usage_text, stderr);
		return EXIT_BAD_INPUT;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("ccdiag %s (git %s)\n", CCDIAG_VERSION, ccdiag_commit);
		return 0;
	}
	if (!strcmp(argv[1], "drain-list"))
		return drain_list_command(argc, argv);
	/* every command's --help is the usage (exit 0), as ccdiag --help */
	for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(usage_text, stdout);
			return 0;
		}
	if (!strcmp(argv[1], "sign"))
		return sign_command(argc, argv);
	if (!strcmp(argv[1], "verify"))
		return verify_command(argc, argv);
	if (!strcmp(argv[1], "quick"))
		g.quick = 1;
	else if (!strcmp(argv[1], "spot-check"))
		g.spot = 1;
	else if (strcmp(argv[1], "run"))
		die("unknown command '%s' (try: ccdiag --help)", argv[1]);
	parse_options(argc, argv, 2);
	atexit(cleanup);

	if (!g.profile)
		die("no profile (-p NAME or -p FILE)");
	if (g.emu_args.n && !g.emu_n)
		die("--rate, --degrade, --storage and --leaves need --emulated N");
	for (int i = 0; i < g.emu_args.n; i += 2)
		if (!strcmp(g.emu_args.v[i], "--storage") && !g.storage_dir)
			g.storage_dir = EMU_STORAGE_DIR;
	if (g.shrink && g.budget < 0)
		die("--shrink needs --budget");
	if (g.spot && !g.against)
		die("spot-check needs --against DIR (the received run's folder)");
	if (g.spot && (g.budget >= 0 || g.soak || g.drain || g.drain_list || g.dry || g.nonce))
		die("spot-check takes no --budget, --soak, --drain, --drain-list, --dry-run or --nonce");
	find_binaries();
	if (access(g.ccprobe, X_OK))
		die("cannot find '%s' (ccdiag runs beside ccprobe and ccreport)", g.ccprobe);
	if (access(g.ccreport, X_OK))
		die("cannot find '%s' (ccdiag runs beside ccprobe and ccreport)", g.ccreport);
	if (g.drain) {
		char *ping[] = { "scontrol", "ping", NULL };
		int prc = spawn_capture(ping, NULL, NULL, 20);

		if (prc < 0 || prc == 127)
			die("--drain needs Slurm: scontrol not found (--drain-list FILE writes the lines instead)");
		if (prc != 0)
			die("--drain needs Slurm: scontrol ping: the controller does not answer");
	}
	if (g.quick) {
		if (g.emu_n || g.hosts || g.hostfile || g.budget >= 0 || g.soak || g.drain)
			die("ccdiag quick checks this node: no --emulated, -H, --hosts, --budget, --soak or --drain");
		unsetenv("SLURM_JOB_ID");
	}

	/* the launcher */
	g.launch = PLAN_LOCAL;
	g.nodes = 1;
	if (g.emu_n)
		nset++;
	if (g.hosts || g.hostfile)
		nset++;
	if (g.hosts && g.hostfile)
		die("give -H or --hosts, not both");
	if (nset > 1)
		die("give one of --emulated, -H/--hosts");
	if (g.emu_n) {
		g.launch = PLAN_EMULATED;
		g.nodes = g.emu_n;
		if (!g.emucluster)
			die("cannot find scripts/emucluster for --emulated");
		if (!g.dry && geteuid() != 0)
			die("--emulated needs root (network namespaces)");
	} else if (g.hosts || g.hostfile) {
		g.launch = PLAN_MPIRUN;
		read_hosts();
		g.nodes = g.hostlist.n;
	} else if (env("SLURM_JOB_ID")) {
		g.launch = PLAN_SRUN;
		v = env("SLURM_JOB_NUM_NODES") ?: env("SLURM_NNODES") ?: "1";
		g.nodes = match(v, "^[0-9]{1,6}$") && atoi(v) > 0 ? atoi(v) : 1;
	}

	if (!g.quick)
		find_topology();

	/* what the profile judges: read once, by ccreport's own reader */
	ppath = profile_find(g.profile, argv[0]);
	if (!ppath) {
		profile_not_found(err, sizeof(err), g.profile, argv[0]);
		die("%s", err);
	}
	if (profile_load(&prof, ppath, err, sizeof(err)) || workload_check(&prof.wl, ppath, err, sizeof(err)))
		die("%s", strncmp(err, "ccreport: ", 10) ? err : err + 10);
	in.prof = &prof;
	in.nodes = g.nodes;
	in.launch = g.launch;
	in.ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	in.tps = g.tps;
	in.max_size = g.max_size;
	in.soak_s = g.soak;
	in.budget_s = g.budget;
	in.shrink = g.shrink;
	in.quick = g.quick;
	in.storage_dir = g.storage_dir;
	in.extra = &g.extra;
	if (g.launch == PLAN_EMULATED) {
		const char *r = "1gbit";

		for (int i = 0; i < g.emu_args.n; i += 2)
			if (!strcmp(g.emu_args.v[i], "--rate"))
				r = g.emu_args.v[i + 1];
		if ((in.emu_gbps = rate_gbit(r)) < 0)
			die("invalid rate '%s' for --rate (tc syntax, e.g. 1gbit, 100mbit)", r);
	}
	/* the train phase's framework: the emulated hosts and this one share its interpreters */
	if (prof.wl.any && !g.quick && (g.launch == PLAN_LOCAL || g.launch == PLAN_EMULATED))
		framework_local();
	in.framework = g.framework;
	in.framework_why = g.framework_why;
	cr.ccprobe = g.ccprobe;
	ccprobe_registry_init(&cr, &reg);
	if (g.spot) {
		rc = spot_main(&in, &reg, ppath);
		ccprobe_registry_free(&cr);
		profile_free(&prof);
		free(ppath);
		return rc;
	}
	/* a plan over --budget: --dry-run shows the plan it refuses, then the refusal */
	if ((refused = plan_make(&pl, &in, &reg, err, sizeof(err))) && !(g.dry && pl.over_budget))
		die("%s", err);

	if ((v = env("CCDIAG_PHASE_DEADLINE")) && !match(v, "^[1-9][0-9]{0,8}$"))
		die("invalid CCDIAG_PHASE_DEADLINE '%s' (seconds a phase may run before it is stopped)", v);
	if (g.launch == PLAN_SRUN) {
		if ((v = env("CCDIAG_SRUN_CPUS_PER_TASK")) && !match(v, "^(off|[1-9][0-9]{0,5})$"))
			die("invalid CCDIAG_SRUN_CPUS_PER_TASK '%s' (a CPU count per task, or off)", v);
		if ((v = env("CCDIAG_SRUN_CPU_BIND")) && !match(v, "^[a-z_,:0-9x]+$"))
			die("invalid CCDIAG_SRUN_CPU_BIND '%s' (an srun --cpu-bind value, e.g. cores)", v);
		if ((v = env("CCDIAG_SRUN_MPI")) && !match(v, "^[a-z0-9_]+$"))
			die("invalid CCDIAG_SRUN_MPI '%s' (an srun --mpi value, e.g. pmix)", v);
	}

	switch (g.launch) {
	case PLAN_EMULATED: {
		char *ea = strv_join(&g.emu_args, " ");

		where = *ea ? xasprintf("%d emulated hosts (%s)", g.nodes, ea) : xasprintf("%d emulated hosts", g.nodes);
		free(ea);
		break;
	}
	case PLAN_MPIRUN:
		where = xasprintf("%d hosts through mpirun", g.nodes);
		break;
	case PLAN_SRUN:
		where = xasprintf("%d nodes of Slurm job %s through srun", g.nodes, env("SLURM_JOB_ID"));
		break;
	default:
		where = xstrdup("this host");
	}
	if (!g.out) {
		static char def[64];
		time_t t = now();

		strftime(def, sizeof(def), "ccdiag-%Y%m%d-%H%M%S", gmtime(&t));
		g.out = def;
	}
	say("plan for profile %s on %s: %d phase(s), results in %s", prof.name, where, pl.nph, g.out);
	for (int i = 0; i < topo.lines.n; i++)
		say("%s", topo.lines.v[i]);
	pair_schedule_line(&pl);
	/* the phases read it from the results folder, which their rank 0 sees (placed below) */
	if (topo_arg >= 0 && topo.text) {
		free(g.extra.v[topo_arg]);
		g.extra.v[topo_arg] = xasprintf("%s/topology.txt", g.out);
	}
	for (int k = 0; k < pl.nph; k++) {
		const struct plan_phase *ph = &pl.ph[k];
		char *names = strv_join(&ph->names, " "), *a, *nm = safe_text(names);
		struct strv args = { 0 };

		ests[k] = ph->est[pl.level];
		if (ph->skipped) {
			printf("  phase %d/%d %-18s %-28s not run: %s\n", k + 1, pl.nph, ph->name, nm, ph->skip_why);
			free(names);
			free(nm);
			continue;
		}
		phase_args(&pl, k, &args);
		a = strv_quoted(&args);
		printf("  phase %d/%d %-18s %-28s ~%6s  (%d rank(s) per node; %s %s)\n", k + 1, pl.nph,
		       ph->name, nm, hm(ests[k]), ph->rpn, ph->kind == PK_FRAMEWORK ? "torch_step.py" : "ccprobe", a);
		if (g.dry && ph->kind == PK_FRAMEWORK) {
			struct strv cmd = { 0 };
			char *c, *f = xasprintf("%s/phase-%d-%s.jsonl", g.out, k + 1, ph->name);

			framework_cmd(&pl, k, g.python ? g.python : "PYTHON", f, &cmd);
			c = strv_quoted(&cmd);
			c[strlen(c) - 1] = '\0';
			printf("    launch: %s%s\n", c, g.python ? "" : " (PYTHON: the first python3 on the hosts "
			       "that imports torch, found when they are up)");
			free(c);
			free(f);
			strv_free(&cmd);
		} else if (g.dry) {
			/* what would run, in full */
			struct strv cmd = { 0 };
			char *c, *f = xasprintf("%s/phase-%d-%s.jsonl", g.out, k + 1, ph->name);

			launcher(ph->rpn, &cmd);
			strv_add(&cmd, g.ccprobe);
			strv_addv(&cmd, &args);
			strv_add(&cmd, "-q");
			strv_add(&cmd, "-o");
			strv_add(&cmd, f);
			c = strv_quoted(&cmd);
			c[strlen(c) - 1] = '\0';
			printf("    launch: %s\n", c);
			free(c);
			free(f);
			strv_free(&cmd);
		}
		free(a);
		free(names);
		free(nm);
		strv_free(&args);
	}
	for (int i = 0; i < pl.unrunnable.n; i++)
		say("not runnable: %s (its criteria will be incomplete)", pl.unrunnable.v[i]);
	for (int i = 0; i < pl.estimate_errors.n; i++)
		say("note: %s (estimated as its launch alone)", pl.estimate_errors.v[i]);
	if (pl.soak_note)
		say("soak: %s", pl.soak_note);
	if (pl.soak_needed)
		say("note: the profile's soak criteria need --soak DURATION (without it they are incomplete)");
	for (int l = 1; l <= pl.level; l++)
		say("cut to fit --budget: %s", pl.cut[l]);
	if (g.budget >= 0)
		say("estimated total ~%s of --budget %s (a model of healthy hardware; slow links take longer)",
		    hm(pl.total), hm(g.budget));
	else
		say("estimated total ~%s (a model of healthy hardware; slow links take longer)", hm(pl.total));
	fflush(stdout);
	if (refused)
		die("%s", err);
	if (g.dry)
		return 0;

	/* ------------------------------------------------------------ run */
	start = now();
	random_run_id(g.run_id);
	if (g.launch == PLAN_MPIRUN)
		check_hosts();
	if (mkdir_p(g.out))
		die("cannot create '%s'", g.out);
	if (access(g.out, W_OK))
		die("cannot write into '%s'", g.out);
	{
		/* an older run's manifest and signature vouch for files this run replaces */
		static const char *const old[] = { "phase-*.jsonl", "phase-*.log", "MANIFEST", "MANIFEST.sig",
						   "MANIFEST.tmp", NULL };

		remove_matching(g.out, old);
	}
	if (g.quick) {
		g.quick_profile = quick_profile(ppath, &pl.quick_keep);
		g.profile = g.quick_profile;
	}
	if (topo_arg >= 0 && topo.text) {
		char *placed = diag_topo_place(&topo, g.out);

		if (!placed)
			die("cannot write '%s/topology.txt'", g.out);
		free(placed);
	}
	catch_signals();
	if (g.launch == PLAN_EMULATED)
		emu_build();

	t0 = now();
	for (int k = 0; k < pl.nph; k++)
		run_phase(&pl, k, ests, t0);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	emu_down();

	/* ------------------------------------------------------------ report */
	{
		struct strv cmd = { 0 };
		char *rep = xasprintf("%s/report", g.out), *summary = xasprintf("%s/report/summary.json", g.out);
		pid_t pid;

		say("ccreport -p %s -o %s %s/phase-*.jsonl", g.profile, rep, g.out);
		/* never the previous run's verdict: this run's ccreport writes it, or there is none */
		unlink(summary);
		strv_add(&cmd, g.ccreport);
		strv_add(&cmd, "-p");
		strv_add(&cmd, g.profile);
		strv_add(&cmd, "-o");
		strv_add(&cmd, rep);
		for (int k = 0; k < pl.nph; k++)
			strv_addf(&cmd, "%s/phase-%d-%s.jsonl", g.out, k + 1, pl.ph[k].name);
		pid = spawn_logged(cmd.v, NULL, 0);
		rc = pid < 0 ? 3 : spawn_wait(pid);
		if (rc < 0)
			rc = 3;
		if ((g.drain || g.drain_list) && (rc == 0 || rc == 1 || rc == 4) && file_size(summary))
			drain_after(summary, prof.name);
		strv_free(&cmd);
		free(rep);
		free(summary);
	}
	if (write_manifest(&pl, prof.name, ppath, start) && (rc == 0 || rc == 1 || rc == 4))
		rc = 3;
	say("total %s (estimated ~%s); exit %d", hm(now() - t0), hm(pl.total), rc);
	plan_free(&pl);
	ccprobe_registry_free(&cr);
	profile_free(&prof);
	free(ppath);
	free(where);
	return rc;
}
