/*
 * null.c -- the stack ceiling: a FastCGI program that reads the whole
 * request body and answers 200 with a small JSON body, doing nothing
 * else.  Run under the same lighttpd, with the same max-procs, as the
 * receivers, its requests per second are the most the web server, the
 * FastCGI protocol and the load generator allow on this machine.  Under
 * plain CGI the same loop runs once.
 */
#include <stdio.h>

#include <fcgiapp.h>

static const char null_answer[] =
    "Status: 200 OK\r\n"
    "Content-Type: application/json\r\n"
    "Cache-Control: no-store\r\n"
    "\r\n"
    "{\"status\":\"accepted\"}\n";

static void
null_serve(FCGX_Stream *in, FCGX_Stream *out)
{
	char buf[16384];

	while (FCGX_GetStr(buf, (int)sizeof(buf), in) > 0)
		;
	FCGX_PutStr(null_answer, (int)sizeof(null_answer) - 1, out);
}

int
main(void)
{
	FCGX_Request fx;
	char buf[16384];

	if (FCGX_IsCGI()) {
		while (fread(buf, 1, sizeof(buf), stdin) > 0)
			;
		fwrite(null_answer, 1, sizeof(null_answer) - 1, stdout);
		return 0;
	}
	if (FCGX_Init() != 0 || FCGX_InitRequest(&fx, 0, 0) != 0)
		return 1;
	while (FCGX_Accept_r(&fx) >= 0)
		null_serve(fx.in, fx.out);
	return 0;
}
