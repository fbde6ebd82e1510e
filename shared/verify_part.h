/*
 * verify_part.h -- the byte ranges an HMAC covers, shared by verify.c
 * and hmac_direct.c below it (so that neither includes the other).
 *
 * A part points into memory its caller owns for the call; nothing keeps
 * it.  A part may hold any bytes and have length 0.
 */
#ifndef IH_VERIFY_PART_H
#define IH_VERIFY_PART_H

#include <stddef.h>

#define VERIFY_SHA256_LEN	32

/* One byte range of the message a signature covers. */
struct verify_part {
	const void	*p;
	size_t		 len;
};

#endif
