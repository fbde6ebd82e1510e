/* respond.c -- status line, headers and a JSON body in one write. */
#include <stdio.h>
#include <string.h>

#include "ih.h"
#include "respond.h"

const char *
respond_reason(int status)
{
	switch (status) {
	case 200:	return "OK";
	case 400:	return "Bad Request";
	case 401:	return "Unauthorized";
	case 403:	return "Forbidden";
	case 405:	return "Method Not Allowed";
	case 409:	return "Conflict";
	case 411:	return "Length Required";
	case 413:	return "Payload Too Large";
	case 415:	return "Unsupported Media Type";
	case 429:	return "Too Many Requests";
	case 500:	return "Internal Server Error";
	case 503:	return "Service Unavailable";
	default:	return "Unknown";
	}
}

int
respond_send(const struct respond_io *io, const struct respond *rsp)
{
	char body[256], head[512], extra[128];
	int nb, nh, ne = 0;

	if (rsp->error != NULL)
		nb = snprintf(body, sizeof(body),
		    "{\"status\":\"%s\",\"error\":\"%s\"}\n",
		    rsp->body_status, rsp->error);
	else
		nb = snprintf(body, sizeof(body), "{\"status\":\"%s\"}\n",
		    rsp->body_status);
	if (nb < 0 || (size_t)nb >= sizeof(body))
		return IH_EINVAL;
	extra[0] = '\0';
	if (rsp->allow != NULL)
		ne = snprintf(extra, sizeof(extra), "Allow: %s\r\n",
		    rsp->allow);
	else if (rsp->retry_after > 0)
		ne = snprintf(extra, sizeof(extra), "Retry-After: %d\r\n",
		    rsp->retry_after);
	if (ne < 0 || (size_t)ne >= sizeof(extra))
		return IH_EINVAL;
	nh = snprintf(head, sizeof(head),
	    "Status: %d %s\r\n"
	    "Content-Type: application/json\r\n"
	    "Content-Length: %d\r\n"
	    "Cache-Control: no-store\r\n"
	    "%s\r\n", rsp->status, respond_reason(rsp->status), nb, extra);
	if (nh < 0 || (size_t)nh >= sizeof(head))
		return IH_EINVAL;
	if (io->write(io->arg, head, (size_t)nh) != (size_t)nh ||
	    io->write(io->arg, body, (size_t)nb) != (size_t)nb)
		return IH_EIO;
	return IH_OK;
}
