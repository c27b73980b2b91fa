#ifndef CCDIAG_TOPOLOGY_H
#define CCDIAG_TOPOLOGY_H

#include <stddef.h>

/*
 * The cluster's topology as groups of hosts: a group is what a fault is
 * likely to share (a leaf switch, a Slurm block, a rack), optionally under a
 * spine (the switch above the leaf). Plain C, no MPI: ccprobe plans its
 * tests with it and ccreport names leaves with it (docs/isolation.md).
 *
 * Readers (all return 0, or -1 with one line "FILE:LINE: problem" in err;
 * on error *t is left empty):
 *   - Slurm topology.conf (topology/tree): SwitchName=S Nodes=HOSTLIST for a
 *     leaf, SwitchName=S Switches=LIST above it; topology/block's
 *     BlockName=B Nodes=HOSTLIST is read as a leaf too. Host lists are
 *     Slurm's expressions: "node[0-3,7],gpu07", zero padding kept.
 *   - ibnetdiscover's text output: each host (the first word of a channel
 *     adapter's description, "node01 HCA-1" -> node01) goes to the switch its
 *     first adapter port links to; a switch that links to leaves and to no
 *     host is their spine.
 *   - a plain file: "HOST GROUP [SPINE]" per line, '#' comments.
 * topo_read picks the reader from the file's first non-comment line.
 */
struct topo {
	int nhosts;
	char **hosts;        /* nhosts names, in the file's order */
	int *group;          /* nhosts: the host's group, 0..ngroups-1 */
	int ngroups;
	char **groups;       /* ngroups names (leaf switch, block, group) */
	int *spine;          /* ngroups: the group's spine, 0..nspines-1, or -1 */
	int nspines;
	char **spines;       /* nspines names */
	char source[160];    /* what it came from: "slurm topology.conf FILE", ... */
};

int topo_read_slurm(const char *path, struct topo *t, char *err, size_t len);
int topo_read_ibnet(const char *path, struct topo *t, char *err, size_t len);
int topo_read_plain(const char *path, struct topo *t, char *err, size_t len);
/* The reader for the file's format (Slurm, ibnetdiscover or plain). */
int topo_read(const char *path, struct topo *t, char *err, size_t len);

/*
 * Without a topology: groups of size hosts (0: ceil(sqrt(n))) in the order
 * given, the last one shorter; source "none: groups of K hosts in host
 * order". Returns 0, or -1 when memory runs out or n < 1.
 */
int topo_fallback(char *const *hosts, int n, int size, struct topo *t);

/*
 * hosts[i] in group groups[i] (i < n), groups in order of first appearance,
 * no spine; source as given. Returns 0, or -1 with err (a host twice, memory).
 */
int topo_from_list(char *const *hosts, char *const *groups, int n, const char *source,
		   struct topo *t, char *err, size_t len);

/*
 * Expands a Slurm host list ("a[1-3,07],b") into *out (malloc'd names, *n of
 * them). Returns 0, or -1 with a reason in err ("unbalanced '['", ...).
 */
int topo_hostlist(const char *expr, char ***out, int *n, char *err, size_t len);

/*
 * Maps the job's hosts onto t's groups: group_of[i] is the group of
 * hosts[i], groups renumbered densely (0..*ngroups-1) in the order of their
 * first host in hosts; names[g] (if not NULL, ngroups entries) points at t's
 * group name. Returns 0, or -1 with "host 'X' is not in the topology
 * (SOURCE)" in err.
 */
int topo_assign(const struct topo *t, char *const *hosts, int n, int *group_of, int *ngroups,
		const char **names, char *err, size_t len);

/* ceil(sqrt(n)) for n >= 1, else 0 */
int topo_sqrt_size(int n);

void topo_free(struct topo *t);

#endif
