/*
 * storage: what a training job's checkpoints and data loader get from a
 * filesystem, IOR/mdtest-style, every rank at once on --storage-dir:
 *  - write: each rank writes its shard (file per process, --storage-block
 *    transfers) then fsyncs; the aggregate rate runs from the common start
 *    to the last rank's fsync (the slowest rank decides);
 *  - read: each rank reads a shard written on another node (shift by the
 *    ranks per node, as IOR -C), with O_DIRECT where the filesystem takes
 *    it, and checks every block against its seeded pattern;
 *  - metadata: create, stat and remove of many empty files per rank;
 *  - random reads of 64 KiB at random offsets of those shards (IOPS and
 *    latency), checked too.
 * Everything lives under one per-run subdirectory (ccdiag-storage-RUNID),
 * and only what the run created is ever removed, on an error, a timeout or
 * a signal too. Method and thresholds: docs/storage.md.
 */
#include "probe.h"

#include "../core/log.h"
#include "../core/size.h"
#include "../core/timer.h"
#include "../core/watchdog.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#define ST_ALIGN 4096                 /* O_DIRECT buffer, offset and length alignment */
#define ST_RAND_BYTES ((size_t)64 << 10)
#define ST_MIN_FREE 0.05              /* refuse a run that would leave less free */
#define ST_CLEAN_WAIT_S 3             /* how long an abort waits for the cleanup */
#define ST_MSG 512

static const char *p_dir;
static size_t p_size = (size_t)1 << 30;
static size_t p_block = (size_t)4 << 20;
static int p_reps = 3;
static int p_files = 1000;
static int p_reads = 1000;

static const struct cc_param storage_params[] = {
	{ "storage-dir", CC_PARAM_STRING, &p_dir,
	  "storage: directory to test (needed by the storage probe; a shared or node-local filesystem)" },
	{ "storage-size", CC_PARAM_SIZE, &p_size, "storage: checkpoint shard written per rank [1G]" },
	{ "storage-block", CC_PARAM_SIZE, &p_block, "storage: transfer size, a multiple of 4K [4M]" },
	{ "storage-reps", CC_PARAM_INT, &p_reps, "storage: write/read/metadata repetitions [3]" },
	{ "storage-files", CC_PARAM_INT, &p_files, "storage: small files per rank for metadata [1000]" },
	{ "storage-reads", CC_PARAM_INT, &p_reads, "storage: random 64K reads per rank [1000]" },
	{ NULL, 0, NULL, NULL },
};

/* What this rank made, for the cleanup (also run from the abort hook). */
static struct {
	char sub[PATH_MAX];      /* the per-run subdirectory; "" = none made */
	int made_sub;            /* this rank created sub (and the marker in it) */
	int rank, size;
	int files;               /* metadata files per rank */
	volatile int done;
	pthread_mutex_t lock;
	pthread_cond_t cond;
} cl = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

struct st_fs {
	char type[64];           /* from /proc/self/mountinfo, e.g. "fuse.glusterfs"; else statfs's */
	char source[256];        /* the mount source, e.g. "node4:/ccdiag" */
	char mnt[PATH_MAX];      /* the mount point */
	long long free, total, files_free;  /* statvfs: bytes for unprivileged users, inodes */
};

/* One rank's outcome of a phase: its time and, on failure, why. */
struct st_out {
	double t;                /* seconds from the common start */
	long long wrong;         /* blocks (or reads) whose data did not match */
	int err;                 /* errno of the failure, 0 = fine */
	char file[PATH_MAX];
	char msg[ST_MSG];
};

/* ---------------------------------------------------------------- options */

static int check_params(char *err, size_t len)
{
	struct stat st;

	if (!p_dir || !*p_dir)
		return options_fail(err, len, "the storage probe needs --storage-dir DIR");
	if (stat(p_dir, &st))
		return options_fail(err, len, "storage directory '%s': %s", p_dir, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return options_fail(err, len, "storage directory '%s' is not a directory", p_dir);
	if (access(p_dir, W_OK | X_OK))
		return options_fail(err, len, "storage directory '%s' is not writable: %s", p_dir,
				    strerror(errno));
	if (p_block < ST_ALIGN || p_block % ST_ALIGN)
		return options_fail(err, len, "--storage-block must be a multiple of 4K, got %zu", p_block);
	if (p_size < p_block || p_size % p_block)
		return options_fail(err, len, "--storage-size (%zu) must be a multiple of --storage-block (%zu)",
				    p_size, p_block);
	if (p_size < ST_RAND_BYTES && p_reads > 0)
		return options_fail(err, len, "--storage-size must be at least 64K for the random reads");
	if (p_reps < 1 || p_reps > 100)
		return options_fail(err, len, "--storage-reps must be 1..100, got %d", p_reps);
	if (p_files < 0 || p_files > 1000000)
		return options_fail(err, len, "--storage-files must be 0..1000000, got %d", p_files);
	if (p_reads < 0 || p_reads > 1000000)
		return options_fail(err, len, "--storage-reads must be 0..1000000, got %d", p_reads);
	return 0;
}

/* ---------------------------------------------------------------- data */

/* splitmix64 of (seed, word): the pattern of 8-byte word `word` of a shard */
static inline uint64_t pattern(uint64_t seed, uint64_t word)
{
	uint64_t z = seed + (word + 1) * 0x9E3779B97F4A7C15ULL;

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
	return z ^ (z >> 31);
}

/* the seed of the shard rank writes in repetition rep: another every time, so stale data shows */
static uint64_t shard_seed(uint64_t run_seed, int rank, int rep)
{
	return pattern(run_seed, ((uint64_t)rank << 20) | (uint64_t)rep);
}

static void fill(uint64_t *buf, size_t bytes, uint64_t seed, size_t off)
{
	for (size_t w = 0; w < bytes / 8; w++)
		buf[w] = pattern(seed, off / 8 + w);
}

/* non-zero when buf is not the pattern at off */
static int differs(const uint64_t *buf, size_t bytes, uint64_t seed, size_t off)
{
	for (size_t w = 0; w < bytes / 8; w++)
		if (buf[w] != pattern(seed, off / 8 + w))
			return 1;
	return 0;
}

static void shard_path(char *p, size_t len, int rank)
{
	snprintf(p, len, "%s/shard.%d", cl.sub, rank);
}

static void md_dir(char *p, size_t len, int rank)
{
	snprintf(p, len, "%s/md.%d", cl.sub, rank);
}

/* ---------------------------------------------------------------- cleanup */

/*
 * Removes what the run made: the shards and metadata files of this rank
 * (every rank's when all is set: the names are the run's own, under its own
 * subdirectory), then the marker and the subdirectory where this rank made
 * them. Missing files are fine; nothing else is touched.
 */
static void cleanup_files(int all)
{
	char p[PATH_MAX + 64], d[PATH_MAX + 32];

	if (!cl.sub[0])
		return;
	for (int r = all ? 0 : cl.rank; r < (all ? cl.size : cl.rank + 1); r++) {
		shard_path(p, sizeof(p), r);
		unlink(p);
		md_dir(d, sizeof(d), r);
		for (int i = 0; i < cl.files; i++) {
			snprintf(p, sizeof(p), "%s/f.%d", d, i);
			if (unlink(p) && errno == ENOENT && i == 0 && access(d, F_OK))
				break;  /* no such directory: nothing of this rank's metadata */
		}
		rmdir(d);
	}
	if (cl.made_sub || all) {
		snprintf(p, sizeof(p), "%s/marker", cl.sub);
		if (cl.made_sub)
			unlink(p);
		rmdir(cl.sub);  /* only when empty: another node's files may still be there */
	}
}

static void *cleanup_thread(void *arg)
{
	(void)arg;
	cleanup_files(1);
	pthread_mutex_lock(&cl.lock);
	cl.done = 1;
	pthread_cond_signal(&cl.cond);
	pthread_mutex_unlock(&cl.lock);
	return NULL;
}

/*
 * The watchdog's abort hook (timeout, SIGTERM, a dead rank): the cleanup in
 * a thread, waited for a few seconds only, as a hung filesystem would hold
 * it forever.
 */
static void cleanup_on_abort(void)
{
	struct timespec until;
	pthread_t t;
	int done;

	if (pthread_create(&t, NULL, cleanup_thread, NULL))
		return;
	pthread_detach(t);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ST_CLEAN_WAIT_S;
	pthread_mutex_lock(&cl.lock);
	while (!cl.done && pthread_cond_timedwait(&cl.cond, &cl.lock, &until) == 0)
		;
	done = cl.done;
	pthread_mutex_unlock(&cl.lock);
	if (!done)
		log_error("cannot remove the files of this run under '%s' in %d s (the filesystem does "
			  "not answer); they are left there", cl.sub, ST_CLEAN_WAIT_S);
}

/* ---------------------------------------------------------------- filesystem facts */

static const char *statfs_name(long type)
{
	switch ((unsigned long)type) {
	case 0xEF53: return "ext4";
	case 0x58465342: return "xfs";
	case 0x9123683E: return "btrfs";
	case 0x01021994: return "tmpfs";
	case 0x65735546: return "fuse";
	case 0x6969: return "nfs";
	case 0x0BD00BD0: return "lustre";
	case 0x47504653: return "gpfs";
	case 0x794C7630: return "overlay";
	case 0x2FC12FC1: return "zfs";
	case 0x00C36400: return "ceph";
	case 0x19830326: return "beegfs";
	default: return "unknown";
	}
}

/* fills type, source and mount point of the mount holding path (longest prefix in mountinfo) */
static void mount_of(const char *path, struct st_fs *fs)
{
	char real[PATH_MAX], line[4096];
	size_t best = 0;
	FILE *f;

	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], type[64], src[256], *dash;
		size_t n;

		/* id parent maj:min root mountpoint opts [optional...] - type source superopts */
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 || !(dash = strstr(line, " - ")) ||
		    sscanf(dash + 3, "%63s %255s", type, src) != 2)
			continue;
		n = strlen(mnt);
		if (strncmp(real, mnt, n) || (real[n] && real[n] != '/' && strcmp(mnt, "/")) || n < best)
			continue;
		best = n;
		snprintf(fs->mnt, sizeof(fs->mnt), "%s", mnt);
		snprintf(fs->type, sizeof(fs->type), "%s", type);
		snprintf(fs->source, sizeof(fs->source), "%s", src);
	}
	fclose(f);
}

static int fs_facts(const char *dir, struct st_fs *fs)
{
	struct statvfs v;
	struct statfs s;

	memset(fs, 0, sizeof(*fs));
	if (statvfs(dir, &v))
		return -1;
	fs->free = (long long)v.f_bavail * (long long)v.f_frsize;
	fs->total = (long long)v.f_blocks * (long long)v.f_frsize;
	fs->files_free = v.f_files ? (long long)v.f_favail : -1;
	if (!statfs(dir, &s))
		snprintf(fs->type, sizeof(fs->type), "%s", statfs_name((long)s.f_type));
	mount_of(dir, fs);
	return 0;
}

static json_t *fs_json(const struct st_fs *fs)
{
	return json_pack("{s:s, s:s, s:s, s:I, s:I}", "fs_type", fs->type, "mount_source",
			 fs->source[0] ? fs->source : "unknown", "mount_point", fs->mnt[0] ? fs->mnt : "unknown",
			 "free_bytes", (json_int_t)fs->free, "total_bytes", (json_int_t)fs->total);
}

/* ---------------------------------------------------------------- phases */

static int out_fail(struct st_out *o, int err, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int out_fail(struct st_out *o, int err, const char *file, const char *fmt, ...)
{
	va_list ap;

	o->err = err ? err : EIO;
	snprintf(o->file, sizeof(o->file), "%s", file);
	va_start(ap, fmt);
	vsnprintf(o->msg, sizeof(o->msg), fmt, ap);
	va_end(ap);
	return -1;
}

/* writes all of buf at off; a short write that makes no progress is EIO-like ("short write") */
static int write_all(int fd, const void *buf, size_t len, off_t off, int *err)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pwrite(fd, (const char *)buf + done, len - done, off + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*err = n < 0 ? errno : 0;
			return (int)done;
		}
		done += (size_t)n;
	}
	return (int)done;
}

static int phase_write(uint64_t *buf, uint64_t seed, double t0, struct st_out *o)
{
	char path[PATH_MAX + 32];
	int fd, e = 0;

	shard_path(path, sizeof(path), cl.rank);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return out_fail(o, errno, path, "cannot create '%s': %s", path, strerror(errno));
	for (size_t off = 0; off < p_size; off += p_block) {
		int n;

		fill(buf, p_block, seed, off);
		n = write_all(fd, buf, p_block, (off_t)off, &e);
		if ((size_t)n != p_block) {
			close(fd);
			if (e)
				return out_fail(o, e, path, "cannot write '%s' at offset %zu: %s", path, off,
						strerror(e));
			return out_fail(o, EIO, path, "short write to '%s' at offset %zu: %d of %zu bytes",
					path, off, n, p_block);
		}
	}
	if (fsync(fd)) {
		e = errno;
		close(fd);
		return out_fail(o, e, path, "cannot fsync '%s': %s", path, strerror(e));
	}
	if (close(fd))
		return out_fail(o, errno, path, "cannot close '%s': %s", path, strerror(errno));
	o->t = timer_now() - t0;
	return 0;
}

/* opens path for reading, O_DIRECT when the filesystem takes it (*direct says which) */
static int open_read(const char *path, int *direct)
{
	int fd = open(path, O_RDONLY | O_DIRECT);

	*direct = fd >= 0;
	if (fd < 0 && errno == EINVAL)
		fd = open(path, O_RDONLY);
	if (fd >= 0 && !*direct)  /* buffered: at least drop what this client cached */
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	return fd;
}

static ssize_t read_full(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, off + (off_t)done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -1 : (ssize_t)done;
		done += (size_t)n;
	}
	return (ssize_t)done;
}

static int phase_read(uint64_t *buf, int partner, uint64_t seed, double t0, int *direct,
		      long long *first_bad, struct st_out *o)
{
	char path[PATH_MAX + 32];
	int fd;

	*first_bad = -1;
	shard_path(path, sizeof(path), partner);
	fd = open_read(path, direct);
	if (fd < 0)
		return out_fail(o, errno, path, "cannot open '%s': %s", path, strerror(errno));
	for (size_t off = 0; off < p_size; off += p_block) {
		ssize_t n = read_full(fd, buf, p_block, (off_t)off);

		if (n != (ssize_t)p_block) {
			int e = n < 0 ? errno : EIO;

			close(fd);
			if (n < 0)
				return out_fail(o, e, path, "cannot read '%s' at offset %zu: %s", path, off,
						strerror(e));
			return out_fail(o, EIO, path, "short read of '%s' at offset %zu: %zd of %zu bytes",
					path, off, n, p_block);
		}
		if (differs(buf, p_block, seed, off)) {
			if (*first_bad < 0)
				*first_bad = (long long)off;
			o->wrong++;
		}
	}
	close(fd);
	o->t = timer_now() - t0;
	return 0;
}

enum md_op { MD_CREATE, MD_STAT, MD_REMOVE, MD_N };
static const char *const md_test[MD_N] = { "meta_create", "meta_stat", "meta_remove" };

static int phase_meta(enum md_op op, double t0, struct st_out *o)
{
	char d[PATH_MAX + 32], p[PATH_MAX + 64];
	struct stat st;

	md_dir(d, sizeof(d), cl.rank);
	if (op == MD_CREATE && mkdir(d, 0700))
		return out_fail(o, errno, d, "cannot create directory '%s': %s", d, strerror(errno));
	for (int i = 0; i < p_files; i++) {
		snprintf(p, sizeof(p), "%s/f.%d", d, i);
		if (op == MD_CREATE) {
			int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);

			if (fd < 0 || close(fd))
				return out_fail(o, errno, p, "cannot create '%s': %s", p, strerror(errno));
		} else if (op == MD_STAT ? stat(p, &st) : unlink(p)) {
			return out_fail(o, errno, p, "cannot %s '%s': %s", op == MD_STAT ? "stat" : "remove",
					p, strerror(errno));
		}
	}
	if (op == MD_REMOVE && rmdir(d))
		return out_fail(o, errno, d, "cannot remove directory '%s': %s", d, strerror(errno));
	o->t = timer_now() - t0;
	return 0;
}

static int phase_rand(uint64_t *buf, int partner, uint64_t seed, uint64_t rng, double *lat,
		      int *direct, struct st_out *o)
{
	char path[PATH_MAX + 32];
	size_t slots = (p_size - ST_RAND_BYTES) / ST_ALIGN + 1;
	double t0 = timer_now();
	int fd;

	shard_path(path, sizeof(path), partner);
	fd = open_read(path, direct);
	if (fd < 0)
		return out_fail(o, errno, path, "cannot open '%s': %s", path, strerror(errno));
	for (int i = 0; i < p_reads; i++) {
		size_t off;
		double t;
		ssize_t n;

		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		off = (size_t)(rng % slots) * ST_ALIGN;
		t = timer_now();
		n = read_full(fd, buf, ST_RAND_BYTES, (off_t)off);
		lat[i] = timer_now() - t;
		if (n != (ssize_t)ST_RAND_BYTES) {
			int e = n < 0 ? errno : EIO;

			close(fd);
			return out_fail(o, e, path, "cannot read '%s' at offset %zu: %s", path, off,
					n < 0 ? strerror(e) : "short read");
		}
		o->wrong += differs(buf, ST_RAND_BYTES, seed, off);
	}
	close(fd);
	o->t = timer_now() - t0;
	return 0;
}

/* ---------------------------------------------------------------- the run */

struct st {
	struct cc_run *run;
	struct mpictx *mpi;
	uint64_t run_seed;
	int partner;             /* whose shard this rank reads */
	int shared;              /* every rank saw rank 0's marker */
	const char *reorder;     /* how the partner was chosen */
	struct st_fs fs;         /* this rank's view, at the start */
	json_t *fs_all;          /* rank 0: every rank's st_fs as JSON */
	double *t_all;           /* rank 0: [size] phase times */
};

/*
 * Gathers every rank's outcome of a phase to rank 0, which writes one error
 * record per failed rank (host, rank, file, errno text). Collective. Fills
 * rank 0's t_all and returns (on every rank) the number of failed ranks;
 * *wrong gets the total of wrong blocks (rank 0).
 */
static int phase_end(struct st *s, const char *test, struct st_out *o, long long *wrong)
{
	struct mpictx *mpi = s->mpi;
	json_t *mine = NULL, *all;
	long long w = o->wrong, wsum = 0;
	int bad = o->err != 0, nbad = 0;

	MPI_Gather(&o->t, 1, MPI_DOUBLE, s->t_all, 1, MPI_DOUBLE, 0, mpi->world);
	MPI_Reduce(&w, &wsum, 1, MPI_LONG_LONG, MPI_SUM, 0, mpi->world);
	MPI_Allreduce(&bad, &nbad, 1, MPI_INT, MPI_SUM, mpi->world);
	if (wrong)
		*wrong = wsum;
	if (!nbad)
		return 0;
	if (bad)
		mine = json_pack("{s:s, s:s, s:s}", "file", o->file, "errno", strerror(o->err),
				 "message", o->msg);
	all = run_gather_json(mpi->world, mine);
	for (size_t r = 0; mpi->rank == 0 && r < json_array_size(all); r++) {
		json_t *e = json_array_get(all, r);
		const char *host = mpi->hosts[mpi->rank_node[r]];

		if (json_is_null(e))
			continue;
		log_error("storage %s: %s:%zu: %s", test, host, r,
			  json_string_value(json_object_get(e, "message")));
		s->run->failures++;
		json_object_set_new(e, "kind", json_string("probe"));
		json_object_set_new(e, "name", json_string("storage"));
		json_object_set_new(e, "test", json_string(test));
		json_object_set_new(e, "host", json_string(host));
		json_object_set_new(e, "rank", json_integer((json_int_t)r));
		json_object_set_new(e, "message", json_sprintf("%s:%zu: %s", host, r,
						json_string_value(json_object_get(e, "message"))));
		run_record(s->run, "error", json_incref(e));
	}
	json_decref(all);
	return nbad;
}

/*
 * Arms the watchdog for one phase on every rank, then the common start. The
 * phase barriers wait with naps (mpictx_nap_barrier), not in MPI's busy
 * progress loop: a rank done with its file leaves the CPU to the slowest
 * one and to the filesystem client (FUSE, a GlusterFS or Lustre daemon) that
 * serves it. Each rank times its own phase from its own start, so a rank
 * leaving the barrier a nap (0.1 ms) late changes no figure.
 */
static double phase_start(struct st *s, const char *test, int rep)
{
	watchdog_arm(test, json_pack("{s:s, s:s, s:s, s:s, s:i}", "kind", "probe", "probe", "storage",
				     "test", test, "dir", cl.sub, "rep", rep));
	mpictx_nap_barrier(s->mpi->world);
	return timer_now();
}

static void phase_stop(struct st *s)
{
	mpictx_nap_barrier(s->mpi->world);
	watchdog_disarm();
}

/* rank 0: per-repetition aggregates of a bandwidth phase and per-node rates */
struct bw_series {
	double *agg;             /* [reps] GB/s */
	double *node;            /* [nnodes * reps] GB/s */
	double *rank;            /* [size * reps] GB/s */
};

static void bw_add(struct st *s, struct bw_series *b, int rep)
{
	struct mpictx *mpi = s->mpi;
	double tmax = 0;

	for (int n = 0; n < mpi->nnodes; n++) {
		double t = 0;

		for (int r = 0; r < mpi->size; r++)
			if (mpi->rank_node[r] == n && s->t_all[r] > t)
				t = s->t_all[r];
		b->node[n * p_reps + rep] = t > 0 ? (double)p_size * mpi->node_ranks[n] / t / 1e9 : 0;
		if (t > tmax)
			tmax = t;
	}
	for (int r = 0; r < mpi->size; r++)
		b->rank[r * p_reps + rep] = s->t_all[r] > 0 ? (double)p_size / s->t_all[r] / 1e9 : 0;
	b->agg[rep] = tmax > 0 ? (double)p_size * mpi->size / tmax / 1e9 : 0;
}

static json_t *stats_of(const double *v, int n, double scale)
{
	struct stats st;

	if (stats_compute(v, (size_t)n, &st))
		return json_null();
	return run_stats_json(&st, scale);
}

static json_t *base_rec(struct st *s, const char *test, const char *scope, const char *element,
			const char *host)
{
	json_t *r = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:i, s:i, s:s, s:s}",
			      "kind", "probe", "name", "storage", "test", test, "scope", scope,
			      "element", element, "host", host, "dir", p_dir, "subdir", cl.sub,
			      "shared", s->shared, "ranks", s->mpi->size, "nodes", s->mpi->nnodes,
			      "fs_type", s->fs.type, "mount_source", s->fs.source[0] ? s->fs.source : "unknown");

	return r;
}

static void bw_records(struct st *s, const char *test, struct bw_series *b, long long wrong, int direct)
{
	struct mpictx *mpi = s->mpi;
	char elem[PATH_MAX + 16];
	json_t *rec;
	double med;

	snprintf(elem, sizeof(elem), "storage:%s", p_dir);
	rec = base_rec(s, test, "cluster", elem, mpi->hosts[0]);
	med = stats_median(b->agg, (size_t)p_reps);
	json_object_set_new(rec, "bytes", json_integer((json_int_t)p_block));
	json_object_set_new(rec, "shard_bytes", json_integer((json_int_t)p_size));
	json_object_set_new(rec, "total_bytes", json_integer((json_int_t)(p_size * (size_t)mpi->size)));
	json_object_set_new(rec, "reps", json_integer(p_reps));
	json_object_set_new(rec, "bw_GBps", json_real(med));
	json_object_set_new(rec, "bw_stats_GBps", stats_of(b->agg, p_reps, 1));
	if (!strcmp(test, "write")) {
		json_object_set_new(rec, "fsync", json_true());
	} else {
		json_object_set_new(rec, "o_direct", json_boolean(direct));
		json_object_set_new(rec, "reorder", json_string(s->reorder));
		json_object_set_new(rec, "wrong", json_integer(wrong));
	}
	run_record(s->run, "measurement", rec);
	for (int n = 0; n < mpi->nnodes; n++) {
		json_t *ranks = json_array();

		for (int r = 0; r < mpi->size; r++)
			if (mpi->rank_node[r] == n)
				json_array_append_new(ranks, json_pack("{s:i, s:f}", "rank", r, "bw_GBps",
					stats_median(b->rank + r * p_reps, (size_t)p_reps)));
		rec = base_rec(s, test, "node", mpi->hosts[n], mpi->hosts[n]);
		json_object_set_new(rec, "bytes", json_integer((json_int_t)p_block));
		json_object_set_new(rec, "node_bytes",
				    json_integer((json_int_t)p_size * mpi->node_ranks[n]));
		json_object_set_new(rec, "bw_GBps", json_real(stats_median(b->node + n * p_reps,
									    (size_t)p_reps)));
		json_object_set_new(rec, "bw_stats_GBps", stats_of(b->node + n * p_reps, p_reps, 1));
		json_object_set_new(rec, "rank_bw_GBps", ranks);
		run_record(s->run, "measurement", rec);
	}
	if (!s->run->opt->quiet) {
		int slow = 0;

		for (int n = 1; n < mpi->nnodes; n++)
			if (stats_median(b->node + n * p_reps, (size_t)p_reps) <
			    stats_median(b->node + slow * p_reps, (size_t)p_reps))
				slow = n;
		struct stats st;

		stats_compute(b->agg, (size_t)p_reps, &st);
		printf(" %-12s %10.3f %10.3f %10.3f  slowest node %s %.3f GB/s%s\n", test, med,
		       st.min, st.max, mpi->hosts[slow],
		       stats_median(b->node + slow * p_reps, (size_t)p_reps),
		       strcmp(test, "write") ? (direct ? ", O_DIRECT" : ", buffered") : ", fsync");
	}
}

/* who reads whose shard: another node's (IOR -C) when the directory is shared */
static void choose_partner(struct st *s)
{
	struct mpictx *mpi = s->mpi;
	int shift = mpi->node_ranks[0];

	s->partner = -1;
	if (s->shared && mpi->nnodes > 1) {
		for (int k = 0; k < mpi->size && s->partner < 0; k++) {
			int p = (mpi->rank + shift + k) % mpi->size;

			if (mpi->rank_node[p] != mpi->node)
				s->partner = p;
		}
		s->reorder = "another node (shift by ranks per node)";
		return;
	}
	/* one node, or node-local directories: the next rank of this node (its own file if alone) */
	for (int k = 1; k <= mpi->size; k++) {
		int p = (mpi->rank + k) % mpi->size;

		if (mpi->rank_node[p] == mpi->node) {
			s->partner = p;
			break;
		}
	}
	s->reorder = s->partner == mpi->rank ? "own shard (one rank, and no other node sees the directory)" :
		     mpi->nnodes == 1 ? "another rank of the same node (one node)" :
		     "another rank of the same node (no other node sees the directory)";
}

/* rank 0 writes the refusal; every rank gets the verdict. Returns 0 when there is room. */
static int room_check(struct st *s, long long need_per_rank, int shared)
{
	struct mpictx *mpi = s->mpi;
	char msg[ST_MSG] = "";
	int ok = 1;

	for (size_t r = 0; mpi->rank == 0 && r < json_array_size(s->fs_all) && ok; r++) {
		json_t *f = json_array_get(s->fs_all, r);
		long long fr = json_integer_value(json_object_get(f, "free_bytes"));
		long long tot = json_integer_value(json_object_get(f, "total_bytes"));
		int n = mpi->rank_node[r];
		long long need = need_per_rank * (shared ? mpi->size : mpi->node_ranks[n]);
		long long keep = (long long)(ST_MIN_FREE * (double)tot);

		if (mpi->node_leader[n] != (int)r)
			continue;
		if (fr - need < keep) {
			snprintf(msg, sizeof(msg), "%s:%zu: storage directory '%s' has %lld bytes free of "
				 "%lld; this run writes %lld bytes and would leave under 5%% free (it needs "
				 "%lld bytes free; reduce --storage-size)", mpi->hosts[n], r, p_dir, fr, tot,
				 need, need + keep);
			ok = 0;
		}
	}
	MPI_Bcast(&ok, 1, MPI_INT, 0, mpi->world);
	if (!ok) {
		log_error("%s", msg);
		s->run->failures++;
		run_record(s->run, "error", json_pack("{s:s, s:s, s:s, s:s}", "kind", "probe", "name",
						     "storage", "test", "setup", "message", msg));
	}
	return ok ? 0 : -1;
}

/*
 * The per-run subdirectory and the sharing test: rank 0 makes the
 * subdirectory and a marker holding the run id; a rank that then finds the
 * marker sees the same filesystem. On a node whose ranks do not, the node's
 * first rank makes its own subdirectory. Returns 0, or -1 (error recorded).
 */
static int make_subdir(struct st *s)
{
	struct mpictx *mpi = s->mpi;
	struct st_out o = { 0 };
	char p[PATH_MAX + 16], got[64] = "";
	int seen = 0, all_seen = 0, node_seen = 0, fd;

	if (mpi->rank == 0) {
		if (mkdir(cl.sub, 0700)) {
			out_fail(&o, errno, cl.sub, "cannot create '%s': %s", cl.sub, strerror(errno));
		} else {
			cl.made_sub = 1;
			snprintf(p, sizeof(p), "%s/marker", cl.sub);
			fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);
			if (fd < 0 || write(fd, s->run->run_id, strlen(s->run->run_id)) < 0 || fsync(fd))
				out_fail(&o, errno, p, "cannot write '%s': %s", p, strerror(errno));
			if (fd >= 0)
				close(fd);
		}
	}
	if (phase_end(s, "setup", &o, NULL))
		return -1;
	snprintf(p, sizeof(p), "%s/marker", cl.sub);
	fd = open(p, O_RDONLY);
	if (fd >= 0) {
		ssize_t n = read(fd, got, sizeof(got) - 1);

		got[n > 0 ? n : 0] = 0;
		close(fd);
		seen = !strcmp(got, s->run->run_id);
	}
	MPI_Allreduce(&seen, &all_seen, 1, MPI_INT, MPI_MIN, mpi->world);
	MPI_Allreduce(&seen, &node_seen, 1, MPI_INT, MPI_MIN, mpi->local);
	s->shared = all_seen;
	if (!node_seen && mpi->local_rank == 0 && mpi->rank != 0) {
		if (mkdir(cl.sub, 0700))
			out_fail(&o, errno, cl.sub, "cannot create '%s': %s", cl.sub, strerror(errno));
		else
			cl.made_sub = 1;
	}
	return phase_end(s, "setup", &o, NULL) ? -1 : 0;
}

static void print_header(struct st *s)
{
	char a[32], b[32];

	printf("# storage on %s (%s, %s; %s): %d ranks on %d node(s), %s per rank in %s "
	       "transfers, %d reps; GB/s = 1e9 bytes/s\n", p_dir, s->fs.type,
	       s->fs.source[0] ? s->fs.source : "?", s->shared ? "shared by all nodes" : "not shared",
	       s->mpi->size, s->mpi->nnodes, size_human((double)p_size, a, sizeof(a)),
	       size_human((double)p_block, b, sizeof(b)), p_reps);
	printf("# read: %s; every block checked\n", s->reorder);
	printf("#%-12s %10s %10s %10s\n", "test", "median", "min", "max");
	fflush(stdout);
}

static int storage_run(struct cc_run *run)
{
	struct mpictx *mpi = run->mpi;
	struct st s = { .run = run, .mpi = mpi };
	struct bw_series wb = { 0 }, rb = { 0 };
	double *md[MD_N] = { 0 }, *lat = NULL, *lat_all = NULL;
	uint64_t *buf = NULL;
	long long wrong_read = 0, wrong_rand = 0, first_bad = -1;
	int rc = CC_EXIT_OK, ok, all_ok, direct = 1, direct_all = 1, failed = 0;
	struct st_out o;
	char errbuf[ST_MSG];
	json_t *mine;

	cl.rank = mpi->rank;
	cl.size = mpi->size;
	cl.files = p_files;
	cl.made_sub = 0;
	cl.done = 0;
	snprintf(cl.sub, sizeof(cl.sub), "%s/ccdiag-storage-%s", p_dir, run->run_id);
	s.run_seed = strtoull(run->run_id, NULL, 16);

	/* the directory on every host, before anything is written; a hung filesystem hangs statvfs too */
	watchdog_arm("storage setup", json_pack("{s:s, s:s, s:s, s:s}", "kind", "probe", "probe",
						"storage", "test", "setup", "dir", p_dir));
	ok = fs_facts(p_dir, &s.fs) == 0 && access(p_dir, W_OK | X_OK) == 0;
	if (!ok)
		snprintf(errbuf, sizeof(errbuf), "storage directory '%s': %s", p_dir, strerror(errno));
	mine = ok ? fs_json(&s.fs) : json_pack("{s:s}", "error", errbuf);
	s.fs_all = run_gather_json(mpi->world, mine);
	all_ok = ok;
	MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, mpi->world);
	if (!all_ok) {
		for (size_t r = 0; mpi->rank == 0 && r < json_array_size(s.fs_all); r++) {
			const char *e = json_string_value(json_object_get(json_array_get(s.fs_all, r), "error"));
			char msg[ST_MSG + 300];

			if (!e)
				continue;
			snprintf(msg, sizeof(msg), "%s:%zu: %s", mpi->hosts[mpi->rank_node[r]], r, e);
			run_error(run, "probe", "storage", msg);
			break;  /* one line: the first host that cannot use it */
		}
		watchdog_disarm();
		json_decref(s.fs_all);
		return CC_EXIT_RUNTIME;
	}
	if (room_check(&s, (long long)p_size, 0)) {
		watchdog_disarm();
		json_decref(s.fs_all);
		return CC_EXIT_RUNTIME;
	}

	s.t_all = calloc((size_t)mpi->size, sizeof(double));
	wb.agg = calloc((size_t)p_reps, sizeof(double));
	rb.agg = calloc((size_t)p_reps, sizeof(double));
	wb.node = calloc((size_t)(mpi->nnodes * p_reps), sizeof(double));
	rb.node = calloc((size_t)(mpi->nnodes * p_reps), sizeof(double));
	wb.rank = calloc((size_t)(mpi->size * p_reps), sizeof(double));
	rb.rank = calloc((size_t)(mpi->size * p_reps), sizeof(double));
	for (int i = 0; i < MD_N; i++)
		md[i] = calloc((size_t)p_reps, sizeof(double));
	lat = calloc((size_t)p_reads + 1, sizeof(double));
	if (posix_memalign((void **)&buf, ST_ALIGN, p_block > ST_RAND_BYTES ? p_block : ST_RAND_BYTES))
		buf = NULL;
	ok = s.t_all && wb.agg && rb.agg && wb.node && rb.node && wb.rank && rb.rank && md[0] &&
	     md[1] && md[2] && lat && buf;
	MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, mpi->world);
	if (!all_ok) {
		watchdog_disarm();
		run_error(run, "probe", "storage", "out of memory");
		rc = CC_EXIT_RUNTIME;
		goto free_all;
	}

	/* from here on, an abort (timeout, signal, a dead rank) removes what the run wrote */
	watchdog_on_abort(cleanup_on_abort);
	if (make_subdir(&s)) {
		watchdog_disarm();
		/* a rank that made no subdirectory created nothing: it must not remove a thing */
		if (!cl.made_sub)
			cl.sub[0] = '\0';
		rc = CC_EXIT_FAIL;
		goto clean;
	}
	if (s.shared && room_check(&s, (long long)p_size, 1)) {
		watchdog_disarm();
		rc = CC_EXIT_RUNTIME;
		goto clean;
	}
	watchdog_disarm();
	choose_partner(&s);
	if (mpi->rank == 0 && !run->opt->quiet)
		print_header(&s);

	for (int rep = 0; rep < p_reps && !failed; rep++) {
		long long w;
		double t0;
		const char *fault = getenv("CCPROBE_FAULT");
		char want[32];

		memset(&o, 0, sizeof(o));
		t0 = phase_start(&s, "write", rep);
		phase_write(buf, shard_seed(s.run_seed, mpi->rank, rep), t0, &o);
		phase_stop(&s);
		if ((failed = phase_end(&s, "write", &o, NULL)))
			break;
		if (mpi->rank == 0)
			bw_add(&s, &wb, rep);
		/* fault injection for the tests: flip one word in the middle of this rank's shard */
		snprintf(want, sizeof(want), "storage-corrupt:%d", mpi->rank);
		if (fault && !strcmp(fault, want) && rep == 0) {
			char p[PATH_MAX + 32];
			uint64_t junk = 0xdeadbeefdeadbeefULL;
			int fd;

			shard_path(p, sizeof(p), mpi->rank);
			fd = open(p, O_WRONLY);
			if (fd >= 0) {
				if (pwrite(fd, &junk, sizeof(junk), (off_t)(p_size / 2)) < 0 || fsync(fd))
					log_warn("cannot inject the corruption into '%s'", p);
				close(fd);
			}
		}
		memset(&o, 0, sizeof(o));
		t0 = phase_start(&s, "read", rep);
		phase_read(buf, s.partner, shard_seed(s.run_seed, s.partner, rep), t0, &direct, &first_bad, &o);
		phase_stop(&s);
		if (first_bad >= 0) {
			char p[PATH_MAX + 32];

			shard_path(p, sizeof(p), s.partner);
			log_error("storage read: %lld block(s) of '%s' (written by rank %d on %s) do not match "
				  "what was written; first at offset %lld", o.wrong, p, s.partner,
				  mpi->hosts[mpi->rank_node[s.partner]], first_bad);
		}
		if ((failed = phase_end(&s, "read", &o, &w)))
			break;
		wrong_read += w;
		if (mpi->rank == 0)
			bw_add(&s, &rb, rep);
		for (int op = 0; op < MD_N && p_files > 0 && !failed; op++) {
			memset(&o, 0, sizeof(o));
			t0 = phase_start(&s, md_test[op], rep);
			phase_meta((enum md_op)op, t0, &o);
			phase_stop(&s);
			failed = phase_end(&s, md_test[op], &o, NULL);
			if (!failed && mpi->rank == 0) {
				double tmax = 0;

				for (int r = 0; r < mpi->size; r++)
					tmax = s.t_all[r] > tmax ? s.t_all[r] : tmax;
				md[op][rep] = tmax > 0 ? (double)p_files * mpi->size / tmax : 0;
			}
		}
	}
	MPI_Allreduce(&direct, &direct_all, 1, MPI_INT, MPI_MIN, mpi->world);
	if (!failed && p_reads > 0) {
		int rep = p_reps - 1;

		memset(&o, 0, sizeof(o));
		phase_start(&s, "rand_read", rep);
		phase_rand(buf, s.partner, shard_seed(s.run_seed, s.partner, rep),
			   s.run_seed ^ (0x51ed27ULL * (uint64_t)(mpi->rank + 1)) ^ 1, lat, &direct, &o);
		phase_stop(&s);
		failed = phase_end(&s, "rand_read", &o, &wrong_rand);
		if (!failed) {
			if (mpi->rank == 0)
				lat_all = malloc(sizeof(double) * (size_t)p_reads * (size_t)mpi->size);
			MPI_Gather(lat, p_reads, MPI_DOUBLE, lat_all, p_reads, MPI_DOUBLE, 0, mpi->world);
		}
	}

	if (mpi->rank == 0 && !failed) {
		char elem[PATH_MAX + 16];

		bw_records(&s, "write", &wb, 0, 0);
		bw_records(&s, "read", &rb, wrong_read, direct_all);
		snprintf(elem, sizeof(elem), "storage:%s", p_dir);
		for (int op = 0; op < MD_N && p_files > 0; op++) {
			json_t *rec = base_rec(&s, md_test[op], "cluster", elem, mpi->hosts[0]);
			double med = stats_median(md[op], (size_t)p_reps);

			json_object_set_new(rec, "files_per_rank", json_integer(p_files));
			json_object_set_new(rec, "reps", json_integer(p_reps));
			json_object_set_new(rec, "ops_per_s", json_real(med));
			json_object_set_new(rec, "ops_stats", stats_of(md[op], p_reps, 1));
			run_record(run, "measurement", rec);
			if (!run->opt->quiet)
					{
				struct stats st;

				stats_compute(md[op], (size_t)p_reps, &st);
				printf(" %-12s %10.0f %10.0f %10.0f  ops/s (%d files per rank)\n", md_test[op],
				       med, st.min, st.max, p_files);
			}
		}
		if (p_reads > 0 && lat_all) {
			json_t *rec = base_rec(&s, "rand_read", "cluster", elem, mpi->hosts[0]);
			size_t n = (size_t)p_reads * (size_t)mpi->size;
			double tmax = 0;
			struct stats st;

			for (int r = 0; r < mpi->size; r++)
				tmax = s.t_all[r] > tmax ? s.t_all[r] : tmax;
			stats_compute(lat_all, n, &st);
			json_object_set_new(rec, "bytes", json_integer((json_int_t)ST_RAND_BYTES));
			json_object_set_new(rec, "reads_per_rank", json_integer(p_reads));
			json_object_set_new(rec, "o_direct", json_boolean(direct));
			json_object_set_new(rec, "iops", json_real(tmax > 0 ? (double)n / tmax : 0));
			json_object_set_new(rec, "bw_GBps", json_real(tmax > 0 ? (double)n * ST_RAND_BYTES /
									       tmax / 1e9 : 0));
			json_object_set_new(rec, "lat_us", run_stats_json(&st, 1e6));
			json_object_set_new(rec, "wrong", json_integer(wrong_rand));
			run_record(run, "measurement", rec);
			if (!run->opt->quiet)
				printf(" %-12s %10.0f IOPS of 64 KiB; latency min %.0f median %.0f p99 %.0f us\n",
				       "rand_read", tmax > 0 ? (double)n / tmax : 0, st.min * 1e6,
				       st.median * 1e6, st.p99 * 1e6);
		}
		fflush(stdout);
	}
	if (mpi->rank == 0 && (wrong_read || wrong_rand)) {
		char msg[ST_MSG + PATH_MAX];

		snprintf(msg, sizeof(msg), "data read back does not match what was written: %lld block(s) "
			 "of %zu B in the checkpoint read, %lld of %zu random reads", wrong_read, p_block,
			 wrong_rand, (size_t)p_reads * (size_t)mpi->size);
		run_error(run, "probe", "storage", msg);
	}
	if (failed || wrong_read || wrong_rand)
		rc = CC_EXIT_FAIL;

clean:
	/* space used at the fullest (all shards there), then everything of the run removed */
	{
		struct st_fs during, after;
		json_t *d, *all;
		int r0;

		watchdog_arm("storage cleanup", json_pack("{s:s, s:s, s:s, s:s}", "kind", "probe", "probe",
							  "storage", "test", "cleanup", "dir", cl.sub));
		fs_facts(p_dir, &during);
		mpictx_nap_barrier(mpi->world);
		cleanup_files(0);
		mpictx_nap_barrier(mpi->world);
		if (cl.made_sub)
			cleanup_files(0);  /* the subdirectory, now that every rank's files are gone */
		mpictx_nap_barrier(mpi->world);
		fs_facts(p_dir, &after);
		watchdog_disarm();
		d = mpi->local_rank == 0 ? json_pack("{s:I, s:I}", "free_full_bytes",
			(json_int_t)during.free, "free_after_bytes", (json_int_t)after.free) : NULL;
		all = run_gather_json(mpi->world, d);
		for (size_t r = 0; mpi->rank == 0 && r < json_array_size(all); r++) {
			json_t *f = json_array_get(all, r), *b = json_array_get(s.fs_all, r), *rec;

			if (json_is_null(f))
				continue;
			r0 = mpi->rank_node[r];
			rec = json_pack("{s:s, s:s, s:s, s:s, s:b, s:O, s:O, s:O, s:O, s:O}", "kind", "storage",
					"host", mpi->hosts[r0], "dir", p_dir, "subdir", cl.sub, "shared", s.shared,
					"fs_type", json_object_get(b, "fs_type"), "mount_source",
					json_object_get(b, "mount_source"), "mount_point",
					json_object_get(b, "mount_point"), "total_bytes",
					json_object_get(b, "total_bytes"), "free_before_bytes",
					json_object_get(b, "free_bytes"));
			json_object_update(rec, f);
			run_record(run, "inventory", rec);
		}
		json_decref(all);
		watchdog_on_abort(NULL);
	}

free_all:
	json_decref(s.fs_all);
	free(s.t_all);
	free(wb.agg);
	free(rb.agg);
	free(wb.node);
	free(rb.node);
	free(wb.rank);
	free(rb.rank);
	for (int i = 0; i < MD_N; i++)
		free(md[i]);
	free(lat);
	free(lat_all);
	free(buf);
	return rc;
}

/*
 * --storage-reps times: every rank writes and reads back its --storage-size
 * shard, the nodes' shards sharing the filesystem at a nominal 1 GB/s per
 * node (its network), plus --storage-files metadata operations and
 * --storage-reads random reads per rank at ~1 ms each.
 */
static double storage_estimate(const struct cc_options *o)
{
	double GBps = o->plan_gbps > 0 ? o->plan_gbps / 8 : 1.0;
	double bytes = (double)p_size * o->plan_rpn;

	return p_reps * (2 * bytes / (GBps * 1e9) + 3 * p_files * 1e-3 + p_reads * 1e-3) + 2;
}

const struct probe probe_storage = {
	.name = "storage",
	.summary = "checkpoint write/read GB/s (file per process, checked), metadata ops/s, random-read IOPS",
	.params = storage_params,
	.phase = PHASE_STORAGE,
	.estimate = storage_estimate,
	.check = check_params,
	.run = storage_run,
};
