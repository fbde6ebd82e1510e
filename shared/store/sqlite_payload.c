/*
 * sqlite_payload.c -- SQLite: an event's payload in its table of its own,
 * written once when the event is new and read back by a claim.
 *
 * A payload up to SQ_PAYLOAD_STREAM bytes goes through the prepared
 * statements.  A larger one goes through SQLite's blob I/O, so that SQLite
 * never holds a copy of it: inserting a bound blob builds the whole record
 * in memory first, and reading a column copies it too.  Written, a large
 * payload is inserted as zeros and then written into its pages, which the
 * page cache spills to the log as it fills; read, it is copied straight
 * into the job's buffer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "ih.h"
#include "sqlite_int.h"

/* Writes the large payload of the new payloads row rowid in place. */
static int
payload_stream(struct sq *st, const struct event *ev, int64_t rowid,
    char *err, size_t errlen)
{
	sqlite3_blob *blob = NULL;
	int rc;

	rc = sqlite3_blob_open(st->db, "main", "payloads", "payload", rowid,
	    1, &blob);
	if (rc == SQLITE_OK)
		rc = sqlite3_blob_write(blob, ev->payload, (int)ev->payload_len,
		    0);
	if (rc != SQLITE_OK) {
		rc = sq_fail(st, rc, "cannot write payload", err, errlen);
		goto out;
	}
	rc = IH_OK;
out:
	if (blob != NULL && sqlite3_blob_close(blob) != SQLITE_OK &&
	    rc == IH_OK)
		rc = sq_fail(st, SQLITE_ERROR, "cannot write payload", err,
		    errlen);
	return rc;
}

int
sq_payload_put(struct sq *st, const struct event *ev, int64_t rowid,
    char *err, size_t errlen)
{
	sqlite3_stmt *s = sq_stmt(st, &st->record_payload, err, errlen);
	int big = ev->payload_len > SQ_PAYLOAD_STREAM, rc;

	if (s == NULL)
		return IH_ESTORE;
	sqlite3_bind_int64(s, 1, rowid);
	if (big)
		sqlite3_bind_zeroblob64(s, 2, (sqlite3_uint64)ev->payload_len);
	else
		sqlite3_bind_blob(s, 2, ev->payload_len ?
		    (const void *)ev->payload : "",
		    (int)ev->payload_len, SQLITE_STATIC);
	rc = sq_step_done(st, s, "cannot record payload", err, errlen);
	sqlite3_clear_bindings(s);
	if (rc == IH_OK && big)
		rc = payload_stream(st, ev, rowid, err, errlen);
	return rc;
}

/* Reads a large payload of len bytes straight into job->ev.payload. */
static int
payload_read(struct sq *st, struct store_job *job, int64_t len, char *err,
    size_t errlen)
{
	sqlite3_blob *blob = NULL;
	unsigned char *buf = NULL;
	int rc;

	rc = sqlite3_blob_open(st->db, "main", "payloads", "payload",
	    job->ev.rowid, 0, &blob);
	if (rc != SQLITE_OK) {
		rc = sq_fail(st, rc, "cannot read payload", err, errlen);
		goto out;
	}
	buf = malloc((size_t)len + 1);
	if (buf == NULL) {
		rc = IH_ENOMEM;
		goto out;
	}
	rc = sqlite3_blob_read(blob, buf, (int)len, 0);
	if (rc != SQLITE_OK) {
		rc = sq_fail(st, rc, "cannot read payload", err, errlen);
		goto out;
	}
	buf[len] = '\0';
	job->ev.payload = buf;
	job->ev.payload_len = (size_t)len;
	buf = NULL;
	rc = IH_OK;
out:
	if (blob != NULL)
		sqlite3_blob_close(blob);
	free(buf);
	return rc;
}

int
sq_payload_get(struct sq *st, struct store_job *job, int64_t len, char *err,
    size_t errlen)
{
	sqlite3_stmt *s = sq_stmt(st, &st->payload_get, err, errlen);
	const void *blob;
	unsigned char *buf;
	size_t n;
	int rc = IH_OK, step;

	if (s == NULL)
		return IH_ESTORE;
	/* Purged: the job runs without one, as before version 6. */
	if (len < 0)
		return IH_OK;
	if (len > SQ_PAYLOAD_STREAM && len < INT32_MAX)
		return payload_read(st, job, len, err, errlen);
	sqlite3_bind_int64(s, 1, job->ev.rowid);
	step = sqlite3_step(s);
	if (step == SQLITE_ROW) {
		blob = sqlite3_column_blob(s, 0);
		n = (size_t)sqlite3_column_bytes(s, 0);
		buf = malloc(n + 1);
		if (buf == NULL) {
			rc = IH_ENOMEM;
			goto out;
		}
		if (n > 0)
			memcpy(buf, blob, n);
		buf[n] = '\0';
		job->ev.payload = buf;
		job->ev.payload_len = n;
	} else if (step != SQLITE_DONE)
		rc = sq_fail(st, step, "cannot read payload", err, errlen);
out:
	sqlite3_reset(s);
	return rc;
}
