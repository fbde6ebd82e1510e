/*
 * cli_prom.h -- idemhook stats' Prometheus lines, and its figures of why
 * pending events wait and how long attempts take (store.h, struct
 * store_stats: wait_order, wait_retry, attempt_*), which tell an
 * operator how forwarding goes (forward.h): a destination's delivered,
 * retrying and dead events are its provider's (and account's) done,
 * failed and dead ones.  Everything prints to stdout; values pass
 * through cli_text.h's cleaning.
 */
#ifndef IH_CLI_PROM_H
#define IH_CLI_PROM_H

#include <stddef.h>

struct store_stats;

/*
 * A Prometheus label value: backslash, quote and newline escaped, other
 * controls masked like every value the command prints.
 */
void	cli_prom_label(const char *s);

/* The HELP and TYPE lines of a family. */
void	cli_prom_head(const char *name, const char *type, const char *help);

/*
 * One sample: provider's label, account's unless the default one, and
 * label="value" when label is not NULL; NaN printed as such.
 */
void	cli_prom_value(const char *name, const char *provider,
	    const char *account, const char *label, const char *value,
	    double v);

/* The waiting and attempts objects of a row of stats --json. */
void	cli_waiting_json(const struct store_stats *x);

/* The idemhook_waiting_events and idemhook_attempt_* families. */
void	cli_waiting_prom(const struct store_stats *s, size_t n);

/* The table of stats: a second part, width the first column's. */
void	cli_waiting_table(const struct store_stats *s, size_t n, int width);

#endif
