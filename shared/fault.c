/* fault.c -- crash points for the fault-injection tests (see fault.h). */
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fault.h"

#ifdef IH_FAULTS

void
fault_point(const char *name)
{
	const char *want, *once;
	int fd;

	want = getenv("IDEMHOOK_FAULT");
	if (want == NULL || strcmp(want, name) != 0)
		return;
	once = getenv("IDEMHOOK_FAULT_ONCE");
	if (once != NULL && *once != '\0') {
		fd = open(once, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd == -1)
			return;		/* fired already */
		close(fd);
	}
	raise(SIGKILL);
}

int
fault_enabled(void)
{
	return 1;
}

#else

void
fault_point(const char *name)
{
	(void)name;
}

int
fault_enabled(void)
{
	return 0;
}

#endif
