#ifndef CCDIAG_DIAG_PROVENANCE_H
#define CCDIAG_DIAG_PROVENANCE_H

/*
 * diag/provenance.c: what lets a customer check a run they did not watch
 * (docs/provenance.md): the MANIFEST `ccdiag run` writes into its folder,
 * and `ccdiag sign` / `ccdiag verify`, which wrap OpenSSH's ssh-keygen -Y
 * (namespace "ccdiag") over it. Every command is started with posix_spawn and
 * an argument vector.
 */
#include <time.h>

#include "strv.h"

#define MANIFEST_NAMESPACE "ccdiag"   /* ssh-keygen -Y -n: a signature made for nothing else */

/* what a MANIFEST says besides the digests */
struct run_manifest {
	const char *dir;             /* the results folder */
	const struct strv *files;    /* names relative to dir: the existing ones are listed */
	const char *run_id;          /* ccdiag's own run id (16 hex digits) */
	const char *nonce;           /* --nonce, or NULL */
	const char *profile;         /* the profile's name */
	const char *profile_path;    /* its file (its SHA-256 goes in) */
	const char *launcher;        /* how the phases were launched, in words */
	const struct strv *planned;  /* the hosts planned ("slurm:NODELIST" under Slurm) */
	const char *ccprobe, *ccreport;  /* paths: their --version lines go in */
	time_t start, end;
};

/*
 * Writes dir/MANIFEST (through a temporary file renamed over it). The
 * actual hosts are those the phase files' headers name. Returns 0, or -1
 * with a message in err.
 */
int manifest_write(const struct run_manifest *r, char *err, size_t len);

/* 16 random hex digits (a run id) into buf[17] */
void random_run_id(char buf[17]);

/* ccdiag sign DIR -f KEY: exit code (docs/provenance.md) */
int sign_command(int argc, char **argv);

/* ccdiag verify DIR [-f ALLOWED_SIGNERS -I IDENTITY] [--nonce VALUE]: exit code */
int verify_command(int argc, char **argv);

#endif
