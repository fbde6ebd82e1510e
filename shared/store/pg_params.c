/*
 * pg_params.c -- PostgreSQL: a statement's parameters as libpq takes them
 * (text, 64-bit integers as text, bytea in binary) and their types, and
 * the reading of an answer's values.  Everything here is bounded by
 * PG_MAXP parameters; a parameter past it is dropped, and the statement
 * then fails on its missing parameter, loudly.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <libpq-fe.h>

#include "pg_int.h"

void
pg_text(struct pg_params *p, const char *v)
{
	if (p->n >= PG_MAXP)
		return;
	p->v[p->n] = v;
	p->len[p->n] = 0;
	p->fmt[p->n] = 0;
	p->n++;
}

void
pg_int(struct pg_params *p, int64_t v)
{
	if (p->n >= PG_MAXP)
		return;
	snprintf(p->num[p->n], sizeof(p->num[p->n]), "%lld", (long long)v);
	pg_text(p, p->num[p->n]);
}

void
pg_bytes(struct pg_params *p, const void *v, size_t len)
{
	if (p->n >= PG_MAXP)
		return;
	p->v[p->n] = v != NULL ? v : "";
	p->len[p->n] = (int)len;
	p->fmt[p->n] = 1;
	p->n++;
}

void
pg_types(const char *spec, unsigned int *oids, int *n)
{
	int i;

	for (i = 0; spec[i] != '\0' && i < PG_MAXP; i++)
		oids[i] = spec[i] == 'i' ? 20 : spec[i] == 'b' ? 17 : 25;
	*n = i;
}

int64_t
pg_getint(const PGresult *res, int row, int col)
{
	if (PQgetisnull(res, row, col))
		return 0;
	return strtoll(PQgetvalue(res, row, col), NULL, 10);
}

const char *
pg_gettext(const PGresult *res, int row, int col)
{
	if (PQgetisnull(res, row, col))
		return NULL;
	return PQgetvalue(res, row, col);
}

long
pg_changes(const PGresult *res)
{
	return strtol(PQcmdTuples((PGresult *)(uintptr_t)res), NULL, 10);
}
