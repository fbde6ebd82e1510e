/* thin_fetch.c -- idemhook work's fetch of Stripe's thin events. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "account.h"
#include "api_common.h"
#include "api_http.h"
#include "cli_text.h"
#include "clock.h"
#include "config.h"
#include "config_vars.h"
#include "dispatch.h"
#include "ih.h"
#include "idemhook.h"
#include "json.h"
#include "log.h"
#include "store.h"
#include "store_thin.h"
#include "stripe.h"
#include "thin_fetch.h"

#define THIN_DEF_BASE	"https://api.stripe.com"
/*
 * The Stripe-Version of the v2 call (the thin event is unversioned, but
 * Stripe's SDKs always send one, and the v2 API is documented from this
 * one on), and of the related object's when IDEMHOOK_STRIPE_API_VERSIONS
 * names none.
 */
#define THIN_DEF_VERSION	STRIPE_V2_VERSION
/* The "no key" line at most this often. */
#define THIN_WARN_MS	60000
/*
 * Stripe's test of a destination: its related object is the destination
 * itself, which a key with read access to events alone may not read, and
 * which no switch needs.
 */
#define THIN_PING	"v2.core.event_destination.ping"
/* The kept headers of a fetched event: it came from the API. */
#define THIN_SOURCE_LINE	"Idemhook-Source: api\n"

/* A Stripe-Context or an API path: letters, digits and "_-./" only. */
static int
thin_word_ok(const char *s, int path)
{
	size_t i;

	if (s == NULL || *s == '\0' || strlen(s) > 512)
		return 0;
	if (path && (strncmp(s, "/v1/", 4) != 0 && strncmp(s, "/v2/", 4) != 0))
		return 0;
	if (path && strstr(s, "..") != NULL)
		return 0;
	for (i = 0; s[i] != '\0'; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') ||
		    (s[i] >= 'A' && s[i] <= 'Z') ||
		    (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		    s[i] == '-' || s[i] == '.' || (path && s[i] == '/')))
			return 0;
	return 1;
}

/* Whether vars set an account's key, IDEMHOOK_STRIPE_API_KEY@name. */
static int
thin_account_key(const struct config_vars *vars)
{
	static const char name[] = "IDEMHOOK_STRIPE_API_KEY@";
	size_t i;

	for (i = 0; i < vars->n; i++)
		if (strncmp(vars->names[i], name, sizeof(name) - 1) == 0 &&
		    account_name_ok(vars->names[i] + sizeof(name) - 1) &&
		    vars->values[i][0] != '\0')
			return 1;
	return 0;
}

/*
 * The key of the job's account into *key (NULL when unset; an account's
 * own only, never the default account's) and the version its related
 * object is fetched in into ver; the key's setting's name into var.
 */
static void
thin_account(struct thin_fetch *tf, const char *account, const char **key,
    char *ver, size_t verlen, char *var, size_t varlen)
{
	char name[96];
	const char *v;
	size_t n;

	snprintf(ver, verlen, "%s", tf->version);
	if (account == NULL || strcmp(account, ACCOUNT_DEFAULT) == 0) {
		snprintf(var, varlen, "IDEMHOOK_STRIPE_API_KEY");
		*key = tf->key;
		return;
	}
	snprintf(var, varlen, "IDEMHOOK_STRIPE_API_KEY@%s", account);
	v = cli_setting(tf->c, var);
	*key = v != NULL && *v != '\0' ? v : NULL;
	/* The account's expected version, as the receivers read it. */
	snprintf(name, sizeof(name), "IDEMHOOK_STRIPE_API_VERSIONS@%s",
	    account);
	v = cli_setting(tf->c, name);
	n = v != NULL ? api_list_word(&v) : 0;
	if (n > 0 && n < verlen) {
		memcpy(ver, v, n);
		ver[n] = '\0';
	}
}

int
thin_fetch_open(struct thin_fetch *tf, struct cli *c)
{
	const char *v, *w;
	size_t i, n;

	memset(tf, 0, sizeof(*tf));
	if (api_http_init(&tf->http) != IH_OK)
		return IH_ENOMEM;
	/*
	 * Two calls per attempt, each renewing the lease first: keep one
	 * call short of the default lease (300 s), retries included.
	 */
	tf->http.timeout_s = 20;
	tf->http.max_tries = 3;
	tf->http.wait_max_s = 10;
	v = cli_setting(c, "IDEMHOOK_STRIPE_API_BASE");
	snprintf(tf->base, sizeof(tf->base), "%s",
	    v != NULL && *v != '\0' ? v : THIN_DEF_BASE);
	i = strlen(tf->base);
	while (i > 0 && tf->base[i - 1] == '/')
		tf->base[--i] = '\0';
	snprintf(tf->version, sizeof(tf->version), "%s", THIN_DEF_VERSION);
	/* The version the switch expects: the related object comes in it. */
	v = cli_setting(c, "IDEMHOOK_STRIPE_API_VERSIONS");
	n = v != NULL ? api_list_word(&v) : 0;
	if (n > 0 && n < sizeof(tf->version)) {
		memcpy(tf->version, v, n);
		tf->version[n] = '\0';
	}
	tf->c = c;
	w = cli_setting(c, "IDEMHOOK_STRIPE_API_KEY");
	tf->key = w != NULL && *w != '\0' ? w : NULL;
	tf->any_key = tf->key != NULL || thin_account_key(&c->env) ||
	    thin_account_key(&c->file);
	if (!tf->any_key)
		return IH_OK;
	if (api_http_url_ok(tf->base, NULL, 0) != IH_OK ||
	    !thin_word_ok(tf->version, 0)) {
		cli_errorf("IDEMHOOK_STRIPE_API_BASE or "
		    "IDEMHOOK_STRIPE_API_VERSIONS is not usable for the fetch "
		    "of thin events");
		return IH_ECONFIG;
	}
	return IH_OK;
}

void
thin_fetch_close(struct thin_fetch *tf)
{
	dispatch_set_fetch(NULL, NULL);
	api_http_free(&tf->http);
}

/*
 * GET base+path with the key, the version and the event's context.
 * IH_OK with *r filled on 200; IH_ENOTFOUND on 404; IH_EIO with the
 * reason in why otherwise (never the answer's body: it may echo the key).
 */
static int
thin_get(struct thin_fetch *tf, const char *key, const char *var,
    const char *path, const char *version, const char *context,
    struct api_resp *r, char *why, size_t whylen)
{
	char url[API_HTTP_URL_MAX], auth[1024], ver[96], ctx[600];
	const char *hdrs[4];
	struct api_call call;
	char err[API_HTTP_ERR_MAX];
	size_t nh = 0;
	int rc, denied;

	memset(r, 0, sizeof(*r));
	if ((size_t)snprintf(url, sizeof(url), "%s%s", tf->base, path) >=
	    sizeof(url) || api_bearer(key, auth, sizeof(auth)) != IH_OK) {
		snprintf(why, whylen, "fetch: the URL or key is too long");
		return IH_EIO;
	}
	snprintf(ver, sizeof(ver), "Stripe-Version: %s", version);
	hdrs[nh++] = ver;
	if (context != NULL) {
		snprintf(ctx, sizeof(ctx), "Stripe-Context: %s", context);
		hdrs[nh++] = ctx;
	}
	hdrs[nh] = NULL;
	memset(&call, 0, sizeof(call));
	call.method = "GET";
	call.url = url;
	call.auth_name = "Authorization";
	call.auth_value = auth;
	call.headers = hdrs;
	err[0] = '\0';
	rc = api_http_call(&tf->http, &call, r, err, sizeof(err));
	explicit_bzero(auth, sizeof(auth));
	if (rc == IH_OK && r->status == 200)
		return IH_OK;
	if (rc == IH_OK && r->status == 404)
		return IH_ENOTFOUND;
	denied = rc == IH_OK && (r->status == 401 || r->status == 403);
	if (rc == IH_OK)
		snprintf(why, whylen, "fetch: Stripe answered %ld to GET %s%s%s"
		    "%s", r->status, path, denied ? " (is " : "", denied ?
		    var : "", denied ? " a key with read access to events?)" :
		    "");
	else
		snprintf(why, whylen, "fetch: GET %s: %s", path, err);
	api_resp_free(r);
	return IH_EIO;
}

/* The fetched event's members that the fetch reads. */
enum { W_ID, W_OBJECT, W_URL, W_CONTEXT, W_N };

/*
 * Builds the kept payload (STRIPE_FETCHED_PREFIX, stripe.h) from the
 * fetched event and the related object (NULL: none) into *out.
 */
static int
thin_envelope(const char *evbody, size_t evlen, const char *obj,
    size_t objlen, char **out, size_t *outlen)
{
	char when[48];
	struct tm tm;
	int64_t now = clock_wall_ms();
	time_t s = (time_t)(now / 1000);
	size_t cap;
	int n;

	if (gmtime_r(&s, &tm) == NULL)
		return IH_EINVAL;
	n = (int)strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	if (n <= 0)
		return IH_EINVAL;
	cap = sizeof(STRIPE_FETCHED_PREFIX) + 64 + sizeof(when) + evlen +
	    (obj != NULL ? objlen : 4);
	*out = malloc(cap);
	if (*out == NULL)
		return IH_ENOMEM;
	n = snprintf(*out, cap, "%s\"fetched_at\":\"%s.%03dZ\",\"event\":%.*s,"
	    "\"related_object\":%.*s}", STRIPE_FETCHED_PREFIX, when,
	    (int)(now % 1000), (int)evlen, evbody,
	    obj != NULL ? (int)objlen : 4, obj != NULL ? obj : "null");
	if (n < 0 || (size_t)n >= cap) {
		free(*out);
		*out = NULL;
		return IH_EINVAL;
	}
	*outlen = (size_t)n;
	return IH_OK;
}

/* dispatch_fetch_fn: see dispatch.h. */
static int
thin_fetch_job(void *arg, const struct dispatch *d, struct store_job *job,
    char *why, size_t whylen)
{
	struct thin_fetch *tf = arg;
	struct json_want w[W_N];
	struct api_resp ev, obj;
	struct json *js = NULL;
	char path[API_HTTP_URL_MAX], eid[512], serr[STORE_ERR_MAX];
	char cid[LOG_CLEAN_SIZE], curl[LOG_CLEAN_SIZE];
	char ver[sizeof(tf->version)], var[96];
	const char *key;
	char *kept = NULL;
	size_t keptlen = 0, i;
	int64_t lease = (int64_t)d->cfg->lease_s * 1000;
	int rc, have_obj = 0;

	memset(&ev, 0, sizeof(ev));
	memset(&obj, 0, sizeof(obj));
	memset(w, 0, sizeof(w));
	w[W_ID].path = "$.id";
	w[W_OBJECT].path = "$.object";
	w[W_URL].path = "$.related_object.url";
	w[W_CONTEXT].path = "$.context";
	rc = json_open(&js);
	if (rc != IH_OK)
		goto out;
	/* An account's events with its own key only (thin_fetch.h). */
	thin_account(tf, job->ev.account, &key, ver, sizeof(ver), var,
	    sizeof(var));
	if (key == NULL || !thin_word_ok(ver, 0)) {
		snprintf(why, whylen, key == NULL ? "fetch: %s is not set "
		    "(each account's thin events take its own key)" :
		    "fetch: the first of IDEMHOOK_STRIPE_API_VERSIONS@%s is "
		    "not a version", key == NULL ? var : job->ev.account);
		rc = IH_EIO;
		goto out;
	}
	if (api_http_escape(job->ev.event_id, eid, sizeof(eid)) != IH_OK) {
		snprintf(why, whylen, "fetch: the event id is too long");
		rc = IH_EIO;
		goto out;
	}
	snprintf(path, sizeof(path), "/v2/core/events/%s", eid);
	/* The context (a connected account) is the signed notification's. */
	rc = json_extract(js, job->ev.payload, job->ev.payload_len,
	    &w[W_CONTEXT], 1, 0);
	if (rc == IH_ENOMEM)
		goto out;
	rc = store_renew(d->st, NULL, job, d->owner, lease, why, whylen);
	if (rc != IH_OK)
		goto out;
	rc = thin_get(tf, key, var, path, THIN_DEF_VERSION,
	    thin_word_ok(w[W_CONTEXT].val, 0) ? w[W_CONTEXT].val : NULL, &ev,
	    why, whylen);
	if (rc == IH_ENOTFOUND) {
		snprintf(why, whylen, "fetch: Stripe has no event %s (404)",
		    path);
		rc = IH_EIO;
	}
	if (rc != IH_OK)
		goto out;
	rc = json_extract(js, ev.body, ev.len, w, W_CONTEXT, 0);
	if (rc == IH_ENOMEM)
		goto out;
	if (rc != IH_OK || w[W_ID].val == NULL ||
	    strcmp(w[W_ID].val, job->ev.event_id) != 0 ||
	    w[W_OBJECT].val == NULL ||
	    strcmp(w[W_OBJECT].val, STRIPE_THIN_OBJECT) != 0) {
		snprintf(why, whylen, "fetch: GET %s did not answer the "
		    "event (a v2.core.event of that id)", path);
		rc = IH_EIO;
		goto out;
	}
	/* The object's state, where the event names one (a path of ours). */
	if (w[W_URL].val != NULL &&
	    strcmp(job->ev.event_type, THIN_PING) == 0) {
		free(w[W_URL].val);
		w[W_URL].val = NULL;
	}
	if (w[W_URL].val != NULL) {
		if (!thin_word_ok(w[W_URL].val, 1)) {
			snprintf(why, whylen, "fetch: the event's "
			    "related_object.url is not an API path");
			rc = IH_EIO;
			goto out;
		}
		rc = store_renew(d->st, NULL, job, d->owner, lease, why,
		    whylen);
		if (rc != IH_OK)
			goto out;
		/* Rendered in the version the switch expects. */
		rc = thin_get(tf, key, var, w[W_URL].val, ver,
		    thin_word_ok(w[W_CONTEXT].val, 0) ? w[W_CONTEXT].val : NULL,
		    &obj, why, whylen);
		/* Gone (404): the event is processed without its state. */
		if (rc == IH_ENOTFOUND)
			rc = IH_OK;
		else if (rc == IH_OK) {
			have_obj = 1;
			rc = json_extract(js, obj.body, obj.len, NULL, 0, 0);
			if (rc == IH_EBODY || rc == IH_EINVAL) {
				snprintf(why, whylen, "fetch: GET %s did not "
				    "answer a JSON object", w[W_URL].val);
				rc = IH_EIO;
			}
		}
		if (rc != IH_OK)
			goto out;
	}
	rc = thin_envelope(ev.body, ev.len, have_obj ? obj.body : NULL,
	    obj.len, &kept, &keptlen);
	if (rc != IH_OK)
		goto out;
	serr[0] = '\0';
	rc = store_fetched(d->st, job, d->owner, (unsigned char *)kept,
	    keptlen, THIN_SOURCE_LINE, serr, sizeof(serr));
	if (rc != IH_OK) {
		snprintf(why, whylen, "%s", serr);
		goto out;
	}
	free((void *)job->ev.payload);
	job->ev.payload = (unsigned char *)kept;
	job->ev.payload_len = keptlen;
	job->ev.needs_fetch = 0;
	kept = NULL;
	log_clean(cid, job->ev.event_id, (size_t)-1);
	log_clean(curl, w[W_URL].val != NULL ? w[W_URL].val : "-",
	    (size_t)-1);
	log_emit(d->log, "provider=%s event=%s fetched=%s related=%s%s",
	    job->ev.provider, cid, STRIPE_THIN_OBJECT, curl,
	    w[W_URL].val != NULL && !have_obj ? " (gone: 404)" : "");
out:
	if (rc == IH_ENOMEM)
		snprintf(why, whylen, "fetch: out of memory");
	if (rc != IH_OK)
		tf->failed++;
	for (i = 0; i < W_N; i++)
		free(w[i].val);
	free(kept);
	api_resp_free(&ev);
	api_resp_free(&obj);
	json_close(js);
	return rc == IH_ENOMEM ? IH_EIO : rc;
}

int
thin_fetch_ready(struct thin_fetch *tf, struct store *st,
    const char *provider, const struct log_sink *log, char *err,
    size_t errlen)
{
	int64_t now = clock_wall_ms();
	int due = 0, rc;

	if (strcmp(provider, "stripe") != 0) {
		store_set_fetch(st, STORE_FETCH_NONE);
		return IH_OK;
	}
	if (tf->any_key && STORE_THIN_CAN_FETCH) {
		dispatch_set_fetch(thin_fetch_job, tf);
		store_set_fetch(st, STORE_FETCH_ANY);
		return IH_OK;
	}
	store_set_fetch(st, STORE_FETCH_NONE);
	if (tf->warned_at != 0 && now - tf->warned_at < THIN_WARN_MS)
		return IH_OK;
	store_set_fetch(st, STORE_FETCH_ONLY);
	rc = store_due(st, provider, now, &due, err, errlen);
	store_set_fetch(st, STORE_FETCH_NONE);
	if (rc != IH_OK || !due)
		return rc;
	tf->warned_at = now;
	if (!STORE_THIN_CAN_FETCH)
		log_emit(log, "provider=%s thin events wait for their fetch: "
		    "%s", provider, STORE_THIN_NO_CLIENT);
	else
		log_emit(log, "provider=%s thin events wait for their fetch: "
		    "IDEMHOOK_STRIPE_API_KEY is not set, so idemhook work "
		    "cannot get the full events from Stripe's API; they stay "
		    "recorded and unprocessed until it is", provider);
	return IH_OK;
}
