/* batch.c -- group commit: many deliveries, one durable transaction. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "clock.h"
#include "config.h"
#include "dispatch.h"
#include "fault.h"
#include "forward.h"
#include "ih.h"
#include "ingest.h"
#include "log.h"
#include "processing.h"
#include "provider.h"
#include "redact.h"
#include "settings.h"
#include "store.h"
#include "store_many.h"

/* What recording one delivery came to inside the transaction. */
struct rec {
	int			 rc;		/* IH_OK, or its own failure */
	struct store_result	 res;
	int			 replay;
	int			 held;	/* a repeat, held (hold_replays) */
	int			 full;	/* past BATCH_HELD_SAME_MAX */
	int			 within; /* processed in the transaction */
	char			 detail[STORE_ERR_MAX + 64];
};

void
batch_writer_init(struct batch_writer *w, const struct provider *p,
    struct processing *proc)
{
	memset(w, 0, sizeof(*w));
	w->p = p;
	w->proc = proc;
	log_dest_init(&w->logd);
}

/*
 * A lease holder per transaction, as dispatch_owner() names one, made
 * without its three system calls (uname, getpid, getrandom) after the
 * first: the same host:pid, and a number that each transaction counts
 * on from the first one's random suffix.
 */
static void
writer_owner(struct batch_writer *w, char *owner, size_t len)
{
	char *colon;

	if (w->owner_base[0] == '\0') {
		dispatch_owner(w->owner_base, sizeof(w->owner_base));
		colon = strrchr(w->owner_base, ':');
		if (colon == NULL) {
			w->owner_base[0] = '\0';
			dispatch_owner(owner, len);
			return;
		}
		*colon = '\0';
		w->owner_seq = strtoul(colon + 1, NULL, 16);
	}
	w->owner_seq = (w->owner_seq + 1) & 0xffffffffUL;
	snprintf(owner, len, "%s:%08lx", w->owner_base, w->owner_seq);
}

void
batch_writer_free(struct batch_writer *w)
{
	settings_store_close(&w->slot);
	log_dest_close(&w->logd);
}

/* The process's forwarding state: its processing thread's, shared. */
static struct forward_pause *
writer_pause(struct batch_writer *w)
{
	return w->proc != NULL ? &w->proc->pause : &w->pause;
}

static void
dispatch_for(struct batch_writer *w, const struct config *cfg,
    const char *owner, struct dispatch *d)
{
	d->st = w->slot.st;
	d->p = w->p;
	d->cfg = cfg;
	d->owner = owner;
	d->log = log_dest_sink(&w->logd, &log_stderr);
	d->pause = writer_pause(w);
}

/* Opens the store the delivery's settings name; else answers why not. */
static int
open_store(struct batch_writer *w, struct ingest *in)
{
	char err[STORE_ERR_MAX];
	int rc;

	/* The writer's copy of IDEMHOOK_LOG; ingest reports a bad one. */
	(void)log_dest_set(&w->logd, in->cfg.log, err, sizeof(err));
	rc = settings_store(&w->slot, &in->cfg, err, sizeof(err));
	if (rc != IH_OK)
		outcome_set(&in->out, rc == IH_ECONFIG ? 500 : 503,
		    rc == IH_ECONFIG ? "bad_store" : "store_unavailable", err);
	/* Which store events go to, whenever that changes: one line. */
	if (rc == IH_OK && w->slot.opened) {
		w->slot.opened = 0;
		log_emit(ingest_deferred(in), "provider=%s "
		    "store=%s settings_file=%s", w->p->name,
		    ih_redact(in->cfg.db_path, err, sizeof(err)),
		    in->file_path[0] != '\0' ? in->file_path : "none");
	}
	return rc;
}

/*
 * Inside tx: is in's event the body of an earlier event under a new id,
 * as its provider never sends it (a provider whose id and type are
 * unsigned headers)?  A provider that holds such repeats (provider.h,
 * hold_replays) has it recorded held, with the reason in r->detail,
 * which in's event points at until it is recorded.
 */
static int
replay_check(struct batch_writer *w, struct store_txn *tx,
    struct ingest *in, struct rec *r, char *err, size_t errlen)
{
	struct store_first first;
	const char *why = "under another type";
	int found, rc;

	r->replay = 0;
	if (!in->p->type_unsigned)
		return IH_OK;
	rc = store_replay_of(w->slot.st, tx, &in->ev,
	    in->same_action[0] != '\0' ? in->same_action : NULL, &found,
	    &first, err, errlen);
	if (rc != IH_OK || !found)
		return rc;
	if (in->p->repeat_ok != NULL)
		r->replay = !in->p->repeat_ok(&first, &in->ev, &why);
	else
		r->replay = strcmp(first.event_type, in->ev.event_type) != 0;
	if (r->replay && in->p->hold_replays &&
	    first.held >= BATCH_HELD_SAME_MAX) {
		/* Stored nowhere and refused: a captured body's flood. */
		snprintf(r->detail, sizeof(r->detail), "%lld events with the "
		    "body of %.64s event %.128s are held already: release "
		    "them (idemhook catch-up, replay) for more",
		    (long long)first.held, first.event_type, first.event_id);
		r->replay = 0;
		r->full = 1;
	} else if (r->replay && in->p->hold_replays) {
		snprintf(r->detail, sizeof(r->detail), "same body as %.96s "
		    "event %.160s, %s", first.event_type, first.event_id,
		    why);
		r->replay = 0;
		r->held = 1;
		in->ev.status = "held";
		in->ev.held_why = r->detail;
	} else if (r->replay)
		snprintf(r->detail, sizeof(r->detail), "body already recorded"
		    " as %.96s event %.160s; %s", first.event_type,
		    first.event_id, why);
	return IH_OK;
}

/* A replay is recorded nowhere, runs nothing, and is answered 200. */
static void
answer_replay(struct ingest *in, const char *detail)
{
	outcome_set(&in->out, 200, "replayed", detail);
}

/*
 * Must in's event be claimed after its insert, by the store's search
 * (an object's order, a forwarding destination's hold: store_dest.h)?
 */
static int
claim_searched(const struct ingest *in)
{
	return in->ev.order_key != NULL ||
	    forward_dest(&in->cfg, in->ev.account) != NULL;
}

/*
 * Inside tx: records in's event, claims it when asked (in the insert,
 * unless claim_searched()), and returns the store's code.  within: its
 * switch follows in tx (store_record_done()).
 */
static int
record_claim(struct batch_writer *w, struct store_txn *tx, struct ingest *in,
    int claim, int within, const char *owner, struct store_result *res,
    char *err, size_t errlen)
{
	int64_t lease_ms = (int64_t)in->cfg.lease_s * 1000;
	int found, rc;

	if (claim && within && !claim_searched(in))
		return store_record_done(w->slot.st, tx, &in->ev,
		    clock_wall_ms(), owner, lease_ms, res, &in->job, err,
		    errlen);
	if (claim && !claim_searched(in))
		return store_record_claim(w->slot.st, tx, &in->ev,
		    clock_wall_ms(), owner, lease_ms, res, &in->job, err,
		    errlen);
	/* The destination's row first, then the insert (forward_sync()). */
	rc = claim && forward_dest(&in->cfg, in->ev.account) != NULL ?
	    forward_sync(w->slot.st, tx, &in->cfg, in->p->name,
	    writer_pause(w), ingest_deferred(in), err, errlen) : IH_OK;
	if (rc == IH_OK)
		rc = store_record(w->slot.st, tx, &in->ev, clock_wall_ms(),
		    res, err, errlen);
	if (rc == IH_OK && claim && !res->duplicate)
		rc = forward_claim(w->slot.st, tx, &in->cfg, in->p->name,
		    writer_pause(w), ingest_deferred(in), res->rowid, 1, owner,
		    &in->job, &found, err, errlen);
	return rc;
}

/*
 * Which of in's work happens in the transaction: *after, processed after
 * the answer; *within, by the switch inside the transaction; *claim,
 * claimed in it.  Quarantined and held events are recorded, never
 * claimed; nor is a thin one, which only idemhook work can fetch
 * (store_thin.h).  A last attempt may alert: that runs outside the
 * transaction, so an event with actions is not processed within.
 */
static void
plan(const struct ingest *in, int claim_free, int *after, int *within,
    int *claim)
{
	*after = in->cfg.mode == CONFIG_MODE_AFTER_RESPONSE &&
	    in->ev.status == NULL && !in->ev.needs_fetch;
	*within = *after && in->cfg.max_attempts > 1 &&
	    in->ev.payload_len <= BATCH_WITHIN_MAX &&
	    !dispatch_has_actions(&in->cfg, in->ev.event_type);
	*claim = *after && (*within || claim_free);
}

/*
 * Inside tx, once in's new event is recorded (and claimed when in->job
 * has its row): the switch within the transaction, or the hand-over to
 * processing after the answer.  sp: the switch in a savepoint of its own
 * (dispatch_within()); else a failed switch fails the call, for the
 * caller to undo.
 */
static int
after_record(struct batch_writer *w, struct store_txn *tx, struct ingest *in,
    struct rec *r, int within, int sp, int *claim_free, const char *owner,
    char *err, size_t errlen)
{
	struct dispatch d;
	int done = 0, rc = IH_OK;

	if (in->job.ev.rowid > 0 && within) {
		/* The bytes are in memory: the switch reads them there. */
		ingest_job_borrow(in);
		dispatch_for(w, &in->cfg, owner, &d);
		d.log = ingest_deferred(in);
		rc = dispatch_within(&d, tx, &in->job, sp, &done, err, errlen);
		r->within = rc == IH_OK && done;
		/* A failed switch leaves the event due: a drain takes it. */
		in->later = rc == IH_OK && !done;
		/* A done job is kept for its log line after the commit. */
		if (!r->within)
			ingest_job_drop(in);
	} else if (in->job.ev.rowid > 0) {
		*claim_free = 0;
		in->later = 1;
		snprintf(in->owner, sizeof(in->owner), "%s", owner);
	} else
		/* Recorded unclaimed: the processing thread drains it. */
		in->later = 1;
	/* A plain CGI program drains due events after every new one. */
	if (w->proc == NULL)
		in->later = 1;
	return rc;
}

/* Forgets what recording in did in a transaction rolled back. */
static void
unrecord(struct ingest *in, struct rec *r)
{
	in->deferred_len = 0;
	ingest_job_drop(in);
	in->later = 0;
	r->within = 0;
}

/* Undone, to be done again: no switch's line is logged twice. */
static void
unrecord_many(struct ingest **ins, size_t n, struct rec *recs,
    const size_t *kept)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unrecord(ins[i], &recs[i]);
		ins[i]->deferred_len = kept[i];
	}
}

/*
 * Inside tx, in a savepoint of its own: one delivery.  Returns IH_OK
 * (r->rc says how the delivery itself went) or IH_ESTORE when the
 * transaction itself failed.
 */
static int
record_one(struct batch_writer *w, struct store_txn *tx, struct ingest *in,
    struct rec *r, int *claim_free, const char *owner)
{
	char err[STORE_ERR_MAX];
	int after, within, claim, rc;

	memset(r, 0, sizeof(*r));
	rc = store_savepoint(tx, STORE_SP_OPEN, r->detail, sizeof(r->detail));
	if (rc != IH_OK)
		return rc;
	rc = replay_check(w, tx, in, r, err, sizeof(err));
	if (rc != IH_OK || r->replay || r->full)
		goto end;
	plan(in, *claim_free, &after, &within, &claim);
	rc = record_claim(w, tx, in, claim, within, owner, &r->res, err,
	    sizeof(err));
	if (rc != IH_OK || r->res.duplicate || !after)
		goto end;
	rc = after_record(w, tx, in, r, within, 1, claim_free, owner, err,
	    sizeof(err));
end:
	if (rc == IH_OK)
		return store_savepoint(tx, STORE_SP_KEEP, r->detail,
		    sizeof(r->detail));
	r->rc = rc;
	snprintf(r->detail, sizeof(r->detail), "%s", err);
	unrecord(in, r);
	return store_savepoint(tx, STORE_SP_UNDO, err, sizeof(err));
}

/*
 * Can the run's inserts go together (record_many)?  Where the store
 * cannot, or an event needs the answer of one before the next (a replay
 * check, a claim by order key, a held event replaced), or the leases
 * differ, no.
 */
static int
many_ok(struct batch_writer *w, struct ingest **ins, size_t n,
    int claim_free)
{
	int after, within, claim;
	size_t i;

	if (!store_record_many_ok(w->slot.st) || w->p->type_unsigned)
		return 0;
	for (i = 0; i < n; i++) {
		plan(ins[i], claim_free, &after, &within, &claim);
		if ((claim && claim_searched(ins[i])) ||
		    ins[i]->ev.replaces_held ||
		    ins[i]->cfg.lease_s != ins[0]->cfg.lease_s)
			return 0;
	}
	return 1;
}

/*
 * Inside tx: the inserts of the whole run sent together, with one wait
 * for all their answers on PostgreSQL, then each event's switch.  No
 * savepoint each, the switch's neither: any failure (a switch's too)
 * answers it, and the caller rolls back and records the run again one
 * event at a time (record_one()), where a bad event fails alone.
 */
static int
record_many(struct batch_writer *w, struct store_txn *tx, struct ingest **ins,
    size_t n, struct rec *recs, int claim_free,
    const char *owner, char *err, size_t errlen)
{
	const struct event *evs[BATCH_MAX];
	const char *owners[BATCH_MAX];
	struct store_result res[BATCH_MAX];
	struct store_job *jobs[BATCH_MAX];
	int after[BATCH_MAX], within[BATCH_MAX], done[BATCH_MAX], claim, rc;
	size_t i;

	for (i = 0; i < n; i++) {
		memset(&recs[i], 0, sizeof(recs[i]));
		plan(ins[i], claim_free, &after[i], &within[i], &claim);
		/*
		 * As record_one() would, taking each event for new: a
		 * duplicate leaves the next one unclaimed, for the processing
		 * thread, where it might have been claimed.
		 */
		if (claim && !within[i])
			claim_free = 0;
		evs[i] = &ins[i]->ev;
		owners[i] = claim ? owner : NULL;
		/* Its switch follows in tx, as record_claim()'s within. */
		done[i] = claim && within[i];
		jobs[i] = &ins[i]->job;
	}
	rc = store_record_done_many(w->slot.st, tx, evs, n, clock_wall_ms(),
	    owners, done, (int64_t)ins[0]->cfg.lease_s * 1000, res, jobs, err,
	    errlen);
	for (i = 0; rc == IH_OK && i < n; i++) {
		recs[i].res = res[i];
		if (!res[i].duplicate && after[i])
			rc = after_record(w, tx, ins[i], &recs[i], within[i],
			    0, &claim_free, owner, err, errlen);
	}
	return rc;
}

/* The answer for a delivery recorded in a committed transaction. */
static void
answer_of(struct ingest *in, const struct rec *r)
{
	char held[sizeof(r->detail) + 8];

	if (r->rc != IH_OK)
		outcome_set(&in->out, 503, "store_unavailable", r->detail);
	else if (r->full)
		/* Not recorded, so never 2xx: a retry may find room. */
		outcome_set(&in->out, 503, "held_full", r->detail);
	else if (r->replay)
		/* The bytes are durably stored under the earlier event. */
		answer_replay(in, r->detail);
	else if (r->held && !r->res.duplicate) {
		/* Recorded, so answered 2xx; it runs once released. */
		snprintf(held, sizeof(held), "held: %s", r->detail);
		outcome_set(&in->out, 200, "accepted", held);
	} else if (in->quarantine != NULL)
		outcome_set(&in->out, 200, r->res.duplicate ? "duplicate" :
		    "quarantined", in->quarantine);
	else if (in->ev.status != NULL && !r->res.duplicate)
		/* Held: an answer as any other, a log line that says so. */
		outcome_set(&in->out, 200, "accepted",
		    "held: its API version is not in the expected list");
	else if (in->ev.needs_fetch && !r->res.duplicate)
		outcome_set(&in->out, 200, "accepted",
		    "thin: idemhook work fetches the full event");
	else
		outcome_set(&in->out, 200, r->res.duplicate ? "duplicate" :
		    "accepted", "");
}

/* Records deliveries that share one store, in one transaction. */
static void
record_run(struct batch_writer *w, struct ingest **ins, size_t n)
{
	struct rec recs[BATCH_MAX];
	struct store_txn *tx = NULL;
	struct dispatch d;
	char owner[128], err[STORE_ERR_MAX];
	size_t kept[BATCH_MAX], i;
	int claim_free, many, rc;

	if (open_store(w, ins[0]) != IH_OK) {
		for (i = 1; i < n; i++)
			ins[i]->out = ins[0]->out;
		return;
	}
	/* A lease holder per transaction: a batch never mistakes another's. */
	writer_owner(w, owner, sizeof(owner));
	claim_free = w->proc == NULL ? !w->no_claim :
	    processing_idle(w->proc);
	fault_point("before-commit");
	many = many_ok(w, ins, n, claim_free);
	rc = many ? store_begin_many(w->slot.st, STORE_DURABLE, &tx, err,
	    sizeof(err)) : store_begin(w->slot.st, STORE_DURABLE, &tx, err,
	    sizeof(err));
	many = many && rc == IH_OK;
	for (i = 0; i < n; i++)
		/* Lines from before the run (the store's) stay. */
		kept[i] = ins[i]->deferred_len;
	for (;;) {
		if (many)
			rc = record_many(w, tx, ins, n, recs, claim_free, owner,
			    err, sizeof(err));
		for (i = 0; rc == IH_OK && !many && i < n; i++) {
			rc = record_one(w, tx, ins[i], &recs[i], &claim_free,
			    owner);
			if (rc != IH_OK)
				snprintf(err, sizeof(err), "%s",
				    recs[i].detail);
		}
		if (rc == IH_OK)
			rc = store_commit(tx, err, sizeof(err));
		else
			store_rollback(tx);
		if (rc == IH_OK || !many)
			break;
		/*
		 * Anew, one at a time, a savepoint each: a bad event must not
		 * fail the others, whether an insert or a switch failed in
		 * the run or PostgreSQL said a deferred write's refusal (a
		 * switch's) at the commit.
		 */
		unrecord_many(ins, n, recs, kept);
		many = 0;
		rc = store_begin(w->slot.st, STORE_DURABLE, &tx, err,
		    sizeof(err));
	}
	if (rc != IH_OK) {
		/* Nothing of the transaction is kept: no answer is 2xx. */
		for (i = 0; i < n; i++) {
			ingest_job_drop(ins[i]);
			ins[i]->later = 0;
			ins[i]->deferred_len = 0;
			outcome_set(&ins[i]->out, 503, "store_unavailable",
			    err);
		}
		return;
	}
	fault_point("after-commit");
	for (i = 0; i < n; i++) {
		answer_of(ins[i], &recs[i]);
		if (recs[i].within) {
			dispatch_for(w, &ins[i]->cfg, owner, &d);
			d.log = ingest_deferred(ins[i]);
			dispatch_within_done(&d, &ins[i]->job);
			ingest_job_drop(ins[i]);
		}
	}
}

/*
 * Inline mode, in the writer: record and claim in one durable commit.
 * The actions then run on the request's own thread (batch_inline_run()),
 * so that they hold up no other delivery; in->inline_run says so, and
 * in->out already holds the answer they give when they succeed.
 */
static void
record_inline(struct batch_writer *w, struct ingest *in)
{
	struct store_txn *tx = NULL;
	struct rec r;
	char owner[128], err[STORE_ERR_MAX];
	int found = 1, rc;

	if (open_store(w, in) != IH_OK)
		return;
	writer_owner(w, owner, sizeof(owner));
	memset(&r, 0, sizeof(r));
	fault_point("before-commit");
	rc = store_begin(w->slot.st, STORE_DURABLE, &tx, err, sizeof(err));
	if (rc == IH_OK)
		rc = replay_check(w, tx, in, &r, err, sizeof(err));
	/* A held repeat is recorded, never claimed. */
	if (rc == IH_OK && !r.replay && !r.full)
		rc = record_claim(w, tx, in, !r.held, 0, owner, &r.res, err,
		    sizeof(err));
	if (rc == IH_OK && !r.replay && !r.full)
		rc = store_commit(tx, err, sizeof(err));
	else
		store_rollback(tx);
	if (rc == IH_OK && r.replay) {
		answer_replay(in, r.detail);
		return;
	}
	if (rc == IH_OK && (r.held || r.full)) {
		answer_of(in, &r);
		return;
	}
	if (rc == IH_OK && r.res.duplicate &&
	    strcmp(r.res.status, "processing") == 0)
		/* Taken over only when its holder died (lease expired). */
		rc = store_claim(w->slot.st, NULL, in->p->name, r.res.rowid,
		    owner, clock_wall_ms(), (int64_t)in->cfg.lease_s * 1000,
		    &in->job, &found, err, sizeof(err));
	else if (rc == IH_OK && r.res.duplicate) {
		outcome_set(&in->out, 200, "duplicate", "");
		return;
	}
	if (rc != IH_OK) {
		ingest_job_drop(in);
		outcome_set(&in->out, 503, "store_unavailable", err);
		return;
	}
	fault_point("after-commit");
	/*
	 * Recorded but held back by its object or its destination: it is
	 * processed later, and the provider's retry is a duplicate.
	 */
	if (!r.res.duplicate && in->job.ev.rowid <= 0)
		found = 0;
	if (!found) {
		outcome_set(&in->out, 503, "in_progress", "being processed");
		return;
	}
	ingest_job_borrow(in);
	snprintf(in->owner, sizeof(in->owner), "%s", owner);
	in->inline_run = 1;
	outcome_set(&in->out, 200, r.res.duplicate ? "duplicate" :
	    "accepted", "");
}

/*
 * Inline mode, on the request's thread, with w's connection: runs the
 * actions and the switch of the job record_inline() claimed, with no
 * transaction open while the actions run.  A failure deletes the record
 * and answers 500, so the provider's retry starts afresh; a redelivery
 * while the event is being processed is answered 503, never 200 before
 * it is done.
 */
void
batch_inline_run(struct batch_writer *w, struct ingest *in)
{
	struct dispatch d;
	char err[STORE_ERR_MAX];
	int rc;

	if (!in->inline_run)
		return;
	in->inline_run = 0;
	if (open_store(w, in) != IH_OK) {
		/* The claim waits for its lease to expire. */
		ingest_job_drop(in);
		return;
	}
	/* The writer's connection has the process's queue timer. */
	if (w->side)
		store_no_queue(w->slot.st);
	dispatch_for(w, &in->cfg, in->owner, &d);
	rc = dispatch_inline(&d, &in->job, err, sizeof(err));
	/* The payload is the request's buffer, kept for its next request. */
	ingest_job_drop(in);
	if (rc == IH_ENOTFOUND)
		outcome_set(&in->out, 503, "in_progress", err);
	else if (rc == IH_ESTORE)
		outcome_set(&in->out, 503, "store_unavailable", err);
	else if (rc != IH_OK)
		outcome_set(&in->out, 500, "processing_failed", err);
}

/* Do a and b record into the same store, with the same settings? */
static int
same_store(const struct ingest *a, const struct ingest *b)
{
	return strcmp(a->cfg.db_path, b->cfg.db_path) == 0 &&
	    a->cfg.synchronous == b->cfg.synchronous &&
	    a->cfg.busy_timeout_ms == b->cfg.busy_timeout_ms;
}

static int
is_inline(const struct ingest *in)
{
	return in->cfg.mode == CONFIG_MODE_INLINE && in->ev.status == NULL &&
	    !in->ev.needs_fetch;
}

void
batch_record(struct batch_writer *w, struct ingest **ins, size_t n)
{
	size_t i = 0, j;

	while (i < n) {
		if (is_inline(ins[i])) {
			record_inline(w, ins[i]);
			i++;
			continue;
		}
		for (j = i + 1; j < n && !is_inline(ins[j]) &&
		    same_store(ins[i], ins[j]); j++)
			;
		record_run(w, ins + i, j - i);
		i = j;
	}
}
