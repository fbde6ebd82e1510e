/*
 * api_session.c -- one provider's API session (api_session.h): the
 * credential, the calls, and the recorder the API modules share.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_http.h"
#include "api_limits.h"
#include "api_session.h"
#include "batch.h"
#include "cli_args.h"
#include "cli_text.h"
#include "clock.h"
#include "dispatch.h"
#include "headers.h"
#include "ih.h"
#include "ingest.h"
#include "json.h"
#include "log.h"
#include "processing.h"
#include "providers.h"
#include "store.h"
#include "verify.h"

/* The kept header line that marks an event recorded from the API. */
#define SOURCE_LINE	"Idemhook-Source: api\n"

int
catchup_open(struct catchup *cu, struct cli *c, size_t pi,
    const struct api_provider *ap)
{
	const char *def_base = ap->def_base;
	const struct provider *p = providers_all[pi];
	const char *v;
	char var[96], up[32];
	size_t i;
	int rc;

	memset(cu, 0, sizeof(*cu));
	cu->c = c;
	cu->p = p;
	for (i = 0; p->name[i] != '\0' && i < sizeof(up) - 1; i++)
		up[i] = (char)(p->name[i] >= 'a' && p->name[i] <= 'z' ?
		    p->name[i] - 'a' + 'A' : p->name[i]);
	up[i] = '\0';
	snprintf(var, sizeof(var), "IDEMHOOK_%s_API_BASE", up);
	v = cli_setting(c, var);
	snprintf(cu->base, sizeof(cu->base), "%s", v != NULL && *v != '\0' ?
	    v : def_base);
	/* No trailing slash: every path starts with one. */
	i = strlen(cu->base);
	while (i > 0 && cu->base[i - 1] == '/')
		cu->base[--i] = '\0';
	/* An account's own key, never the default account's (account.h). */
	snprintf(cu->key_var, sizeof(cu->key_var), "IDEMHOOK_%s_API_KEY%s%s",
	    up, c->account != NULL ? "@" : "", c->account != NULL ?
	    c->account : "");
	cu->key = cli_setting(c, cu->key_var);
	if (cu->key != NULL && *cu->key == '\0')
		cu->key = NULL;
	/* Another credential (GitHub's App) may stand in for the key. */
	v = ap->alt_cred != NULL ? cli_setting(c, ap->alt_cred) : NULL;
	if (cu->key == NULL && v != NULL && *v != '\0')
		cu->key = "";
	batch_writer_init(&cu->w, p, NULL);
	if (api_http_init(&cu->http) != IH_OK)
		return IH_ENOMEM;
	if (cli_config(c, pi, &cu->cfg) != IH_OK)
		return IH_ECONFIG;
	if (cu->key == NULL)
		return IH_ENOTFOUND;
	/* Shopify's has no default: the shop is part of it. */
	if (cu->base[0] != '\0' &&
	    api_http_url_ok(cu->base, cu->err, sizeof(cu->err)) != IH_OK) {
		cli_errorf("%s: IDEMHOOK_%s_API_BASE: %s", p->name, up,
		    cu->err);
		return IH_ECONFIG;
	}
	if (api_limits_read(c, &cu->http, cu->err, sizeof(cu->err)) !=
	    IH_OK) {
		cli_errorf("%s: %s", p->name, cu->err);
		return IH_ECONFIG;
	}
	rc = cli_store(c, &cu->st);
	return rc == IH_OK ? IH_OK : IH_ECONFIG;
}

void
catchup_close(struct catchup *cu)
{
	size_t i;

	for (i = 0; i < BATCH_MAX; i++) {
		if (cu->ins[i] == NULL)
			continue;
		/* The config is the command's, the body freed by flush. */
		memset(&cu->ins[i]->cfg, 0, sizeof(cu->ins[i]->cfg));
		cu->ins[i]->req.body = NULL;
		ingest_free(cu->ins[i]);
		free(cu->ins[i]);
		cu->ins[i] = NULL;
	}
	batch_writer_free(&cu->w);
	api_http_free(&cu->http);
}

void
catchup_progress(const struct catchup *cu)
{
	if (!cu->tty)
		return;
	fprintf(stderr, "\r%s: %ld page(s), %ld event(s), %ld missing, "
	    "%ld recorded ", cu->p->name, cu->pages, cu->seen, cu->missing,
	    cu->recorded);
	fflush(stderr);
}

int
catchup_call(struct catchup *cu, const char *method, const char *url,
    const char *auth_name, const char *auth_value,
    const char *const *headers, const char *body, struct api_resp *r)
{
	struct api_call call;

	memset(&call, 0, sizeof(call));
	call.method = method;
	call.url = url;
	call.auth_name = auth_name;
	call.auth_value = auth_value;
	call.headers = headers;
	call.body = body;
	call.body_len = body != NULL ? strlen(body) : 0;
	return api_http_call(&cu->http, &call, r, cu->err, sizeof(cu->err));
}

int
catchup_url(struct catchup *cu, char *url, size_t len, const char *fmt, ...)
{
	va_list ap;
	size_t n = strlen(cu->base);
	int m;

	if (n >= len)
		goto big;
	memcpy(url, cu->base, n + 1);
	va_start(ap, fmt);
	m = vsnprintf(url + n, len - n, fmt, ap);
	va_end(ap);
	if (m >= 0 && (size_t)m < len - n)
		return IH_OK;
big:
	snprintf(cu->err, sizeof(cu->err), "URL over %zu bytes", len);
	return IH_ETOOBIG;
}

int
catchup_refused(struct catchup *cu, const struct api_resp *r,
    const char *what)
{
	if (r->status == 401 || r->status == 403) {
		snprintf(cu->err, sizeof(cu->err), "%s: the API refused %s "
		    "(HTTP %ld): check it and its permissions", what,
		    cu->key_var, r->status);
		return IH_ECONFIG;
	}
	snprintf(cu->err, sizeof(cu->err), "%s: HTTP %ld", what, r->status);
	return IH_EIO;
}

/* The next free recording slot, set up for one event. */
static int
slot(struct catchup *cu, struct ingest **out)
{
	struct ingest *in = cu->ins[cu->nins];

	if (in == NULL) {
		in = calloc(1, sizeof(*in));
		if (in == NULL || ingest_init(in, cu->p, NULL) != IH_OK) {
			free(in);
			return IH_ENOMEM;
		}
		cu->ins[cu->nins] = in;
	}
	memcpy(&in->cfg, cu->cfg, sizeof(in->cfg));
	memset(&in->id, 0, sizeof(in->id));
	memset(&in->ev, 0, sizeof(in->ev));
	memset(&in->out, 0, sizeof(in->out));
	memset(&in->job, 0, sizeof(in->job));
	in->quarantine = NULL;
	in->same_action[0] = '\0';
	in->later = 0;
	in->deferred_len = 0;
	in->owner[0] = '\0';
	in->req.body = NULL;
	in->req.body_len = 0;
	*out = in;
	return IH_OK;
}

/* Forgets what slot() set up, the body included. */
static void
unslot(struct ingest *in)
{
	ingest_job_drop(in);
	free(in->req.body);
	in->req.body = NULL;
	in->req.body_len = 0;
	ident_free(&in->id);
	memset(&in->cfg, 0, sizeof(in->cfg));
	memset(&in->ev, 0, sizeof(in->ev));
}

static int
have_row(void *arg, const struct store_row *row)
{
	(void)arg;
	(void)row;
	return IH_OK;
}

int
catchup_have(struct catchup *cu, const char *event_id, int *found)
{
	char err[STORE_ERR_MAX];
	int rc;

	*found = 0;
	rc = store_show_account(cu->st, cu->p->name, cu->c->account,
	    event_id, have_row, NULL, err, sizeof(err));
	if (rc == IH_OK)
		*found = 1;
	else if (rc != IH_ENOTFOUND) {
		snprintf(cu->err, sizeof(cu->err), "%s", err);
		return IH_ESTORE;
	}
	return IH_OK;
}

/* The request's CGI variables: the headers catchup_offer() was given. */
static const char *
offer_param(void *arg, const char *name)
{
	const struct catchup *cu = arg;
	char cgi[HEADERS_CGI_NAME_MAX];
	size_t i;

	for (i = 0; cu->hdrs != NULL && cu->hdrs[i] != NULL &&
	    cu->hdrs[i + 1] != NULL; i += 2)
		if (headers_cgi_name(cu->hdrs[i], strlen(cu->hdrs[i]), cgi,
		    sizeof(cgi)) == IH_OK && strcmp(cgi, name) == 0)
			return cu->hdrs[i + 1];
	return NULL;
}

int
catchup_offer(struct catchup *cu, const char *body, size_t len,
    const char *const *hdrs, char *id, size_t idlen)
{
	struct provider_req pr;
	struct ingest *in;
	const char *why = "";
	size_t n;
	int rc, found;

	id[0] = '\0';
	cu->seen++;
	rc = slot(cu, &in);
	if (rc != IH_OK)
		return rc;
	in->req.body = malloc(len + 1);
	if (in->req.body == NULL)
		return IH_ENOMEM;
	memcpy(in->req.body, body, len);
	in->req.body[len] = '\0';
	in->req.body_len = len;
	cu->hdrs = hdrs;
	in->req.io.param = offer_param;
	in->req.io.arg = cu;
	in->req.method = "POST";
	memset(&pr, 0, sizeof(pr));
	pr.req = &in->req;
	pr.cfg = cu->cfg;
	pr.now = clock_wall_s();
	pr.json = in->json;
	rc = cu->p->identify(&pr, &in->id, &why);
	if (rc != IH_OK) {
		unslot(in);
		if (rc == IH_ENOMEM)
			return rc;
		cu->failed++;
		snprintf(cu->err, sizeof(cu->err), "an event the API listed "
		    "is unusable: %s", why);
		return IH_EBODY;
	}
	snprintf(id, idlen, "%s", in->id.event_id);
	rc = catchup_have(cu, in->id.event_id, &found);
	if (rc != IH_OK || found || cu->dry_run) {
		unslot(in);
		if (rc == IH_OK && !found)
			cu->missing++;
		return rc;
	}
	cu->missing++;
	if (verify_sha256_hex(in->req.body, len, in->fingerprint) != IH_OK) {
		unslot(in);
		return IH_ENOMEM;
	}
	n = 0;
	if (headers_keep(&in->req, cu->p->kept_headers, in->headers,
	    sizeof(in->headers) - sizeof(SOURCE_LINE)) == IH_OK)
		n = strlen(in->headers);
	memcpy(in->headers + n, SOURCE_LINE, sizeof(SOURCE_LINE));
	/* The caller's headers are read here only: none is kept. */
	cu->hdrs = NULL;
	in->ev.provider = cu->p->name;
	in->ev.account = cu->c->account;
	in->ev.event_id = in->id.event_id;
	in->ev.event_type = in->id.event_type;
	in->ev.subtype = in->id.subtype;
	in->ev.order_key = in->id.order_key;
	in->ev.payload = in->req.body;
	in->ev.payload_len = len;
	in->ev.headers = in->headers;
	in->ev.fingerprint = in->fingerprint;
	cu->nins++;
	if (cu->nins == BATCH_MAX)
		return catchup_flush(cu);
	return IH_OK;
}

int
catchup_flush(struct catchup *cu)
{
	const struct log_sink *sink;
	struct dispatch d;
	struct ingest *in;
	char owner[128], err[STORE_ERR_MAX];
	size_t i;
	long found;
	int later = 0, rc = IH_OK;

	if (cu->nins == 0)
		return IH_OK;
	batch_record(&cu->w, cu->ins, cu->nins);
	sink = log_dest_sink(&cu->w.logd, &log_stderr);
	dispatch_owner(owner, sizeof(owner));
	for (i = 0; i < cu->nins; i++) {
		in = cu->ins[i];
		/* Inline mode: the actions run here, as on a request thread. */
		batch_inline_run(&cu->w, in);
		if (strcmp(in->out.name, "accepted") == 0)
			cu->recorded++;
		else if (strcmp(in->out.name, "duplicate") == 0)
			cu->raced++;
		else {
			cu->failed++;
			snprintf(cu->err, sizeof(cu->err), "%s: %s",
			    in->out.name, in->out.detail);
			rc = IH_ESTORE;
		}
		/* The processing lines held while it was recorded. */
		ingest_write_deferred(in, sink);
		later |= in->later;
		if (in->later && in->job.ev.rowid > 0 &&
		    cu->w.slot.st != NULL) {
			/*
			 * Claimed in its insert: it runs now, as under CGI,
			 * and the job, which dispatch frees, takes the body.
			 */
			if (in->job.ev.payload == NULL) {
				in->job.ev.payload = in->req.body;
				in->job.ev.payload_len = in->req.body_len;
				in->req.body = NULL;
				in->req.body_len = 0;
			}
			d.st = cu->w.slot.st;
			d.p = cu->p;
			d.cfg = cu->cfg;
			d.owner = in->owner[0] != '\0' ? in->owner : owner;
			d.pause = NULL;
			d.log = sink;
			processing_here(&d, &in->job, 0);
		}
		unslot(in);
	}
	cu->nins = 0;
	if (later && cu->w.slot.st != NULL) {
		d.st = cu->w.slot.st;
		d.p = cu->p;
		d.cfg = cu->cfg;
		d.owner = owner;
		d.pause = NULL;
		d.log = sink;
		if (dispatch_drain(&d, 0, NULL, &found, err, sizeof(err)) !=
		    IH_OK) {
			snprintf(cu->err, sizeof(cu->err), "%s", err);
			rc = IH_ESTORE;
		}
	}
	catchup_progress(cu);
	return rc;
}

int
catchup_items(const char *body, size_t len, const char *array_path,
    const char *more_path, catchup_item_fn fn, void *arg, int *more)
{
	struct json_want w[1];
	struct json_span *spans = NULL;
	struct json *js = NULL;
	char *item = NULL;
	size_t i, n = 0, nw = 0;
	int rc;

	*more = 0;
	memset(w, 0, sizeof(w));
	if (more_path != NULL) {
		w[0].path = more_path;
		w[0].raw = JSON_WANT_BOOL;
		nw = 1;
	}
	spans = malloc(CATCHUP_PAGE_MAX * sizeof(*spans));
	rc = spans == NULL ? IH_ENOMEM : json_open(&js);
	/* One pass over the page, whatever the number of its items. */
	if (rc == IH_OK)
		rc = json_items(js, body, len, array_path, spans,
		    CATCHUP_PAGE_MAX, &n, w, nw, 0);
	if (rc == IH_ETOOBIG)
		cli_errorf("catch-up: a page of the answer lists more than "
		    "%d items: refused, nothing of it recorded",
		    CATCHUP_PAGE_MAX);
	if (rc == IH_OK && nw > 0)
		*more = w[0].val != NULL && strcmp(w[0].val, "true") == 0;
	for (i = 0; rc == IH_OK && i < n; i++) {
		item = malloc(spans[i].len + 1);
		if (item == NULL) {
			rc = IH_ENOMEM;
			break;
		}
		memcpy(item, body + spans[i].off, spans[i].len);
		item[spans[i].len] = '\0';
		rc = fn(arg, item, spans[i].len);
		free(item);
	}
	free(w[0].val);
	json_close(js);
	free(spans);
	return rc;
}

void
health_add(struct health *h, int problem, const char *fmt, ...)
{
	va_list ap;

	if (problem)
		h->problems++;
	if (h->n >= HEALTH_MAX)
		return;
	va_start(ap, fmt);
	vsnprintf(h->line[h->n], sizeof(h->line[h->n]), fmt, ap);
	va_end(ap);
	h->problem[h->n++] = problem;
}
