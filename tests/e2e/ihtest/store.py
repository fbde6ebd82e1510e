"""The store, whichever backend: sqlite3 for a file, a psql-backed
DB-API-like connection for a postgresql:// URI (IH_DB_BACKEND=pg gives
every Server a fresh PostgreSQL database)."""

import contextlib
import json
import os
import sqlite3
import subprocess
import time

from .common import HarnessError


def schema_version():
    """This build's STORE_SCHEMA_VERSION (shared/store/store.h), which a
    migrated store ends at, as a string."""
    import re
    from .common import REPO
    with open(os.path.join(REPO, "shared", "store", "store.h")) as f:
        return re.search(r"#define STORE_SCHEMA_VERSION\s+(\d+)", f.read()).group(1)


def is_pg(location):
    return str(location).startswith(("postgresql://", "postgres://"))


def pg_backend():
    """True when the suites run against PostgreSQL (IH_DB_BACKEND=pg)."""
    return os.environ.get("IH_DB_BACKEND", "sqlite") == "pg"


def pg_admin_uri():
    uri = os.environ.get("IH_PG_URI", "")
    if not uri:
        raise HarnessError("IH_PG_URI is unset: tests/run.sh starts a "
                           "PostgreSQL server (tests/pg_cluster.sh)")
    return uri


def pg_uri(dbname, base=None):
    """The URI of database dbname on the server of base (IH_PG_URI)."""
    base = base or pg_admin_uri()
    q = base.find("?")
    return "postgresql:///%s%s" % (dbname, base[q:] if q >= 0 else "")


_pg_seq = [0]


def pg_new_db(prefix="ih_e2e"):
    """Creates an empty database and returns its URI."""
    _pg_seq[0] += 1
    name = "%s_%d_%d_%d" % (prefix, os.getpid(), _pg_seq[0], int(time.time() * 1000) % 100000)
    psql(pg_admin_uri(), "CREATE DATABASE %s" % name)
    return pg_uri(name)


def _psql_binary():
    """The newest server version's own psql (the one tests/pg_cluster.sh
    starts), else psql on PATH.  Debian's /usr/bin/psql is a Perl wrapper
    that picks a version first: 0.6 s a call on a loaded machine against
    0.1 s, and the PostgreSQL suites read the store through a psql call
    each time."""
    import glob
    import re
    found = []
    for d in glob.glob("/usr/lib/postgresql/*/bin/psql"):
        m = re.match(r"/usr/lib/postgresql/(\d+)", d)
        if m and os.access(d, os.X_OK):
            found.append((int(m.group(1)), d))
    return max(found)[1] if found else "psql"


PSQL = _psql_binary()


def psql(uri, sql):
    """Runs sql with psql; returns its unaligned, tuples-only output."""
    p = subprocess.run([PSQL, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
                        "-d", uri, "-c", sql], capture_output=True, timeout=60)
    if p.returncode != 0:
        raise PgError(p.stderr.decode("utf-8", "replace").strip())
    return p.stdout.decode("utf-8", "replace")


class PgError(Exception):
    pass


def pg_literal(v):
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, (bytes, bytearray)):
        return "'\\x%s'::bytea" % bytes(v).hex()
    return "'%s'" % str(v).replace("'", "''")


def pg_bind(sql, args):
    """Replaces each ? outside quotes with the next argument, quoted."""
    out, i, quote = [], 0, False
    for ch in sql:
        if ch == "'":
            quote = not quote
        if ch == "?" and not quote:
            out.append(pg_literal(args[i]))
            i += 1
        else:
            out.append(ch)
    return "".join(out)


class PgRow(tuple):
    """A row that answers both r[0] and r["name"], like sqlite3.Row."""
    def __new__(cls, d):
        r = super().__new__(cls, tuple(d.values()))
        r._d = d
        return r

    def __getitem__(self, k):
        if isinstance(k, str):
            return self._d[k]
        return tuple.__getitem__(self, k)

    def keys(self):
        return list(self._d.keys())


def _pg_value(v):
    if isinstance(v, str) and v.startswith("\\x"):
        try:
            return bytes.fromhex(v[2:])
        except ValueError:
            return v
    return v


class PgCursor:
    def __init__(self, rows, rowcount):
        self.rows = rows
        self.rowcount = rowcount
        self.lastrowid = None

    def fetchone(self):
        return self.rows.pop(0) if self.rows else None

    def fetchall(self):
        rows, self.rows = self.rows, []
        return rows

    def __iter__(self):
        return iter(self.fetchall())


class PgConn:
    """Enough of sqlite3.Connection for the tests, over psql: each
    execute() is its own transaction.  SELECTs come back typed, through
    row_to_json; bytea columns as bytes."""
    def __init__(self, uri):
        self.uri = uri
        self.row_factory = None

    def execute(self, sql, args=()):
        sql = pg_bind(sql, tuple(args)).strip().rstrip(";")
        head = sql.split(None, 1)[0].upper()
        if head in ("SELECT", "WITH"):
            out = psql(self.uri, "SELECT row_to_json(q)::text FROM (%s) AS q" % sql)
            rows = []
            for line in out.splitlines():
                if line.strip():
                    d = json.loads(line)
                    rows.append(PgRow({k: _pg_value(v) for k, v in d.items()}))
            return PgCursor(rows, -1)
        if " RETURNING " in sql.upper():
            sql = "WITH q AS (%s) SELECT row_to_json(q)::text FROM q" % sql
            out = psql(self.uri, sql)
            rows = [PgRow({k: _pg_value(v) for k, v in json.loads(l).items()})
                    for l in out.splitlines() if l.strip()]
            return PgCursor(rows, len(rows))
        psql(self.uri, sql)
        return PgCursor([], -1)

    def commit(self):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def db_connect(location, timeout=5, ro=False):
    """A connection to the store at location (file or postgresql:// URI)."""
    if is_pg(location):
        return PgConn(location)
    if ro:
        return sqlite3.connect("file:%s?mode=ro" % location, uri=True, timeout=timeout)
    return sqlite3.connect(location, timeout=timeout)


@contextlib.contextmanager
def store_locked(location):
    """Holds the store's write lock (SQLite: BEGIN IMMEDIATE; PostgreSQL:
    a session holding LOCK TABLE events) until the block ends."""
    if not is_pg(location):
        c = sqlite3.connect(location, timeout=10, isolation_level=None)
        try:
            c.execute("BEGIN IMMEDIATE")
            yield
            c.execute("ROLLBACK")
        finally:
            c.close()
        return
    app = "ih_lock_%d_%d" % (os.getpid(), int(time.time() * 1000))
    holder = subprocess.Popen(
        [PSQL, "-X", "-q", "-d", location, "-c",
         "BEGIN; LOCK TABLE events IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(120)"],
        env=dict(os.environ, PGAPPNAME=app),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while True:
            out = psql(location, "SELECT count(*) FROM pg_locks l JOIN pg_class c"
                       " ON c.oid = l.relation WHERE c.relname = 'events'"
                       " AND l.mode = 'AccessExclusiveLock' AND l.granted")
            if out.strip() not in ("", "0"):
                break
            if time.monotonic() > deadline or holder.poll() is not None:
                raise HarnessError("could not lock the PostgreSQL store")
            time.sleep(0.05)
        yield
    finally:
        # A killed psql would leave its backend asleep holding the lock.
        psql(location, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
             " WHERE application_name = '%s'" % app)
        holder.wait(timeout=30)


def db_exists(location):
    if is_pg(location):
        return True
    return os.path.exists(location)
