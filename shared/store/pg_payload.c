/*
 * pg_payload.c -- PostgreSQL: a claim's payload read back.
 *
 * A payload up to PG_PAYLOAD_STREAM bytes comes with the claim's row.  A
 * larger one is read in slices of that size straight into the job's
 * buffer: read whole, libpq would hold its hex text twice (the input
 * buffer and the result) before it is decoded, about five times the
 * payload in all.
 *
 * Written, a larger payload is sent in slices too: a statement's
 * parameters are copied whole into libpq's output buffer, a second copy
 * of the body.  The slices build a large object on the server, in the
 * same transaction; one INSERT then copies it into the payloads row and
 * the large object is dropped.  The server writes such a payload twice;
 * this process holds at most one slice beside the body.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "ih.h"
#include "pg_int.h"

/*
 * Copies one slice's answer r, in binary (the bytes themselves), into buf
 * at off; IH_ESTORE when it is not want bytes long.
 */
static int
slice_copy(PGresult *r, unsigned char *buf, int64_t off, int64_t want,
    char *err, size_t errlen)
{
	if (PQntuples(r) != 1 || PQgetisnull(r, 0, 0)) {
		snprintf(err, errlen, "cannot read payload: it went away");
		return IH_ESTORE;
	}
	if (PQgetlength(r, 0, 0) != want) {
		snprintf(err, errlen, "cannot read payload: it changed");
		return IH_ESTORE;
	}
	memcpy(buf + off, PQgetvalue(r, 0, 0), (size_t)want);
	return IH_OK;
}

int
pg_payload_read(struct pgs *st, int64_t rowid, int64_t len,
    unsigned char **out, size_t *outlen, char *err, size_t errlen)
{
	struct pg_params p;
	unsigned char *buf;
	PGresult *r;
	int64_t off, want;
	int rc = IH_OK;

	*out = NULL;
	buf = malloc((size_t)len + 1);
	if (buf == NULL)
		return IH_ENOMEM;
	for (off = 0; off < len && rc == IH_OK; off += want) {
		want = len - off < PG_PAYLOAD_STREAM ? len - off :
		    PG_PAYLOAD_STREAM;
		memset(&p, 0, sizeof(p));
		pg_int(&p, rowid);
		pg_int(&p, off + 1);
		pg_int(&p, want);
		/* In binary: no hex text twice the slice's size. */
		st->binary = 1;
		r = pg_exec_sql(st, "SELECT substring(payload FROM $2::int"
		    " FOR $3::int) FROM payloads WHERE event = $1", "iii", &p,
		    PGRES_TUPLES_OK, "cannot read payload", err, errlen);
		st->binary = 0;
		if (r == NULL) {
			rc = IH_ESTORE;
			break;
		}
		rc = slice_copy(r, buf, off, want, err, errlen);
		PQclear(r);
	}
	if (rc != IH_OK) {
		free(buf);
		return rc;
	}
	buf[len] = '\0';
	*out = buf;
	*outlen = (size_t)len;
	return IH_OK;
}

/* Runs sql on p for its one value (an oid); IH_OK with *oid set. */
static int
lo_step(struct pgs *st, const char *sql, const char *types,
    const struct pg_params *p, int64_t *oid, char *err, size_t errlen)
{
	PGresult *r;

	r = pg_exec_sql(st, sql, types, p, PGRES_TUPLES_OK,
	    "cannot write payload", err, errlen);
	if (r == NULL)
		return IH_ESTORE;
	if (oid != NULL)
		*oid = PQntuples(r) == 1 ? pg_getint(r, 0, 0) : 0;
	PQclear(r);
	return IH_OK;
}

int
pg_payload_write(struct pgs *st, int64_t rowid, const unsigned char *b,
    size_t len, char *err, size_t errlen)
{
	struct pg_params p;
	int64_t oid = 0;
	size_t off, n;
	int rc;

	n = len < PG_PAYLOAD_STREAM ? len : PG_PAYLOAD_STREAM;
	memset(&p, 0, sizeof(p));
	pg_bytes(&p, b, n);
	rc = lo_step(st, "SELECT lo_from_bytea(0, $1)", "b", &p, &oid, err,
	    errlen);
	for (off = n; rc == IH_OK && off < len; off += n) {
		n = len - off < PG_PAYLOAD_STREAM ? len - off :
		    PG_PAYLOAD_STREAM;
		memset(&p, 0, sizeof(p));
		pg_int(&p, oid);
		pg_int(&p, (int64_t)off);
		pg_bytes(&p, b + off, n);
		rc = lo_step(st, "SELECT lo_put($1::oid, $2, $3)", "iib", &p,
		    NULL, err, errlen);
	}
	if (rc != IH_OK)
		return rc;
	memset(&p, 0, sizeof(p));
	pg_int(&p, rowid);
	pg_int(&p, oid);
	rc = lo_step(st, "INSERT INTO payloads (event, payload)"
	    " SELECT $1, lo_get($2::oid) RETURNING 0", "ii", &p, NULL, err,
	    errlen);
	if (rc != IH_OK)
		return rc;
	memset(&p, 0, sizeof(p));
	pg_int(&p, oid);
	return lo_step(st, "SELECT lo_unlink($1::oid)", "i", &p, NULL, err,
	    errlen);
}
