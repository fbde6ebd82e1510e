/*
 * cli_copy.c -- idemhook copy --to URI: the configured (SQLite) store's
 * events, attempts and effects, with their states, and its objects with
 * their history, into PostgreSQL.
 *
 * It reads the source a batch at a time, by row, outside any transaction
 * (WAL readers never block the receivers), and writes each batch in one
 * durable transaction of the destination.  It is idempotent: an event
 * already in the destination is not copied again (its attempts and
 * effects are, where missing), so a second run copies only what arrived
 * meanwhile; an event the source finished after an earlier run is
 * finished in the destination too, so it is never processed twice.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli_args.h"
#include "cli_copy.h"
#include "cli_text.h"
#include "clock.h"
#include "config.h"
#include "ih.h"
#include "redact.h"
#include "store.h"

#define COPY_BATCH	500

struct copy {
	struct store		*src;
	struct store		*dst;
	struct store_txn	*tx;
	int64_t			 last;		/* the source's last row read */
	long			 seen;		/* source events read */
	long			 events_added;
	long			 attempts_added;
	long			 effects_added;
	long			 objects_seen;
	long			 objects_added;
	long			 object_events_added;
	const struct store_object *obj;	/* the object being copied */
	int64_t			 dst_rowid;	/* the event being copied */
	char			 err[STORE_ERR_MAX];
};

static int
copy_attempt(void *arg, const struct store_attempt *a)
{
	struct copy *cp = arg;
	int added, rc;

	rc = store_copy_attempt(cp->dst, cp->tx, cp->dst_rowid, a, &added,
	    cp->err, sizeof(cp->err));
	cp->attempts_added += added;
	return rc;
}

static int
copy_effect(void *arg, const char *kind, int64_t created_at)
{
	struct copy *cp = arg;
	int added, rc;

	rc = store_copy_effect(cp->dst, cp->tx, cp->dst_rowid, kind,
	    created_at, &added, cp->err, sizeof(cp->err));
	cp->effects_added += added;
	return rc;
}

/* One source event, its attempts and effects, into the open batch. */
static int
copy_row(void *arg, const struct store_row *row)
{
	struct copy *cp = arg;
	int added, rc;

	cp->last = row->rowid;
	cp->seen++;
	rc = store_copy_put(cp->dst, cp->tx, row, &cp->dst_rowid, &added,
	    cp->err, sizeof(cp->err));
	if (rc != IH_OK)
		return rc;
	cp->events_added += added;
	rc = store_attempts(cp->src, row->rowid, copy_attempt, cp, cp->err,
	    sizeof(cp->err));
	if (rc == IH_OK)
		rc = store_effects(cp->src, row->rowid, copy_effect, cp,
		    cp->err, sizeof(cp->err));
	return rc;
}

static int
copy_object_event(void *arg, const struct store_object_event *e)
{
	struct copy *cp = arg;
	int added, rc;

	rc = store_copy_object_event(cp->dst, cp->tx, cp->obj, e, &added,
	    cp->err, sizeof(cp->err));
	cp->object_events_added += added;
	return rc;
}

/*
 * One source object and its history into the open transaction, which is
 * committed and opened anew every COPY_BATCH objects.
 */
static int
copy_object(void *arg, const struct store_object *o)
{
	struct copy *cp = arg;
	int added, rc;

	rc = store_copy_object(cp->dst, cp->tx, o, &added, cp->err,
	    sizeof(cp->err));
	if (rc != IH_OK)
		return rc;
	cp->objects_added += added;
	cp->obj = o;
	rc = store_object_history(cp->src, o->provider, o->account, o->kind,
	    o->object_id, copy_object_event, cp, cp->err, sizeof(cp->err));
	cp->obj = NULL;
	if (rc != IH_OK || ++cp->objects_seen % COPY_BATCH != 0)
		return rc;
	rc = store_commit(cp->tx, cp->err, sizeof(cp->err));
	cp->tx = NULL;
	if (rc == IH_OK)
		rc = store_begin(cp->dst, STORE_DURABLE, &cp->tx, cp->err,
		    sizeof(cp->err));
	return rc;
}

/* Every object of the source, after its events. */
static int
copy_objects(struct copy *cp, char *err, size_t errlen)
{
	struct store_object_filter f;
	int rc;

	memset(&f, 0, sizeof(f));
	cp->err[0] = '\0';
	rc = store_begin(cp->dst, STORE_DURABLE, &cp->tx, err, errlen);
	if (rc != IH_OK)
		return rc;
	rc = store_objects(cp->src, &f, copy_object, cp, err, errlen);
	if (rc == IH_OK && cp->tx != NULL)
		rc = store_commit(cp->tx, err, errlen);
	else {
		store_rollback(cp->tx);
		if (cp->err[0] != '\0')
			snprintf(err, errlen, "%s", cp->err);
	}
	cp->tx = NULL;
	return rc;
}

/* "rows done of total, rate, time left" on one terminal line. */
static void
progress(const struct copy *cp, int64_t total, int64_t t0)
{
	double el = clock_ms_since(t0) / 1e3;
	double rate = el > 0 ? (double)cp->seen / el : 0;
	double left = rate > 0 && total > cp->seen ?
	    (double)(total - cp->seen) / rate : 0;

	fprintf(stderr, "\rcopy: %ld of %lld events, %.0f/s, %.0f s left   ",
	    cp->seen, (long long)total, rate, left);
	fflush(stderr);
}

static void
copy_usage(FILE *f)
{
	fprintf(f, "usage: idemhook copy --to URI [--json]\n"
	    "Copies the configured store's events, attempts and effects, with "
	    "their\nstates, and its objects with their history, into the "
	    "PostgreSQL store at\nURI (created or migrated first).\n"
	    "Safe while the receivers write; run it again "
	    "to copy what arrived\nmeanwhile: nothing is copied twice. On a "
	    "terminal it shows progress; it\nends with a summary per table "
	    "(--json: the summary only, as JSON).\n"
	    "The password belongs in PGPASSFILE or the IDEMHOOK_CONFIG file "
	    "(never printed).\n"
	    "Exit: 0 copied; 1 a store failed; 2 usage.\n");
}

int
cli_copy(struct cli *c, int argc, char **argv)
{
	struct copy cp;
	struct store_opts o;
	const struct config *cfg;
	const char *to = NULL, *v;
	char shown[REDACT_URI_MAX], err[STORE_ERR_MAX];
	int64_t total = 0;
	int64_t t0;
	double secs;
	int a, r, json = 0, tty, rc, ret = CLI_EXIT_FAIL;

	memset(&cp, 0, sizeof(cp));
	for (a = 1; a < argc; a++) {
		r = cli_opt(argc, argv, &a, "--to", &v);
		if (r > 0) {
			to = v;
			continue;
		}
		if (r < 0)
			return CLI_EXIT_USAGE;
		if (strcmp(argv[a], "--json") == 0) {
			json = 1;
			continue;
		}
		if (strcmp(argv[a], "--help") == 0) {
			copy_usage(stdout);
			return CLI_EXIT_OK;
		}
		copy_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (to == NULL || config_db_check(to, err, sizeof(err)) != IH_OK ||
	    !store_is_postgres(to)) {
		if (to != NULL && !store_is_postgres(to))
			cli_errorf("copy: --to %s: the destination is a "
			    "postgresql:// URI", ih_redact(to, shown,
			    sizeof(shown)));
		else if (to != NULL)
			cli_errorf("copy: %s", err);
		copy_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (cli_config(c, 0, &cfg) != IH_OK || cli_store(c, &cp.src) != IH_OK)
		return CLI_EXIT_FAIL;
	o.path = to;
	o.durable_as = STORE_DURABLE;
	o.busy_timeout_ms = cfg->busy_timeout_ms;
	if (store_open(&o, &cp.dst, err, sizeof(err)) != IH_OK) {
		cli_errorf("copy: %s", err);
		return CLI_EXIT_FAIL;
	}
	if (store_copy_count(cp.src, &total, err, sizeof(err)) != IH_OK) {
		cli_errorf("copy: %s", err);
		goto out;
	}
	tty = !json && isatty(STDERR_FILENO);
	t0 = clock_mono_ns();
	for (;;) {
		long before = cp.seen;

		rc = store_begin(cp.dst, STORE_DURABLE, &cp.tx, err,
		    sizeof(err));
		if (rc != IH_OK) {
			cli_errorf("copy: %s", err);
			goto out;
		}
		rc = store_copy_read(cp.src, cp.last, COPY_BATCH, copy_row, &cp,
		    err, sizeof(err));
		if (rc == IH_OK)
			rc = store_commit(cp.tx, err, sizeof(err));
		else {
			store_rollback(cp.tx);
			if (cp.err[0] != '\0')
				snprintf(err, sizeof(err), "%s", cp.err);
		}
		cp.tx = NULL;
		if (rc != IH_OK) {
			if (tty)
				fputc('\n', stderr);
			cli_errorf("copy: %s (nothing of this batch was "
			    "copied; run it again)", err);
			goto out;
		}
		if (tty)
			progress(&cp, total, t0);
		if (cp.seen - before < COPY_BATCH)
			break;
	}
	if (tty)
		fputc('\n', stderr);
	rc = copy_objects(&cp, err, sizeof(err));
	if (rc != IH_OK) {
		cli_errorf("copy: objects: %s (run it again)", err);
		goto out;
	}
	secs = clock_ms_since(t0) / 1e3;
	if (json) {
		printf("{\"to\":");
		cli_put_json(stdout, ih_redact(to, shown, sizeof(shown)));
		printf(",\"events\":{\"read\":%ld,\"copied\":%ld,"
		    "\"already_there\":%ld},\"attempts\":{\"copied\":%ld},"
		    "\"effects\":{\"copied\":%ld},\"objects\":{\"read\":%ld,"
		    "\"copied\":%ld},\"object_events\":{\"copied\":%ld},"
		    "\"seconds\":%.3f}\n",
		    cp.seen, cp.events_added, cp.seen - cp.events_added,
		    cp.attempts_added, cp.effects_added, cp.objects_seen,
		    cp.objects_added, cp.object_events_added, secs);
	} else
		printf("copied into %s in %.1f s:\n"
		    "  events    %ld read, %ld copied, %ld already there\n"
		    "  attempts  %ld copied\n"
		    "  effects   %ld copied\n"
		    "  objects   %ld read, %ld copied (with %ld history "
		    "rows)\n",
		    ih_redact(to, shown, sizeof(shown)), secs, cp.seen,
		    cp.events_added, cp.seen - cp.events_added,
		    cp.attempts_added, cp.effects_added, cp.objects_seen,
		    cp.objects_added, cp.object_events_added);
	ret = CLI_EXIT_OK;
out:
	store_close(cp.dst);
	return ret;
}
