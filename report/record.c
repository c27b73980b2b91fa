/*
 * report/record.c: a flat view of one measurement record, and a scanner
 * that fills it without building a jansson tree. A results file is almost
 * all measurements and a million of them must be judged in seconds: jansson
 * allocates every key and value (~12 us a record on the CI VM), the scanner
 * allocates nothing. It accepts only plain JSON (ASCII strings, simple
 * escapes, objects only at the top two levels, no duplicate keys, at most
 * RV_MAX_FIELDS fields); anything else goes to
 * jansson, which decides and words the error, so both readers agree on what
 * is valid (the fuzz target checks it).
 */
#include "record.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 8

struct scan {
	char *p, *end;
	struct rv *r;
	int depth;               /* objects and arrays open; the record itself is 1 */
	int in_array;            /* inside an array: nothing is recorded */
	const char *parent;      /* key of the object being read at depth 2 */
	unsigned key_h;          /* key_hash of the key whose value is being read */
};

static void ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

/*
 * A string: on success *out is its text, NUL-terminated in place (escapes
 * resolved; the text only shrinks). \u escapes and bytes >= 0x80 are left
 * to jansson (UTF-8 validation).
 */
/* bytes a string cannot hold as they are: the quote, the escape, controls, non-ASCII */
static const unsigned char plain_byte[256] = {
	[' '] = 1, ['!'] = 1, ['#' ... '['] = 1, [']' ... 0x7f] = 1,
};

static int string(struct scan *s, char **out)
{
	char *w, *start;

	if (s->p >= s->end || *s->p != '"')
		return -1;
	start = ++s->p;
	/*
	 * Most strings have no escape: skip to the quote, nothing to move; eight
	 * bytes at a time while none of them is a quote, a backslash, a control
	 * or a byte >= 0x80 (the zero-byte test of "Bit Twiddling Hacks").
	 */
	while (s->end - s->p >= 8) {
		uint64_t w, q, b;

		memcpy(&w, s->p, 8);
		q = w ^ 0x2222222222222222ULL;          /* '"' becomes 0 */
		b = w ^ 0x5c5c5c5c5c5c5c5cULL;          /* '\\' becomes 0 */
		if (((q - 0x0101010101010101ULL) & ~q) & 0x8080808080808080ULL ||
		    ((b - 0x0101010101010101ULL) & ~b) & 0x8080808080808080ULL ||
		    ((w - 0x2020202020202020ULL) | w) & 0x8080808080808080ULL)
			break;
		s->p += 8;
	}
	while (s->p < s->end && plain_byte[(unsigned char)*s->p])
		s->p++;
	w = s->p;
	for (; s->p < s->end; s->p++) {
		unsigned char c = (unsigned char)*s->p;

		if (c == '"') {
			s->p++;
			*w = '\0';
			*out = start;
			return 0;
		}
		if (c < 0x20 || c >= 0x80)
			return -1;
		if (c == '\\') {
			if (++s->p >= s->end)
				return -1;
			switch (*s->p) {
			case '"': c = '"'; break;
			case '\\': c = '\\'; break;
			case '/': c = '/'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			default: return -1;      /* \u and anything else: jansson's */
			}
		}
		*w++ = (char)c;
	}
	return -1;
}

/*
 * A number as JSON spells it: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
 * Plain numbers are converted when asked for (rv_num): a record has a dozen
 * and a criterion reads two. With an exponent it is converted now, so that
 * what jansson refuses (out of range) goes to jansson.
 */
static int number(struct scan *s, char **text, double *v, int *integer)
{
	char *p = s->p, *e = s->end;
	int digits = 0, exp = 0;

	*integer = 1;
	*v = NAN;
	if (p < e && *p == '-')
		p++;
	if (p < e && *p == '0') {
		p++;
		digits = 1;
	} else {
		for (; p < e && *p >= '0' && *p <= '9'; p++)
			digits++;
	}
	if (!digits || digits > 300)
		return -1;
	if (*integer && digits > 18 && !(p < e && (*p == '.' || *p == 'e' || *p == 'E')))
		return -1;       /* integers jansson cannot hold are jansson's to refuse */
	if (p < e && *p == '.') {
		*integer = 0;
		digits = 0;
		for (p++; p < e && *p >= '0' && *p <= '9'; p++)
			digits++;
		if (!digits)
			return -1;
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		*integer = 0;
		exp = 1;
		p++;
		if (p < e && (*p == '+' || *p == '-'))
			p++;
		digits = 0;
		for (; p < e && *p >= '0' && *p <= '9'; p++)
			digits++;
		if (!digits)
			return -1;
	}
	if (p >= e)
		return -1;       /* a value is always followed by ',', '}' or ']' in a record */
	*text = s->p;
	if (exp) {
		char save = *p;

		*p = '\0';
		*v = strtod(s->p, NULL);
		*p = save;
		if (!isfinite(*v))
			return -1;
	}
	s->p = p;
	return 0;
}

static int literal(struct scan *s, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n))
		return -1;
	s->p += n;
	return 0;
}

static int value(struct scan *s, const char *key);

/* a cheap fingerprint of a key: most comparisons end on it, not in strcmp */
static unsigned key_hash(const char *k)
{
	unsigned h = 5381;

	for (; *k; k++)
		h = h * 33 + (unsigned char)*k;
	return h;
}

/*
 * The fields are found by their key's hash in r->tab (a record has some 20
 * and is asked for a dozen: a scan of them all per question was most of the
 * reader's time). Keys are unique per parent (duplicates go to jansson).
 */
static void tab_clear(struct rv *r)
{
	memset(r->tab, 0, sizeof(r->tab));
}

static void tab_add(struct rv *r, int k)
{
	unsigned i = r->f[k].hash & (RV_TAB - 1);

	while (r->tab[i])
		i = (i + 1) & (RV_TAB - 1);
	r->tab[i] = (unsigned char)(k + 1);
}

/* the field key of the object parent (NULL: of the record), same-pointer parents when same is set */
static const struct rv_field *tab_find(const struct rv *r, const char *parent, const char *key, unsigned h,
				       int same)
{
	for (unsigned i = h & (RV_TAB - 1); r->tab[i]; i = (i + 1) & (RV_TAB - 1)) {
		const struct rv_field *f = &r->f[r->tab[i] - 1];

		if (f->hash != h || strcmp(f->key, key))
			continue;
		if (same ? f->parent == parent : parent ? f->parent && !strcmp(f->parent, parent) : !f->parent)
			return f;
	}
	return NULL;
}

/* records a field of the record (depth 1) or of an object in it (depth 2) */
static void add(struct scan *s, const char *key, char type, const char *str, double num)
{
	struct rv *r = s->r;
	struct rv_field *f;

	if (!key || s->in_array || s->depth > 2)
		return;
	if (r->n == RV_MAX_FIELDS) {
		r->overflow = 1;
		return;
	}
	f = &r->f[r->n++];
	f->parent = s->depth == 2 ? s->parent : NULL;
	f->key = key;
	f->hash = s->key_h;
	f->type = type;
	f->str = str;
	f->num = num;
	tab_add(r, r->n - 1);
}

static int object(struct scan *s, const char *key)
{
	const char *parent = s->parent;

	/* duplicate keys are checked where fields are recorded; deeper objects are jansson's */
	if (s->in_array || s->depth > 1)
		return -1;
	add(s, key, 'o', NULL, 0);
	if (++s->depth > MAX_DEPTH)
		return -1;
	if (s->depth == 2)
		s->parent = key;
	s->p++;
	ws(s);
	if (s->p < s->end && *s->p == '}') {
		s->p++;
		goto done;
	}
	for (;;) {
		char *k;

		ws(s);
		if (string(s, &k))
			return -1;
		/* jansson rejects duplicate keys (JSON_REJECT_DUPLICATES): let it say so */
		s->key_h = key_hash(k);
		if (s->depth <= 2 && tab_find(s->r, s->depth == 2 ? s->parent : NULL, k, s->key_h, 1))
			return -1;
		ws(s);
		if (s->p >= s->end || *s->p != ':')
			return -1;
		s->p++;
		ws(s);
		if (value(s, k))
			return -1;
		ws(s);
		if (s->p < s->end && *s->p == ',') {
			s->p++;
			continue;
		}
		if (s->p < s->end && *s->p == '}') {
			s->p++;
			break;
		}
		return -1;
	}
done:
	s->depth--;
	s->parent = parent;
	return 0;
}

static int array(struct scan *s, const char *key)
{
	add(s, key, 'a', NULL, 0);
	if (++s->depth > MAX_DEPTH)
		return -1;
	s->in_array++;
	s->p++;
	ws(s);
	if (s->p < s->end && *s->p == ']') {
		s->p++;
		goto done;
	}
	for (;;) {
		ws(s);
		if (value(s, NULL))
			return -1;
		ws(s);
		if (s->p < s->end && *s->p == ',') {
			s->p++;
			continue;
		}
		if (s->p < s->end && *s->p == ']') {
			s->p++;
			break;
		}
		return -1;
	}
done:
	s->in_array--;
	s->depth--;
	return 0;
}

/* a value; key is its name in the enclosing object (NULL in arrays) */
static int value(struct scan *s, const char *key)
{
	double v;
	int integer;
	char *str;

	if (s->p >= s->end)
		return -1;
	switch (*s->p) {
	case '{':
		return object(s, key);
	case '[':
		return array(s, key);
	case '"':
		if (string(s, &str))
			return -1;
		add(s, key, 's', str, 0);
		return 0;
	case 't':
		if (literal(s, "true"))
			return -1;
		add(s, key, 'b', NULL, 1);
		return 0;
	case 'f':
		if (literal(s, "false"))
			return -1;
		add(s, key, 'b', NULL, 0);
		return 0;
	case 'n':
		if (literal(s, "null"))
			return -1;
		add(s, key, 'z', NULL, 0);
		return 0;
	default:
		if (number(s, &str, &v, &integer))
			return -1;
		add(s, key, integer ? 'i' : 'r', str, v);
		return 0;
	}
}

int rv_scan(char *line, size_t len, struct rv *r)
{
	struct scan s = { .p = line, .end = line + len, .r = r };

	r->n = 0;
	r->overflow = 0;
	tab_clear(r);
	ws(&s);
	if (s.p >= s.end || *s.p != '{' || object(&s, NULL))
		return -1;
	ws(&s);
	/* a record with more fields than the view holds is read by jansson */
	if (s.p != s.end || r->overflow)
		return -1;
	/* the delimiters are read: now numbers can end in place for rv_num */
	for (int i = 0; i < r->n; i++) {
		struct rv_field *f = &r->f[i];
		char *q = (char *)f->str;

		if ((f->type != 'i' && f->type != 'r') || !q)
			continue;
		while (*q == '-' || *q == '.' || *q == 'e' || *q == 'E' || *q == '+' || (*q >= '0' && *q <= '9'))
			q++;
		*q = '\0';
	}
	return 0;
}

/* the same view of a record jansson has read (rare: lines the scanner left to it) */
int rv_from_json(const json_t *rec, struct rv *r)
{
	const char *k, *k2;
	json_t *v, *v2;

	r->n = 0;
	r->overflow = 0;
	tab_clear(r);
	/* past RV_MAX_FIELDS the rest of a record is not seen (no metric lives there) */
	json_object_foreach((json_t *)rec, k, v) {
		if (r->n == RV_MAX_FIELDS)
			return 0;
		struct rv_field *f = &r->f[r->n++];

		f->parent = NULL;
		f->key = k;
		f->hash = key_hash(k);
		f->str = json_string_value(v);      /* NULL for numbers: num holds them */
		f->num = json_is_number(v) ? json_number_value(v) : json_is_true(v);
		f->type = json_is_object(v) ? 'o' : json_is_array(v) ? 'a' : json_is_string(v) ? 's' :
			  json_is_integer(v) ? 'i' : json_is_real(v) ? 'r' : json_is_boolean(v) ? 'b' : 'z';
		tab_add(r, r->n - 1);
		if (!json_is_object(v))
			continue;
		json_object_foreach(v, k2, v2) {
			if (r->n == RV_MAX_FIELDS)
				return 0;
			f = &r->f[r->n++];
			f->parent = k;
			f->key = k2;
			f->hash = key_hash(k2);
			f->str = json_string_value(v2);
			f->num = json_is_number(v2) ? json_number_value(v2) : 0;
			f->type = json_is_object(v2) ? 'o' : json_is_array(v2) ? 'a' : json_is_string(v2) ? 's' :
				  json_is_integer(v2) ? 'i' : json_is_real(v2) ? 'r' : json_is_boolean(v2) ? 'b' : 'z';
			tab_add(r, r->n - 1);
		}
	}
	return 0;
}

static const struct rv_field *find(const struct rv *r, const char *parent, const char *key)
{
	return tab_find(r, parent, key, key_hash(key), 0);
}

/*
 * A plain decimal (digits, an optional fraction, no exponent: the scanner
 * converted those) as strtod would give it, when the digits fit in 2^53 and
 * the fraction in 22 places: then m / 10^k is one correctly rounded IEEE
 * division (Clinger's fast path), the same double. -1 for the rest (strtod).
 */
static int fast_decimal(const char *s, double *v)
{
	static const double p10[] = { 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12,
		1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
	unsigned long long m = 0;
	int neg = *s == '-', frac = -1, digits = 0;

	for (s += neg; *s; s++) {
		if (*s == '.' && frac < 0) {
			frac = 0;
			continue;
		}
		if (*s < '0' || *s > '9' || ++digits > 15)
			return -1;
		m = m * 10 + (unsigned)(*s - '0');
		frac += frac >= 0;
	}
	if (!digits || frac > 22)
		return -1;
	*v = (double)m / p10[frac > 0 ? frac : 0];
	if (neg)
		*v = -*v;
	return 0;
}

static double convert(const char *s)
{
	double v;

	return fast_decimal(s, &v) ? strtod(s, NULL) : v;
}

const char *rv_str(const struct rv *r, const char *key)
{
	const struct rv_field *f = find(r, NULL, key);

	return f && f->type == 's' ? f->str : NULL;
}

const char *rv_str_in(const struct rv *r, const char *parent, const char *key)
{
	const struct rv_field *f = find(r, parent, key);

	return f && f->type == 's' ? f->str : NULL;
}

int rv_num(const struct rv *r, const char *parent, const char *key, double *v)
{
	const struct rv_field *f = find(r, parent, key);

	if (!f || (f->type != 'i' && f->type != 'r'))
		return -1;
	*v = f->str && isnan(f->num) ? convert(f->str) : f->num;
	return 0;
}

int rv_has(const struct rv *r, const char *key)
{
	return find(r, NULL, key) != NULL;
}

/* a boolean field of the record is true (rv_num reads numbers only) */
int rv_true(const struct rv *r, const char *key)
{
	const struct rv_field *f = find(r, NULL, key);

	return f && f->type == 'b' && f->num == 1;
}

/* ---- numbers a record cannot hold (docs/results.md, "numbers") ---- */

#define RV_ABS_MAX 1e18          /* no count, size, time or rate of a run is larger */
#define RV_HOSTS_MAX 1e7         /* nodes, ranks, world_size */
#define RV_CV_MAX 1e6            /* a coefficient of variation (1e8 %) */

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !memcmp(s + n - m, suffix, m);
}

/* counts, sizes, times and rates: never negative (a fit's intercept may be, and drop_pct, r2) */
static int unsigned_key(const char *parent, const char *key)
{
	static const char *const counts[] = { "wrong", "bytes", "count", "ranks", "nodes", "world_size",
		"iters", "warmup", "reps", "n", "cv", "failures", "errors", "exit_code", "window", "windows",
		"iops", "ops_per_s", "tflops", NULL };

	if (parent)
		return ends_with(parent, "_us") || ends_with(parent, "_s");
	for (int i = 0; counts[i]; i++)
		if (!strcmp(key, counts[i]))
			return 1;
	return ends_with(key, "_us") || ends_with(key, "_s") || ends_with(key, "_GBps") ||
	       ends_with(key, "_Gbps") || ends_with(key, "_bytes");
}

/* the value of a number field, or its magnitude's bound from the text when it is not converted */
static double field_value(const struct rv_field *f)
{
	const char *q;
	int digits = 0;

	if (!f->str || !isnan(f->num))
		return f->num;
	/* plain numbers (no exponent): the digits before the point tell the magnitude */
	for (q = f->str + (*f->str == '-'); *q >= '0' && *q <= '9'; q++)
		digits++;
	if (digits > 15)
		return strtod(f->str, NULL);
	return *f->str == '-' ? -1 : 1;   /* small: only the sign matters here, rv_num converts */
}

int rv_check(const struct rv *r, char *why, size_t len)
{
	const char *kind = rv_str(r, "kind");
	int fit = kind && !strcmp(kind, "fit");
	static unsigned h_nodes, h_ranks, h_world, h_cv;

	if (!h_cv) {
		h_nodes = key_hash("nodes");
		h_ranks = key_hash("ranks");
		h_world = key_hash("world_size");
		h_cv = key_hash("cv");
	}

	for (int i = 0; i < r->n; i++) {
		const struct rv_field *f = &r->f[i];
		const char *p = f->parent;
		double v, lim = RV_ABS_MAX;

		if (f->type != 'i' && f->type != 'r')
			continue;
		/* the hash first: a dozen numbers a record, a million records */
		if (!p && (f->hash == h_nodes || f->hash == h_ranks || f->hash == h_world) &&
		    (!strcmp(f->key, "nodes") || !strcmp(f->key, "ranks") || !strcmp(f->key, "world_size")))
			lim = RV_HOSTS_MAX;
		else if (f->hash == h_cv && !strcmp(f->key, "cv"))
			lim = RV_CV_MAX;
		/* the few limited fields are converted; the rest only when long enough to matter */
		v = lim < RV_ABS_MAX && f->str && isnan(f->num) ? convert(f->str) : field_value(f);
		if (!(fabs(v) <= lim)) {
			snprintf(why, len, "%s%s%s %.6g is out of range (at most %.3g)", p ? p : "",
				 p ? "." : "", f->key, v, lim);
			return -1;
		}
		if (v < 0 && !fit && unsigned_key(p, f->key)) {
			snprintf(why, len, "%s%s%s is negative (%s): a count, size, time or rate never is",
				 p ? p : "", p ? "." : "", f->key, f->str ? f->str : "a negative number");
			return -1;
		}
	}
	return 0;
}
