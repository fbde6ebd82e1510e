/* object.c -- the guard's order, status ranks and provider times. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ih.h"
#include "json.h"
#include "object.h"

int
object_guard(const struct object_key *row, const struct object_key *ev)
{
	int c;

	if (row == NULL)
		return OBJECT_APPLIED;
	if (ev->source_ms != row->source_ms)
		return ev->source_ms > row->source_ms ? OBJECT_APPLIED :
		    OBJECT_STALE;
	if (ev->rank != row->rank)
		return ev->rank > row->rank ? OBJECT_APPLIED : OBJECT_TIED;
	c = strcmp(ev->event_id, row->event_id);
	return c > 0 ? OBJECT_APPLIED : OBJECT_TIED;
}

const char *
object_verdict_name(int verdict)
{
	switch (verdict) {
	case OBJECT_APPLIED:
		return "applied";
	case OBJECT_STALE:
		return "stale";
	case OBJECT_TIED:
		return "tied";
	default:
		return "?";
	}
}

int
object_rank(const char *status, const char *const *terminal, int deleted)
{
	size_t i;

	if (deleted)
		return OBJECT_RANK_DELETED;
	for (i = 0; status != NULL && terminal != NULL &&
	    terminal[i] != NULL; i++)
		if (strcmp(status, terminal[i]) == 0)
			return OBJECT_RANK_TERMINAL + (int)i;
	return OBJECT_RANK_OPEN;
}

/* Reads exactly n digits at *p into *v; 0, or -1. */
static int
digits(const char **p, int n, long *v)
{
	int i;

	*v = 0;
	for (i = 0; i < n; i++) {
		if ((*p)[i] < '0' || (*p)[i] > '9')
			return -1;
		*v = *v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	return 0;
}

/* Days from 1970-01-01 to the civil date y-m-d (Howard Hinnant's). */
static int64_t
days_from_civil(long y, long m, long d)
{
	long era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return (int64_t)era * 146097 + doe - 719468;
}

/* Parses an optional "Z", "+HH:MM", "+HHMM" or "+HH"; 0 or -1. */
static int
zone(const char **p, int64_t *off_ms)
{
	long h, m = 0;
	int sign;

	*off_ms = 0;
	if (**p == 'Z' || **p == 'z') {
		(*p)++;
		return 0;
	}
	if (**p != '+' && **p != '-')
		return 0;
	sign = **p == '-' ? -1 : 1;
	(*p)++;
	if (digits(p, 2, &h) != 0 || h > 23)
		return -1;
	if (**p == ':')
		(*p)++;
	if (**p >= '0' && **p <= '9' && (digits(p, 2, &m) != 0 || m > 59))
		return -1;
	*off_ms = sign * (h * 3600 + m * 60) * (int64_t)1000;
	return 0;
}

int
object_time_parse(const char *s, int64_t *ms)
{
	const char *p = s;
	long y, mo, d, h = 0, mi = 0, sec = 0, frac = 0, scale = 1000;
	int64_t off = 0;
	char *end;
	long long secs;

	if (s == NULL || *s == '\0')
		return -1;
	if (strspn(s, "0123456789") == strlen(s)) {
		if (strlen(s) > 12)
			return -1;
		secs = strtoll(s, &end, 10);
		*ms = (int64_t)secs * 1000;
		return 0;
	}
	if (digits(&p, 4, &y) != 0 || *p++ != '-' ||
	    digits(&p, 2, &mo) != 0 || *p++ != '-' ||
	    digits(&p, 2, &d) != 0 || mo < 1 || mo > 12 || d < 1 || d > 31)
		return -1;
	if (*p == 'T' || *p == 't' || *p == ' ') {
		p++;
		if (digits(&p, 2, &h) != 0 || *p++ != ':' ||
		    digits(&p, 2, &mi) != 0 || h > 23 || mi > 59)
			return -1;
		if (*p == ':') {
			p++;
			if (digits(&p, 2, &sec) != 0 || sec > 60)
				return -1;
		}
		if (*p == '.' || *p == ',') {
			p++;
			if (*p < '0' || *p > '9')
				return -1;
			for (; *p >= '0' && *p <= '9'; p++) {
				scale /= 10;
				frac += (*p - '0') * scale;
			}
		}
		if (zone(&p, &off) != 0)
			return -1;
	}
	if (*p != '\0')
		return -1;
	*ms = (days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 +
	    sec) * 1000 + frac - off;
	return 0;
}

void
object_found_free(struct object_found *f)
{
	free(f->object_id);
	free(f->status);
	free(f->json);
	memset(f, 0, sizeof(*f));
}

int
object_found_copy(struct object_found *dst, const struct object_found *src)
{
	*dst = *src;
	dst->object_id = NULL;
	dst->status = NULL;
	dst->json = NULL;
	if (src->object_id != NULL)
		dst->object_id = strdup(src->object_id);
	if (src->status != NULL)
		dst->status = strdup(src->status);
	if ((src->object_id != NULL && dst->object_id == NULL) ||
	    (src->status != NULL && dst->status == NULL))
		return IH_ENOMEM;
	if (src->json != NULL) {
		dst->json = malloc(src->json_len + 1);
		if (dst->json == NULL)
			return IH_ENOMEM;
		memcpy(dst->json, src->json, src->json_len + 1);
	}
	return IH_OK;
}

/* Is s printable text of 1 to max - 1 bytes, without control bytes? */
static int
name_ok(const char *s, size_t max)
{
	size_t i, n;

	if (s == NULL)
		return 0;
	n = strlen(s);
	if (n == 0 || n >= max)
		return 0;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return 1;
}

/* Adds path to w unless NULL; returns its index, or -1. */
static int
want(struct json_want *w, size_t *n, const char *path, int raw)
{
	if (path == NULL)
		return -1;
	w[*n].path = path;
	w[*n].raw = raw;
	return (int)(*n)++;
}

static char *
take(struct json_want *w, int i)
{
	char *v;

	if (i < 0)
		return NULL;
	v = w[i].val;
	w[i].val = NULL;
	return v;
}

int
object_want(const struct object_rule *rule, struct json_want *w, size_t *n,
    int at[OBJECT_WANTS])
{
	size_t need = 0;
	int i;
	const char *paths[OBJECT_WANTS];

	paths[0] = rule->kind == NULL ? rule->kind_path : NULL;
	paths[1] = rule->id_path;
	paths[2] = rule->status_path;
	paths[3] = rule->status_path2;
	paths[4] = rule->time_path;
	paths[5] = rule->time_path2;
	paths[6] = rule->object_path;
	for (i = 0; i < OBJECT_WANTS; i++)
		need += paths[i] != NULL;
	if (*n + need > JSON_MAX_FIELDS)
		return -1;
	for (i = 0; i < OBJECT_WANTS; i++)
		at[i] = want(w, n, paths[i], i == OBJECT_WANTS - 1);
	return 0;
}

int
object_take(const struct object_rule *rule, struct json_want *w,
    const int at[OBJECT_WANTS], const void *body, size_t len,
    struct object_found *f)
{
	char *kind = NULL, *t = NULL;
	int rc = IH_OK;

	memset(f, 0, sizeof(*f));
	kind = rule->kind != NULL ? NULL : take(w, at[0]);
	if (!name_ok(rule->kind != NULL ? rule->kind : kind,
	    OBJECT_KIND_MAX) || at[1] < 0 || !name_ok(w[at[1]].val,
	    OBJECT_ID_MAX))
		goto out;
	snprintf(f->kind, sizeof(f->kind), "%s",
	    rule->kind != NULL ? rule->kind : kind);
	f->object_id = take(w, at[1]);
	f->status = take(w, at[2]);
	if (f->status == NULL)
		f->status = take(w, at[3]);
	if (f->status == NULL && rule->deleted)
		f->status = strdup("deleted");
	else if (f->status == NULL)
		f->status = strdup("");
	if (f->status == NULL) {
		rc = IH_ENOMEM;
		goto out;
	}
	t = take(w, at[4]);
	if (t == NULL || object_time_parse(t, &f->source_ms) != 0) {
		free(t);
		t = take(w, at[5]);
		if (t == NULL || object_time_parse(t, &f->source_ms) != 0)
			f->source_ms = 0;
	}
	if (rule->object_path != NULL)
		f->json = take(w, at[6]);
	else if (len <= OBJECT_JSON_MAX) {
		f->json = malloc(len + 1);
		if (f->json == NULL) {
			rc = IH_ENOMEM;
			goto out;
		}
		memcpy(f->json, body, len);
		f->json[len] = '\0';
	}
	f->json_len = f->json != NULL ? strlen(f->json) : 0;
	f->deleted = rule->deleted != 0;
	f->rank = object_rank(f->status, rule->terminal, f->deleted);
	f->mapped = 1;
out:
	free(kind);
	free(t);
	return rc;
}

/* Are a and b both NULL, or the same text? */
static int
same_path(const char *a, const char *b)
{
	return a == b || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

int
object_rule_reads_same(const struct object_rule *a,
    const struct object_rule *b)
{
	return same_path(a->kind, b->kind) &&
	    same_path(a->kind_path, b->kind_path) &&
	    same_path(a->id_path, b->id_path) &&
	    same_path(a->status_path, b->status_path) &&
	    same_path(a->status_path2, b->status_path2) &&
	    same_path(a->time_path, b->time_path) &&
	    same_path(a->time_path2, b->time_path2) &&
	    same_path(a->object_path, b->object_path);
}

int
object_extract(struct json *js, const struct object_rule *rule,
    const void *body, size_t len, struct object_found *f)
{
	struct json_want w[JSON_MAX_FIELDS];
	int at[OBJECT_WANTS];
	size_t n = 0, i;
	int rc;

	memset(f, 0, sizeof(*f));
	memset(w, 0, sizeof(w));
	(void)object_want(rule, w, &n, at);
	rc = json_extract(js, body, len, w, n, OBJECT_JSON_MAX);
	if (rc == IH_ENOMEM)
		return rc;
	if (rc != IH_OK)
		return IH_OK;
	rc = object_take(rule, w, at, body, len, f);
	for (i = 0; i < n; i++)
		free(w[i].val);
	return rc;
}

int
object_read(const struct object_rule *rule, const void *body, size_t len,
    struct object_found *f)
{
	struct json *js = NULL;
	int rc;

	memset(f, 0, sizeof(*f));
	rc = json_open(&js);
	if (rc != IH_OK)
		return rc;
	rc = object_extract(js, rule, body, len, f);
	json_close(js);
	return rc;
}

int
object_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

int
object_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

int
object_name_is(const char *s, const char *name)
{
	return s != NULL && name != NULL && strcmp(s, name) == 0;
}

int
object_same_kind(const char *a, const char *b)
{
	size_t n = strcspn(a, "/");

	return n == strcspn(b, "/") && strncmp(a, b, n) == 0;
}
