#ifndef CCDIAG_VERSION_H
#define CCDIAG_VERSION_H

/*
 * The version every tool prints (--version) and writes into its results
 * header ("version", "commit"): ccprobe, ccreport and ccdiag share it.
 */
#define CCDIAG_VERSION "0.1.0"
#define CCDIAG_SCHEMA_VERSION 1

/* the git commit built (12 hex digits, "-dirty" when the tree had uncommitted
 * changes), written at build time by scripts/version.sh (core/version.c);
 * "unknown" when neither git nor a release tarball's core/commit.txt told it */
extern const char ccdiag_commit[];

#endif
