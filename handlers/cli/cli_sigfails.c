/* cli_sigfails.c -- refused signatures in idemhook stats (cli_sigfails.h). */
#include <stdio.h>
#include <string.h>

#include "cli_prom.h"
#include "cli_sigfails.h"
#include "cli_text.h"
#include "ih.h"
#include "sigfail.h"

struct sf_state {
	enum cli_sigfails_mode	 mode;
	const char		*provider;	/* only this one, or NULL */
	long			 n;
};

static int
sf_row(void *arg, const char *provider, long hour, long day)
{
	struct sf_state *ss = arg;
	size_t len;

	if (ss->provider != NULL && strcmp(ss->provider, provider) != 0)
		return IH_OK;
	if (ss->mode == CLI_SIGFAILS_JSON) {
		printf("%s\n  {\"provider\": ", ss->n > 0 ? "," : "");
		cli_put_json(stdout, provider);
		printf(", \"last_hour\": %ld, \"last_day\": %ld}", hour, day);
	} else if (ss->mode == CLI_SIGFAILS_PROM) {
		printf("idemhook_refused_signatures{provider=\"");
		cli_prom_label(provider);
		printf("\",window=\"1h\"} %ld\n", hour);
		printf("idemhook_refused_signatures{provider=\"");
		cli_prom_label(provider);
		printf("\",window=\"24h\"} %ld\n", day);
	} else {
		len = cli_clean_width(provider);
		cli_put_clean(stdout, provider);
		printf("%*s", (int)(len < 10 ? 11 - len : 1), "");
		printf("%9ld %9ld\n", hour, day);
	}
	ss->n++;
	return IH_OK;
}

int
cli_sigfails_print(struct cli *c, struct store *st, const char *provider,
    int64_t now_ms, enum cli_sigfails_mode mode, char *err, size_t errlen)
{
	const struct config *cfg;
	struct sf_state ss;
	int rc;

	memset(&ss, 0, sizeof(ss));
	ss.mode = mode;
	ss.provider = provider;
	rc = cli_config(c, 0, &cfg);
	if (rc != IH_OK) {
		snprintf(err, errlen, "no settings");
		return rc;
	}
	if (mode == CLI_SIGFAILS_JSON)
		printf(", \"refused_signatures\": [");
	else if (mode == CLI_SIGFAILS_PROM)
		printf("# HELP idemhook_refused_signatures Deliveries refused "
		    "for their signature in the last hour or day.\n"
		    "# TYPE idemhook_refused_signatures gauge\n");
	else
		printf("\nrefused signatures (deliveries, whatever the "
		    "window)\n%-10s %9s %9s\n", "PROVIDER", "LAST HOUR",
		    "LAST DAY");
	rc = sigfail_sums(st, cfg->db_path, now_ms, sf_row, &ss, err, errlen);
	if (mode == CLI_SIGFAILS_JSON)
		printf("\n]");
	else if (mode == CLI_SIGFAILS_TABLE && ss.n == 0 && rc == IH_OK)
		printf("(none)\n");
	return rc;
}
