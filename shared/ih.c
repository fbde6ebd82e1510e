/* ih.c -- names for the project's status codes. */
#include "ih.h"

const char *
ih_strerror(int rc)
{
	switch (rc) {
	case IH_OK:		return "ok";
	case IH_ENOMEM:		return "out_of_memory";
	case IH_EINVAL:		return "invalid";
	case IH_ETOOBIG:	return "too_large";
	case IH_EAUTH:		return "bad_signature";
	case IH_ESTALE:		return "stale_timestamp";
	case IH_EBODY:		return "bad_body";
	case IH_ESTORE:		return "store_unavailable";
	case IH_ENOTFOUND:	return "not_found";
	case IH_ECONFIG:	return "bad_config";
	case IH_EIO:		return "io_error";
	default:		return "unknown_error";
	}
}
