/* sigfail_pend.c -- refused signatures counted in memory (sigfail_pend.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ih.h"
#include "log.h"
#include "redact.h"
#include "sigfail_pend.h"
#include "store.h"
#include "store_health.h"

void
sigfail_pend_init(struct sigfail_pend *sp)
{
	memset(sp, 0, sizeof(*sp));
}

void
sigfail_pend_free(struct sigfail_pend *sp)
{
	size_t i;

	for (i = 0; i < SIGFAIL_PEND_MAX; i++)
		free(sp->e[i].db);
	sigfail_pend_init(sp);
}

void
sigfail_pend_add(struct sigfail_pend *sp, const struct config *cfg,
    const char *provider, int64_t now_ms)
{
	struct sigfail_pend_ent *free_e = NULL, *e;
	int64_t m = now_ms / 60000;
	size_t i;

	if (strlen(provider) >= sizeof(sp->e[0].provider) ||
	    cfg->db_path == NULL) {
		sp->lost++;
		return;
	}
	for (i = 0; i < SIGFAIL_PEND_MAX; i++) {
		e = &sp->e[i];
		if (e->db == NULL) {
			if (free_e == NULL)
				free_e = e;
			continue;
		}
		if (e->minute == m && strcmp(e->provider, provider) == 0 &&
		    strcmp(e->db, cfg->db_path) == 0)
			break;
	}
	if (i == SIGFAIL_PEND_MAX) {
		e = free_e;
		if (e != NULL)
			e->db = strdup(cfg->db_path);
		if (e == NULL || e->db == NULL) {
			sp->lost++;
			return;
		}
		e->sync = cfg->synchronous;
		e->busy = cfg->busy_timeout_ms;
		snprintf(e->provider, sizeof(e->provider), "%s", provider);
		e->minute = m;
		e->count = 0;
	}
	e->count++;
	if (sp->first_ms == 0)
		sp->first_ms = now_ms;
}

int64_t
sigfail_pend_due(const struct sigfail_pend *sp)
{
	if (sp->first_ms == 0 && sp->lost == 0)
		return 0;
	return (sp->first_ms != 0 ? sp->first_ms : 1) + SIGFAIL_FLUSH_MS;
}

void
sigfail_pend_take(struct sigfail_pend *sp, struct sigfail_pend *out)
{
	*out = *sp;
	sigfail_pend_init(sp);
}

void
sigfail_pend_flush(struct sigfail_pend *sp, struct settings_store *slot,
    const struct log_sink *log)
{
	struct sigfail_pend_ent *e;
	struct config cfg;
	char err[STORE_ERR_MAX], where[256];
	size_t i;
	int rc;

	for (i = 0; i < SIGFAIL_PEND_MAX; i++) {
		e = &sp->e[i];
		if (e->db == NULL || e->count <= 0)
			continue;
		memset(&cfg, 0, sizeof(cfg));
		cfg.db_path = e->db;
		cfg.synchronous = e->sync;
		cfg.busy_timeout_ms = e->busy;
		rc = settings_store(slot, &cfg, err, sizeof(err));
		if (rc == IH_OK)
			rc = store_sigfail_add(slot->st, e->provider,
			    e->minute, e->count, err, sizeof(err));
		if (rc != IH_OK)
			log_emit(log, "provider=%s %ld refused signatures "
			    "not counted in %s: %s", e->provider, e->count,
			    ih_redact(e->db, where, sizeof(where)), err);
	}
	if (sp->lost > 0)
		log_emit(log, "%ld refused signatures not counted: no room "
		    "in memory", sp->lost);
	sigfail_pend_free(sp);
}
