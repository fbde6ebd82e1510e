/*
 * cli_catchup.c -- idemhook catch-up: the command (cli_catchup.h) on top
 * of the providers' APIs (api_providers.h) and their session
 * (api_session.h).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "api_providers.h"
#include "api_session.h"
#include "cli_args.h"
#include "cli_catchup.h"
#include "cli_text.h"
#include "clock.h"
#include "ih.h"
#include "log.h"
#include "providers.h"

#define DEFAULT_WINDOW	"24h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: idemhook catch-up [--provider P]... "
	    "[--since AGE | --from TIME] [--dry-run] [--repair] [--json]\n\n"
	    "Asks each provider's own API what it sent, or tried to send,\n"
	    "in the window (default the last " DEFAULT_WINDOW "), and records "
	    "what the\nstore lacks as a delivery would be recorded, marked "
	    "\"Idemhook-Source: api\".\n"
	    "  stripe   pages through GET /v1/events (30 days kept)\n"
	    "  github   asks GitHub to redeliver each failed delivery of the\n"
	    "           hooks in IDEMHOOK_GITHUB_HOOKS (about 3 days kept;\n"
	    "           a held event whose delivery GitHub lists is released;\n"
	    "           app/HOOK_ID: the App's own, with\n"
	    "           IDEMHOOK_GITHUB_APP_ID and "
	    "IDEMHOOK_GITHUB_APP_KEY_FILE)\n"
	    "  asaas    reports an interrupted queue; --repair resumes it\n"
	    "  shopify  reports missing subscriptions (IDEMHOOK_SHOPIFY_TOPICS)"
	    ";\n           --repair re-creates them and records the orders "
	    "updated since\n"
	    "  standard Standard Webhooks defines no API: nothing to ask\n"
	    "Without --provider: every provider whose IDEMHOOK_<P>_API_KEY is "
	    "set.\n"
	    "  --dry-run  list what is missing, record and ask nothing\n"
	    "  --json     one JSON array on stdout\n"
	    "Exit: 0 nothing missing, 1 a call or the store failed or the "
	    "window was\nnot covered whole, 2 usage or configuration (a key "
	    "refused), 3 something\nwas missing (recorded).\n");
}

static void
put_json_str(const char *name, const char *v, int comma)
{
	printf("\"%s\":", name);
	if (v == NULL || *v == '\0')
		printf("null");
	else
		cli_put_json(stdout, v);
	if (comma)
		printf(",");
}

/* The run's summary: terminal, JSON, and its one log line. */
static void
report(struct catchup *cu, int json, int first, int ex)
{
	static const char *const outcome[] = { "ok", "failed", "refused",
	    "missing" };
	char from[CLI_TIME_MAX], to[CLI_TIME_MAX];

	cli_format_time(cu->from_s * 1000, from, sizeof(from));
	cli_format_time(cu->to_s * 1000, to, sizeof(to));
	if (cu->tty)
		fprintf(stderr, "\n");
	if (json) {
		printf("%s{", first ? "" : ",");
		put_json_str("provider", cu->p->name, 1);
		put_json_str("from", from, 1);
		put_json_str("to", to, 1);
		printf("\"dry_run\":%s,\"pages\":%ld,\"listed\":%ld,"
		    "\"missing\":%ld,\"recorded\":%ld,\"delivered_meanwhile\":"
		    "%ld,\"failed\":%ld,\"asked\":%ld,\"released\":%ld,"
		    "\"not_looked_at\":%ld,",
		    cu->dry_run ? "true" : "false", cu->pages, cu->seen,
		    cu->missing, cu->recorded, cu->raced, cu->failed,
		    cu->asked, cu->released, cu->unlooked);
		put_json_str("outcome", outcome[ex], 1);
		put_json_str("note", cu->note, 1);
		put_json_str("error", ex == 1 || ex == 2 ? cu->err : NULL, 0);
		printf("}");
	} else if (ex == 1 || ex == 2) {
		/* A failed run says so on stdout, not as a zero summary. */
		cli_printf(stdout, "%s: %s to %s: FAILED after %ld page(s), "
		    "%ld listed, %ld missing, %ld recorded%s: %s\n",
		    cu->p->name, from, to, cu->pages, cu->seen, cu->missing,
		    cu->recorded, cu->dry_run ? " (dry run)" : "", cu->err);
		cli_errorf("catch-up: %s: %s", cu->p->name, cu->err);
	} else {
		cli_printf(stdout, "%s: %s to %s: %ld page(s), %ld listed, "
		    "%ld missing, %ld recorded%s, %ld delivered meanwhile%s\n",
		    cu->p->name, from, to, cu->pages, cu->seen, cu->missing,
		    cu->recorded, cu->dry_run ? " (dry run)" : "", cu->raced,
		    cu->asked > 0 ? ", redeliveries or repairs asked" : "");
		if (cu->released > 0)
			cli_printf(stdout, "%s: %ld held event(s) %s: their "
			    "deliveries are listed by the API\n", cu->p->name,
			    cu->released, cu->dry_run ? "would be released" :
			    "released");
		if (cu->note[0] != '\0')
			cli_printf(stdout, "%s: note: %s\n", cu->p->name,
			    cu->note);
	}
	if (!json && cu->unlooked > 0)
		cli_printf(stdout, "%s: incomplete: %ld listed in the window "
		    "not looked at\n", cu->p->name, cu->unlooked);
	log_emit(log_dest_sink(&cu->w.logd, &log_stderr), "catchup "
	    "provider=%s from=%s to=%s pages=%ld listed=%ld missing=%ld "
	    "recorded=%ld raced=%ld failed=%ld asked=%ld released=%ld "
	    "not_looked_at=%ld dry_run=%d outcome=%s", cu->p->name, from, to,
	    cu->pages, cu->seen, cu->missing, cu->recorded, cu->raced,
	    cu->failed, cu->asked, cu->released, cu->unlooked, cu->dry_run,
	    outcome[ex]);
}

/* The run's options, for each provider. */
struct run {
	struct cli	*c;
	int64_t		 from_ms, now_ms;
	int		 dry_run, repair, json;
};

/* One provider's run; returns its exit code. */
static int
run_one(void *arg, size_t pi, const struct api_provider *ap, int named,
    int *first)
{
	const struct run *run = arg;
	int64_t from_ms = run->from_ms, now_ms = run->now_ms;
	int dry_run = run->dry_run, repair = run->repair, json = run->json;
	struct cli *c = run->c;
	struct catchup cu;
	int rc, ex;

	ex = api_provider_open(&cu, c, pi, ap, named, "catch-up",
	    " (handlers/README.md, Catching up)");
	if (ex != 0)
		return ex;
	cu.from_s = from_ms / 1000;
	cu.to_s = now_ms / 1000;
	cu.dry_run = dry_run;
	cu.repair = repair;
	cu.tty = !json && isatty(2);
	cu.json = json;
	rc = ap->catchup(&cu);
	if (catchup_flush(&cu) != IH_OK && rc == IH_OK)
		rc = IH_ESTORE;
	if (rc == IH_ECONFIG)
		ex = 2;
	else if (rc != IH_OK)
		ex = 1;
	else if (cu.unlooked > 0)
		ex = 1;		/* incomplete: cu.err says what was left */
	else
		ex = cu.missing > 0 || cu.released > 0 ? CLI_EXIT_MISSING : 0;
	report(&cu, json, *first, ex);
	*first = 0;
	catchup_close(&cu);
	return ex;
}

int
cli_catchup(struct cli *c, int argc, char **argv)
{
	/* Worse exit codes win: 2, then 1, then 3, then 0. */
	static const int rank[] = { 0, 2, 3, 1 };
	const char *named[CLI_MAX_PROVIDERS], *since = NULL, *from = NULL;
	int64_t now_ms = clock_wall_ms(), from_ms;
	struct run run;
	size_t nnamed = 0, i;
	int a, r, dry_run = 0, repair = 0, json = 0, pi;

	for (a = 1; a < argc; a++) {
		r = cli_opt(argc, argv, &a, "--provider", &named[nnamed]);
		if (r == 1 && nnamed + 1 < CLI_MAX_PROVIDERS) {
			nnamed++;
			continue;
		}
		if (r == 0)
			r = cli_opt(argc, argv, &a, "--since", &since);
		if (r == 0)
			r = cli_opt(argc, argv, &a, "--from", &from);
		if (r > 0)
			continue;
		if (r == 0 && strcmp(argv[a], "--dry-run") == 0)
			dry_run = 1;
		else if (r == 0 && strcmp(argv[a], "--repair") == 0)
			repair = 1;
		else if (r == 0 && strcmp(argv[a], "--json") == 0)
			json = 1;
		else
			return cli_help_or_usage(argv[a], usage);
	}
	if (since != NULL && from != NULL) {
		cli_errorf("catch-up: --since and --from are one option");
		return 2;
	}
	if (cli_parse_time(since != NULL ? since : from != NULL ? from :
	    DEFAULT_WINDOW, now_ms, &from_ms) != 0)
		return 2;
	if (from_ms >= now_ms) {
		cli_errorf("catch-up: the window starts in the future");
		return 2;
	}
	for (i = 0; i < nnamed; i++) {
		pi = cli_provider_index(named[i]);
		if (pi < 0)
			return 2;
		if (api_provider_named("catch-up", named[i],
		    API_JOB_CATCHUP) == NULL)
			return 2;
	}
	run.c = c;
	run.from_ms = from_ms;
	run.now_ms = now_ms;
	run.dry_run = dry_run;
	run.repair = repair;
	run.json = json;
	return api_each_provider("catch-up", API_JOB_CATCHUP, named, nnamed,
	    json, rank, run_one, &run);
}

int
cli_catchup_release(struct cli *c, size_t pi, const struct log_sink *log,
    const volatile sig_atomic_t *stop)
{
	const struct api_provider *ap;
	struct catchup cu;
	int rc;

	ap = api_provider_find(providers_all[pi]->name);
	if (ap == NULL || ap->release == NULL)
		return IH_OK;
	/* Quietly nothing without a key: the operator releases them. */
	if (catchup_open(&cu, c, pi, ap) != IH_OK) {
		catchup_close(&cu);
		return IH_OK;
	}
	cu.json = 1;
	cu.http.stop = stop;
	rc = ap->release(&cu);
	/* An account's release says whose (work does every account). */
	if (rc != IH_OK)
		log_emit(log, "catchup provider=%s%s%s held release failed: "
		    "%s", cu.p->name, c->account != NULL ? " account=" : "",
		    c->account != NULL ? c->account : "", cu.err);
	else if (cu.released > 0)
		log_emit(log, "catchup provider=%s%s%s released=%ld: held "
		    "events whose deliveries the API lists", cu.p->name,
		    c->account != NULL ? " account=" : "", c->account != NULL ?
		    c->account : "", cu.released);
	catchup_close(&cu);
	return rc;
}
