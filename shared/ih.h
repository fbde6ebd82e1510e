/*
 * ih.h -- the status codes every idemhook module returns.
 *
 * Functions that can fail return one of these and pass results through
 * out-parameters.  IH_OK is zero so that "if (rc != IH_OK)" reads well.
 * The codes name a class of failure that decides the HTTP answer; the
 * detail goes into a caller-provided message buffer or the log.
 */
#ifndef IH_H
#define IH_H

enum ih_err {
	IH_OK = 0,
	IH_ENOMEM,	/* allocation failed */
	IH_EINVAL,	/* malformed input or argument */
	IH_ETOOBIG,	/* input over a configured or fixed limit */
	IH_EAUTH,	/* signature or token missing or wrong */
	IH_ESTALE,	/* signed timestamp outside the tolerance */
	IH_EBODY,	/* body unusable: not JSON, no id or type */
	IH_ESTORE,	/* store cannot durably record now: retry later */
	IH_ENOTFOUND,	/* no such event, key or file */
	IH_ECONFIG,	/* configuration missing or invalid */
	IH_EIO		/* system call failed */
};

/* Returns a short, static, lowercase name for rc, for logs and bodies. */
const char *ih_strerror(int rc);

#if defined(__GNUC__)
#define IH_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define IH_PRINTF(f, a)
#endif

#endif
