#include "topology.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* --- names: small growable lists; topologies hold thousands, not millions --- */

struct names {
	char **v;
	int n, cap;
};

static int names_find(const struct names *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], name))
			return i;
	return -1;
}

/* the index of name, added when absent; -1 when memory runs out */
static int names_add(struct names *s, const char *name, size_t len)
{
	char *copy;

	for (int i = 0; i < s->n; i++)
		if (strlen(s->v[i]) == len && !strncmp(s->v[i], name, len))
			return i;
	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 16;
		char **v = realloc(s->v, (size_t)cap * sizeof(*v));

		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	copy = strndup(name, len);
	if (!copy)
		return -1;
	s->v[s->n] = copy;
	return s->n++;
}

static void names_free(struct names *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static void seterr(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!err || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* --- a topology under construction --- */

struct build {
	struct names hosts, groups, spines;
	int *group, gcap;        /* per host */
	int *spine, scap;        /* per group */
};

/* host -> group; a host seen twice is an error (returns 1); -1: no memory */
static int build_host(struct build *b, const char *host, int g)
{
	int h;

	if (names_find(&b->hosts, host) >= 0)
		return 1;
	h = names_add(&b->hosts, host, strlen(host));
	if (h < 0)
		return -1;
	if (h >= b->gcap) {
		int cap = b->gcap ? 2 * b->gcap : 64;
		int *v = realloc(b->group, (size_t)cap * sizeof(int));

		if (!v)
			return -1;
		b->group = v;
		b->gcap = cap;
	}
	b->group[h] = g;
	return 0;
}

/* the index of group name (added with no spine when new), -1: no memory */
static int build_group(struct build *b, const char *name, size_t len)
{
	int g = names_add(&b->groups, name, len);

	if (g < 0)
		return -1;
	if (g >= b->scap) {
		int cap = b->scap ? 2 * b->scap : 16;
		int *v = realloc(b->spine, (size_t)cap * sizeof(int));

		if (!v)
			return -1;
		for (int i = b->scap; i < cap; i++)
			v[i] = -1;
		b->spine = v;
		b->scap = cap;
	}
	return g;
}

static void build_free(struct build *b)
{
	names_free(&b->hosts);
	names_free(&b->groups);
	names_free(&b->spines);
	free(b->group);
	free(b->spine);
	memset(b, 0, sizeof(*b));
}

/* moves b into t (groups with no host are kept: a leaf of only switches is rare) */
static void build_done(struct build *b, struct topo *t, const char *source)
{
	memset(t, 0, sizeof(*t));
	t->nhosts = b->hosts.n;
	t->hosts = b->hosts.v;
	t->group = b->group;
	t->ngroups = b->groups.n;
	t->groups = b->groups.v;
	t->spine = b->spine;
	t->nspines = b->spines.n;
	t->spines = b->spines.v;
	snprintf(t->source, sizeof(t->source), "%s", source);
	memset(b, 0, sizeof(*b));
}

void topo_free(struct topo *t)
{
	for (int i = 0; i < t->nhosts; i++)
		free(t->hosts[i]);
	for (int i = 0; i < t->ngroups; i++)
		free(t->groups[i]);
	for (int i = 0; i < t->nspines; i++)
		free(t->spines[i]);
	free(t->hosts);
	free(t->groups);
	free(t->spines);
	free(t->group);
	free(t->spine);
	memset(t, 0, sizeof(*t));
}

int topo_sqrt_size(int n)
{
	int k;

	if (n < 1)
		return 0;
	k = (int)sqrt((double)n);
	while ((long)k * k < n)
		k++;
	while (k > 1 && (long)(k - 1) * (k - 1) >= n)
		k--;
	return k;
}

int topo_fallback(char *const *hosts, int n, int size, struct topo *t)
{
	struct build b = { 0 };
	int k = size > 0 ? size : topo_sqrt_size(n);
	char name[32], src[96];

	memset(t, 0, sizeof(*t));
	if (n < 1)
		return -1;
	for (int i = 0; i < n; i++) {
		int g, rc;

		snprintf(name, sizeof(name), "group%d", i / k);
		g = build_group(&b, name, strlen(name));
		if (g < 0 || (rc = build_host(&b, hosts[i], g)) < 0) {
			build_free(&b);
			return -1;
		}
		/* a host named twice (several ranks' names) keeps its first group */
	}
	snprintf(src, sizeof(src), "none: groups of %d hosts in host order", k);
	build_done(&b, t, src);
	return 0;
}

int topo_from_list(char *const *hosts, char *const *groups, int n, const char *source,
		   struct topo *t, char *err, size_t len)
{
	struct build b = { 0 };

	memset(t, 0, sizeof(*t));
	for (int i = 0; i < n; i++) {
		int g = build_group(&b, groups[i], strlen(groups[i])), r = g < 0 ? -1 : build_host(&b, hosts[i], g);

		if (r) {
			seterr(err, len, r > 0 ? "host '%s' listed twice" : "out of memory", hosts[i]);
			build_free(&b);
			return -1;
		}
	}
	if (!b.hosts.n) {
		seterr(err, len, "no host");
		return -1;
	}
	build_done(&b, t, source);
	return 0;
}

/* --- Slurm host lists --- */

struct strv {
	char **v;
	int n, cap;
};

static int strv_push(struct strv *s, char *str)
{
	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 16;
		char **v = realloc(s->v, (size_t)cap * sizeof(*v));

		if (!v)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = str;
	return 0;
}

static void strv_free(struct strv *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* a host list's ceiling: a typo like node[0-99999999] must not fill memory */
#define HOSTLIST_MAX 1000000

/*
 * Expands one item (no top-level comma) of len bytes: prefix, then the first
 * bracket's ranges, each expanded with the rest of the item recursively.
 */
static int expand_item(const char *s, size_t len, const char *prefix, struct strv *out,
		       char *err, size_t elen)
{
	const char *open = memchr(s, '[', len), *close;
	size_t plen = strlen(prefix);
	int rc = 0;

	if (memchr(s, ']', open ? (size_t)(open - s) : len)) {
		seterr(err, elen, "unbalanced ']'");
		return -1;
	}
	if (!open) {
		char *name = malloc(plen + len + 1);

		if (!name || (memcpy(name, prefix, plen), memcpy(name + plen, s, len),
			      name[plen + len] = 0, 0) || strv_push(out, name)) {
			free(name);
			seterr(err, elen, "out of memory");
			return -1;
		}
		if (out->n > HOSTLIST_MAX) {
			seterr(err, elen, "more than %d hosts", HOSTLIST_MAX);
			return -1;
		}
		return 0;
	}
	close = memchr(open, ']', len - (size_t)(open - s));
	if (!close) {
		seterr(err, elen, "unbalanced '['");
		return -1;
	}
	if (close == open + 1) {
		seterr(err, elen, "empty range in '[]'");
		return -1;
	}
	if (memchr(open + 1, '[', (size_t)(close - open - 1))) {
		seterr(err, elen, "nested '['");
		return -1;
	}
	/* ranges between open and close: "0-3,7,010-012" */
	for (const char *p = open + 1; p < close && !rc;) {
		const char *q = p, *dash = NULL;
		unsigned long lo, hi;
		int width;
		char *end;

		while (q < close && *q != ',') {
			if (*q == '-' && !dash)
				dash = q;
			else if (!isdigit((unsigned char)*q)) {
				seterr(err, elen, "bad range '%.*s' in '[...]'", (int)(close - p), p);
				return -1;
			}
			q++;
		}
		if (q == p || dash == p || dash == q - 1) {
			seterr(err, elen, "empty range in '%.*s'", (int)(close - open + 1), open);
			return -1;
		}
		width = (int)((dash ? dash : q) - p);
		errno = 0;
		lo = strtoul(p, &end, 10);
		hi = dash ? strtoul(dash + 1, &end, 10) : lo;
		if (errno || hi < lo || hi - lo > HOSTLIST_MAX) {
			seterr(err, elen, "bad range '%.*s'", (int)(q - p), p);
			return -1;
		}
		for (unsigned long v = lo; v <= hi && !rc; v++) {
			size_t pre = (size_t)(open - s);
			char *np = malloc(plen + pre + 32);

			if (!np) {
				seterr(err, elen, "out of memory");
				return -1;
			}
			memcpy(np, prefix, plen);
			memcpy(np + plen, s, pre);
			/* a leading zero (or a range like 08-10) pads to the first number's width */
			snprintf(np + plen + pre, 32, p[0] == '0' && width > 1 ? "%0*lu" : "%*lu",
				 p[0] == '0' && width > 1 ? width : 0, v);
			rc = expand_item(close + 1, len - (size_t)(close + 1 - s), np, out, err, elen);
			free(np);
		}
		p = q < close ? q + 1 : q;
	}
	return rc;
}

int topo_hostlist(const char *expr, char ***out, int *n, char *err, size_t len)
{
	struct strv v = { 0 };
	const char *p = expr;

	*out = NULL;
	*n = 0;
	while (*p) {
		const char *q = p;
		int depth = 0;

		while (*q && (depth || *q != ',')) {
			if (*q == '[')
				depth++;
			else if (*q == ']' && depth)
				depth--;
			q++;
		}
		if (q == p) {
			seterr(err, len, "empty host name in '%s'", expr);
			strv_free(&v);
			return -1;
		}
		if (expand_item(p, (size_t)(q - p), "", &v, err, len)) {
			strv_free(&v);
			return -1;
		}
		p = *q ? q + 1 : q;
		if (*q && !*p) {
			seterr(err, len, "empty host name in '%s'", expr);
			strv_free(&v);
			return -1;
		}
	}
	if (!v.n) {
		seterr(err, len, "empty host list");
		return -1;
	}
	*out = v.v;
	*n = v.n;
	return 0;
}

/* --- line reading --- */

/* the next line of f into *buf without its newline; 0 at the end */
static int next_line(FILE *f, char **buf, size_t *cap, int *lineno)
{
	ssize_t r = getline(buf, cap, f);

	if (r < 0)
		return 0;
	(*lineno)++;
	while (r > 0 && ((*buf)[r - 1] == '\n' || (*buf)[r - 1] == '\r'))
		(*buf)[--r] = 0;
	return 1;
}

static char *skip_space(char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* --- Slurm topology.conf --- */

/* one leaf's or switch's line, kept until every line is read */
struct slurm_sw {
	char *name;
	char *switches;   /* Switches= value or NULL */
	int line;
};

int topo_read_slurm(const char *path, struct topo *t, char *err, size_t len)
{
	FILE *f = fopen(path, "r");
	struct build b = { 0 };
	struct slurm_sw *sw = NULL;
	int nsw = 0, lineno = 0, rc = -1, shown = 0;
	char *buf = NULL, src[160];
	size_t cap = 0;

	memset(t, 0, sizeof(*t));
	if (!f) {
		seterr(err, len, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	while (next_line(f, &buf, &cap, &lineno)) {
		char *p = buf, *hash = strchr(buf, '#');
		char *name = NULL, *nodes = NULL, *switches = NULL;
		int is_block = 0, level = -1;

		if (hash)
			*hash = 0;
		p = skip_space(p);
		if (!*p)
			continue;
		/* KEY=VALUE words, keys case-insensitive as Slurm reads them */
		while (*p) {
			char *w = p, *eq;

			while (*p && *p != ' ' && *p != '\t')
				p++;
			if (*p)
				*p++ = 0;
			p = skip_space(p);
			eq = strchr(w, '=');
			if (!eq || eq == w || !eq[1]) {
				seterr(err, len, "%s:%d: expected KEY=VALUE, got '%s'", path, lineno, w);
				goto out;
			}
			*eq = 0;
			if (!strcasecmp(w, "SwitchName") || !strcasecmp(w, "BlockName")) {
				name = eq + 1;
				is_block = !strcasecmp(w, "BlockName");
			} else if (!strcasecmp(w, "Nodes")) {
				nodes = eq + 1;
			} else if (!strcasecmp(w, "Switches")) {
				switches = eq + 1;
			} else if (!strcasecmp(w, "Level")) {
				/* scontrol show topology: a switch above leaves lists every node below */
				level = atoi(eq + 1);
				shown = 1;
			} else if (strcasecmp(w, "LinkSpeed") && strcasecmp(w, "BlockSizes") &&
				   strcasecmp(w, "BlockIndex") && strcasecmp(w, "BlockSize")) {
				seterr(err, len, "%s:%d: unknown key '%s'", path, lineno, w);
				goto out;
			}
		}
		if (!name && !nodes && !switches)
			continue;           /* BlockSizes= alone */
		if (!name) {
			seterr(err, len, "%s:%d: a line without SwitchName= or BlockName=", path, lineno);
			goto out;
		}
		if (nodes && switches && level > 0)
			nodes = NULL;   /* scontrol's upper switch: its leaves hold the nodes */
		if (nodes && switches) {
			seterr(err, len, "%s:%d: switch '%s' has both Nodes= and Switches=", path,
			       lineno, name);
			goto out;
		}
		if (!nodes && !switches && is_block) {
			seterr(err, len, "%s:%d: block '%s' has no Nodes=", path, lineno, name);
			goto out;
		}
		for (int i = 0; i < nsw; i++)
			if (!strcmp(sw[i].name, name)) {
				seterr(err, len, "%s:%d: switch '%s' already defined on line %d",
				       path, lineno, name, sw[i].line);
				goto out;
			}
		{
			struct slurm_sw *v = realloc(sw, (size_t)(nsw + 1) * sizeof(*sw));

			if (!v)
				goto nomem;
			sw = v;
			sw[nsw].name = strdup(name);
			sw[nsw].switches = switches ? strdup(switches) : NULL;
			sw[nsw].line = lineno;
			nsw++;
			if (!sw[nsw - 1].name || (switches && !sw[nsw - 1].switches))
				goto nomem;
		}
		if (nodes) {
			char **hosts, e[160];
			int nh, g = build_group(&b, name, strlen(name));

			if (g < 0)
				goto nomem;
			if (topo_hostlist(nodes, &hosts, &nh, e, sizeof(e))) {
				seterr(err, len, "%s:%d: Nodes=%s: %s", path, lineno, nodes, e);
				goto out;
			}
			for (int i = 0; i < nh; i++) {
				int r = build_host(&b, hosts[i], g);

				if (r == 1)
					seterr(err, len, "%s:%d: host '%s' is under two leaf switches",
					       path, lineno, hosts[i]);
				else if (r < 0)
					seterr(err, len, "%s:%d: out of memory", path, lineno);
				if (r) {
					for (int j = 0; j < nh; j++)
						free(hosts[j]);
					free(hosts);
					goto out;
				}
			}
			for (int i = 0; i < nh; i++)
				free(hosts[i]);
			free(hosts);
		}
	}
	/* the spine of a leaf: the first switch whose Switches= names it */
	for (int i = 0; i < nsw; i++) {
		char **below, e[160];
		int nb;

		if (!sw[i].switches)
			continue;
		if (topo_hostlist(sw[i].switches, &below, &nb, e, sizeof(e))) {
			seterr(err, len, "%s:%d: Switches=%s: %s", path, sw[i].line, sw[i].switches, e);
			goto out;
		}
		for (int j = 0; j < nb; j++) {
			int g = names_find(&b.groups, below[j]), known = 0;

			for (int k = 0; k < nsw; k++)
				known |= !strcmp(sw[k].name, below[j]);
			if (!known) {
				seterr(err, len, "%s:%d: switch '%s' names an undefined switch '%s'",
				       path, sw[i].line, sw[i].name, below[j]);
				for (int k = 0; k < nb; k++)
					free(below[k]);
				free(below);
				goto out;
			}
			if (g >= 0 && b.spine[g] < 0) {
				int s = names_add(&b.spines, sw[i].name, strlen(sw[i].name));

				if (s < 0)
					goto nomem;
				b.spine[g] = s;
			}
		}
		for (int j = 0; j < nb; j++)
			free(below[j]);
		free(below);
	}
	if (!b.hosts.n) {
		seterr(err, len, "%s:%d: no switch or block with Nodes=", path, lineno);
		goto out;
	}
	snprintf(src, sizeof(src), shown ? "slurm (scontrol show topology) %s" :
		 "slurm topology.conf %s", path);
	build_done(&b, t, src);
	rc = 0;
	goto out;
nomem:
	seterr(err, len, "%s:%d: out of memory", path, lineno);
out:
	for (int i = 0; i < nsw; i++) {
		free(sw[i].name);
		free(sw[i].switches);
	}
	free(sw);
	free(buf);
	fclose(f);
	build_free(&b);
	return rc;
}

/* --- ibnetdiscover --- */

/* the quoted string starting at or after p ("S-0002c9..."), copied to out; NULL when none */
static const char *quoted(const char *p, char *out, size_t len)
{
	const char *a = strchr(p, '"'), *z;

	if (!a || !(z = strchr(a + 1, '"')))
		return NULL;
	snprintf(out, len, "%.*s", (int)(z - a - 1), a + 1);
	return z + 1;
}

int topo_read_ibnet(const char *path, struct topo *t, char *err, size_t len)
{
	FILE *f = fopen(path, "r");
	struct build b = { 0 };
	struct names sws = { 0 };        /* every switch, by its "S-guid" */
	unsigned char *has_host = NULL;  /* per switch in sws */
	int *up = NULL;                  /* switch-to-switch links: pairs */
	int nup = 0, lineno = 0, rc = -1, cur = -1, cur_is_ca = 0, ca_placed = 0;
	char *buf = NULL, host[256] = "", src[200];
	size_t cap = 0;

	memset(t, 0, sizeof(*t));
	if (!f) {
		seterr(err, len, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
#define SW_INDEX(name, out) do { \
		int n0_ = sws.n; \
		unsigned char *hv_; \
		(out) = names_add(&sws, (name), strlen(name)); \
		if ((out) < 0) goto nomem; \
		hv_ = realloc(has_host, (size_t)sws.n); \
		if (!hv_) goto nomem; \
		has_host = hv_; \
		if (sws.n > n0_) hv_[(out)] = 0; \
	} while (0)
	while (next_line(f, &buf, &cap, &lineno)) {
		char *p = skip_space(buf), id[128], desc[256];
		const char *rest;

		if (!*p || *p == '#' || p[strcspn(p, "= \t")] == '=')
			continue;           /* comments, vendid=, switchguid=, caguid= ... */
		if (!strncmp(p, "Switch", 6) && (p[6] == ' ' || p[6] == '\t')) {
			if (!(rest = quoted(p, id, sizeof(id))) || strncmp(id, "S-", 2)) {
				seterr(err, len, "%s:%d: a Switch line without its \"S-GUID\"", path, lineno);
				goto out;
			}
			SW_INDEX(id, cur);
			cur_is_ca = 0;
			continue;
		}
		if ((!strncmp(p, "Ca", 2) || !strncmp(p, "Rt", 2)) && (p[2] == ' ' || p[2] == '\t')) {
			const char *hash;

			if (!(rest = quoted(p, id, sizeof(id))) || !(hash = strchr(rest, '#')) ||
			    !quoted(hash, desc, sizeof(desc))) {
				seterr(err, len, "%s:%d: a Ca line without its \"H-GUID\" and # \"description\"",
				       path, lineno);
				goto out;
			}
			/* "node01 HCA-1": the host is the first word */
			snprintf(host, sizeof(host), "%.*s", (int)strcspn(desc, " \t"), desc);
			if (!host[0]) {
				seterr(err, len, "%s:%d: an empty host description", path, lineno);
				goto out;
			}
			cur = -1;
			cur_is_ca = p[0] == 'C';
			ca_placed = names_find(&b.hosts, host) >= 0;   /* a host's second HCA */
			continue;
		}
		if (*p == '[') {
			/* a port: [N](portguid)? "PEER"[M]... # "peer description" ... */
			if (!quoted(p, id, sizeof(id))) {
				seterr(err, len, "%s:%d: a port line without its peer \"GUID\"", path, lineno);
				goto out;
			}
			if (cur_is_ca) {
				int s, g, r;

				if (ca_placed || strncmp(id, "S-", 2))
					continue;   /* an adapter linked to an adapter: no switch */
				SW_INDEX(id, s);
				has_host[s] = 1;
				g = build_group(&b, id, strlen(id));
				if (g < 0)
					goto nomem;
				r = build_host(&b, host, g);
				if (r < 0)
					goto nomem;
				ca_placed = 1;
			} else if (cur >= 0 && !strncmp(id, "S-", 2)) {
				int s, *v;

				SW_INDEX(id, s);
				v = realloc(up, (size_t)(nup + 1) * 2 * sizeof(int));
				if (!v)
					goto nomem;
				up = v;
				up[2 * nup] = cur;
				up[2 * nup + 1] = s;
				nup++;
			} else if (cur >= 0 && !strncmp(id, "H-", 2)) {
				/* the switch's side of a host link: the host from the comment */
				const char *hash = strchr(strchr(p, '"') + 1, '"');
				int g, r;

				hash = hash ? strchr(hash, '#') : NULL;
				if (!hash || !quoted(hash, desc, sizeof(desc)))
					continue;
				snprintf(host, sizeof(host), "%.*s", (int)strcspn(desc, " \t"), desc);
				if (!host[0] || names_find(&b.hosts, host) >= 0)
					continue;
				has_host[cur] = 1;
				g = build_group(&b, sws.v[cur], strlen(sws.v[cur]));
				if (g < 0)
					goto nomem;
				r = build_host(&b, host, g);
				if (r < 0)
					goto nomem;
			}
			continue;
		}
		seterr(err, len, "%s:%d: not ibnetdiscover output: '%.40s'", path, lineno, p);
		goto out;
	}
#undef SW_INDEX
	/* a leaf's spine: the first switch it links to that has no host */
	for (int i = 0; i < nup; i++) {
		int a = up[2 * i], s = up[2 * i + 1], g;

		if (!has_host[a] || has_host[s])
			continue;
		g = names_find(&b.groups, sws.v[a]);
		if (g >= 0 && b.spine[g] < 0) {
			int k = names_add(&b.spines, sws.v[s], strlen(sws.v[s]));

			if (k < 0)
				goto nomem;
			b.spine[g] = k;
		}
	}
	if (!b.hosts.n) {
		seterr(err, len, "%s:%d: no host linked to a switch", path, lineno);
		goto out;
	}
	snprintf(src, sizeof(src), "ibnetdiscover %s", path);
	build_done(&b, t, src);
	rc = 0;
	goto out;
nomem:
	seterr(err, len, "%s:%d: out of memory", path, lineno);
out:
	names_free(&sws);
	free(has_host);
	free(up);
	free(buf);
	fclose(f);
	build_free(&b);
	return rc;
}

/* --- plain: HOST GROUP [SPINE] --- */

int topo_read_plain(const char *path, struct topo *t, char *err, size_t len)
{
	FILE *f = fopen(path, "r");
	struct build b = { 0 };
	int lineno = 0, rc = -1;
	char *buf = NULL, src[200];
	size_t cap = 0;

	memset(t, 0, sizeof(*t));
	if (!f) {
		seterr(err, len, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	while (next_line(f, &buf, &cap, &lineno)) {
		char *w[4], *save = NULL, *hash = strchr(buf, '#');
		int nw = 0, g, r;

		if (hash)
			*hash = 0;
		for (char *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save))
			if (nw < 4)
				w[nw++] = tok;
			else
				nw = 5;
		if (!nw)
			continue;
		if (nw < 2 || nw > 3) {
			seterr(err, len, "%s:%d: expected 'HOST GROUP [SPINE]', got %d field%s", path,
			       lineno, nw > 3 ? 4 : nw, nw == 1 ? "" : "s");
			goto out;
		}
		g = build_group(&b, w[1], strlen(w[1]));
		if (g < 0)
			goto nomem;
		if (nw == 3) {
			int s = names_add(&b.spines, w[2], strlen(w[2]));

			if (s < 0)
				goto nomem;
			if (b.spine[g] >= 0 && b.spine[g] != s) {
				seterr(err, len, "%s:%d: group '%s' under spine '%s', earlier under '%s'",
				       path, lineno, w[1], w[2], b.spines.v[b.spine[g]]);
				goto out;
			}
			b.spine[g] = s;
		}
		r = build_host(&b, w[0], g);
		if (r == 1) {
			seterr(err, len, "%s:%d: host '%s' listed twice", path, lineno, w[0]);
			goto out;
		}
		if (r < 0)
			goto nomem;
	}
	if (!b.hosts.n) {
		seterr(err, len, "%s:%d: no host in the file", path, lineno);
		goto out;
	}
	snprintf(src, sizeof(src), "plain %s", path);
	build_done(&b, t, src);
	rc = 0;
	goto out;
nomem:
	seterr(err, len, "%s:%d: out of memory", path, lineno);
out:
	free(buf);
	fclose(f);
	build_free(&b);
	return rc;
}

int topo_read(const char *path, struct topo *t, char *err, size_t len)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0;
	int lineno = 0, kind = 0;   /* 0 plain, 1 slurm, 2 ibnetdiscover */

	memset(t, 0, sizeof(*t));
	if (!f) {
		seterr(err, len, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	while (next_line(f, &buf, &cap, &lineno)) {
		char *p = skip_space(buf);

		/* ibnetdiscover's header is a comment: "# Topology file: generated on ..." */
		if (strstr(p, "Topology file:") || !strncmp(p, "vendid=", 7) ||
		    !strncmp(p, "switchguid=", 11) || !strncmp(p, "caguid=", 7)) {
			kind = 2;
			break;
		}
		if (!*p || *p == '#')
			continue;
		if (!strncasecmp(p, "SwitchName=", 11) || !strncasecmp(p, "BlockName=", 10) ||
		    !strncasecmp(p, "BlockSizes=", 11))
			kind = 1;
		else if (!strncmp(p, "Switch", 6) || !strncmp(p, "Ca\t", 3) || !strncmp(p, "Ca ", 3))
			kind = 2;
		break;
	}
	free(buf);
	fclose(f);
	return kind == 1 ? topo_read_slurm(path, t, err, len)
	     : kind == 2 ? topo_read_ibnet(path, t, err, len)
	     : topo_read_plain(path, t, err, len);
}

int topo_assign(const struct topo *t, char *const *hosts, int n, int *group_of, int *ngroups,
		const char **names, char *err, size_t len)
{
	int *dense = malloc((size_t)(t->ngroups > 0 ? t->ngroups : 1) * sizeof(int));
	int ng = 0;

	if (!dense) {
		seterr(err, len, "out of memory");
		return -1;
	}
	for (int g = 0; g < t->ngroups; g++)
		dense[g] = -1;
	for (int i = 0; i < n; i++) {
		int h = -1, g;

		for (int k = 0; k < t->nhosts && h < 0; k++)
			if (!strcmp(t->hosts[k], hosts[i]))
				h = k;
		if (h < 0) {
			seterr(err, len, "host '%s' is not in the topology (%s)", hosts[i], t->source);
			free(dense);
			return -1;
		}
		g = t->group[h];
		if (dense[g] < 0) {
			if (names)
				names[ng] = t->groups[g];
			dense[g] = ng++;
		}
		group_of[i] = dense[g];
	}
	*ngroups = ng;
	free(dense);
	return 0;
}
