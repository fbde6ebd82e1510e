/*
 * pg_dl.h -- libpq, loaded when a PostgreSQL store is first opened.
 *
 * The programs do not link libpq: it and the libraries it needs (TLS,
 * Kerberos, LDAP: about twenty) cost a plain CGI delivery on SQLite
 * more start-up than everything else it does.  pg_dl_load() opens
 * libpq.so.5 with dlopen() once per process and fills pg_dl with its
 * functions; the PostgreSQL backend's files include this header after
 * <libpq-fe.h> (through pg_int.h), so that each PQ*() call goes through
 * pg_dl.  Nothing may call a PQ*() function before pg_dl_load() has
 * answered IH_OK.
 *
 * Failure: IH_ECONFIG with why in err when libpq.so.5 or one of its
 * functions is missing (the libpq5 package is not installed).
 * Thread-safe: the load runs once (pthread_once).
 */
#ifndef IH_PG_DL_H
#define IH_PG_DL_H

#include <stddef.h>

#include <libpq-fe.h>

/* Every libpq function the backend calls. */
#define PG_DL_FUNCS \
	X(PQclear) X(PQcmdStatus) X(PQcmdTuples) X(PQconndefaults) \
	X(PQconnectdbParams) X(PQconninfo) X(PQconninfoFree) \
	X(PQconsumeInput) X(PQenterPipelineMode) X(PQerrorMessage) \
	X(PQexitPipelineMode) X(PQfinish) X(PQflush) X(PQfreemem) \
	X(PQgetResult) X(PQgetisnull) X(PQgetlength) X(PQgetvalue) \
	X(PQhost) X(PQisBusy) \
	X(PQmakeEmptyPGresult) X(PQntuples) X(PQpipelineStatus) \
	X(PQpipelineSync) X(PQresultErrorField) X(PQresultErrorMessage) \
	X(PQresultStatus) X(PQsendPrepare) X(PQsendQuery) \
	X(PQsendQueryParams) X(PQsendQueryPrepared) X(PQserverVersion) \
	X(PQsetnonblocking) X(PQsocket) X(PQsslAttribute) X(PQsslInUse) \
	X(PQstatus) X(PQtransactionStatus) X(PQunescapeBytea)

struct pg_dl {
#define X(f)	__typeof__(f) *f;
	PG_DL_FUNCS
#undef X
};

extern struct pg_dl pg_dl;

int	pg_dl_load(char *err, size_t errlen);

#ifndef PG_DL_NO_MACROS
#define PQclear			(*pg_dl.PQclear)
#define PQcmdStatus		(*pg_dl.PQcmdStatus)
#define PQcmdTuples		(*pg_dl.PQcmdTuples)
#define PQconndefaults		(*pg_dl.PQconndefaults)
#define PQconnectdbParams	(*pg_dl.PQconnectdbParams)
#define PQconninfo		(*pg_dl.PQconninfo)
#define PQconninfoFree		(*pg_dl.PQconninfoFree)
#define PQconsumeInput		(*pg_dl.PQconsumeInput)
#define PQenterPipelineMode	(*pg_dl.PQenterPipelineMode)
#define PQerrorMessage		(*pg_dl.PQerrorMessage)
#define PQexitPipelineMode	(*pg_dl.PQexitPipelineMode)
#define PQfinish		(*pg_dl.PQfinish)
#define PQflush			(*pg_dl.PQflush)
#define PQfreemem		(*pg_dl.PQfreemem)
#define PQgetResult		(*pg_dl.PQgetResult)
#define PQgetlength		(*pg_dl.PQgetlength)
#define PQgetisnull		(*pg_dl.PQgetisnull)
#define PQgetvalue		(*pg_dl.PQgetvalue)
#define PQhost			(*pg_dl.PQhost)
#define PQisBusy		(*pg_dl.PQisBusy)
#define PQmakeEmptyPGresult	(*pg_dl.PQmakeEmptyPGresult)
#define PQntuples		(*pg_dl.PQntuples)
#define PQpipelineStatus	(*pg_dl.PQpipelineStatus)
#define PQpipelineSync		(*pg_dl.PQpipelineSync)
#define PQresultErrorField	(*pg_dl.PQresultErrorField)
#define PQresultErrorMessage	(*pg_dl.PQresultErrorMessage)
#define PQresultStatus		(*pg_dl.PQresultStatus)
#define PQsendPrepare		(*pg_dl.PQsendPrepare)
#define PQsendQuery		(*pg_dl.PQsendQuery)
#define PQsendQueryParams	(*pg_dl.PQsendQueryParams)
#define PQsendQueryPrepared	(*pg_dl.PQsendQueryPrepared)
#define PQserverVersion		(*pg_dl.PQserverVersion)
#define PQsetnonblocking	(*pg_dl.PQsetnonblocking)
#define PQsocket		(*pg_dl.PQsocket)
#define PQsslAttribute		(*pg_dl.PQsslAttribute)
#define PQsslInUse		(*pg_dl.PQsslInUse)
#define PQstatus		(*pg_dl.PQstatus)
#define PQtransactionStatus	(*pg_dl.PQtransactionStatus)
#define PQunescapeBytea		(*pg_dl.PQunescapeBytea)
#endif

#endif
