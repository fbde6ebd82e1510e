"""Provider-independent end-to-end cases.

A provider test module describes its provider with a Spec subclass (how to
build a valid, an unsigned and a forged delivery for an event id) and calls
run_common(); provider-specific cases (timestamps, rotation formats, where
the id comes from) stay in test_<provider>.py.

A new provider, e.g. tests/e2e/test_github.py, needs little code:

    sys.dont_write_bytecode = True
    from harness import Server, Servers, Tap, bin_dir, sign_github
    import cases

    class GithubSpec(cases.Spec):
        name = "github"
        default_type = "push"
        def body(self, event_id, event_type, pad=0):
            return cases.dumps_pretty({"ref": "refs/heads/main", "pad": "x" * pad})
        def headers(self, server, body, event_id, event_type, secret=None):
            return {"X-GitHub-Delivery": event_id, "X-GitHub-Event": event_type,
                    "X-GitHub-Hook-ID": "1",
                    "X-Hub-Signature-256": sign_github(secret or server.secrets["github"], body)}
        def unsigned_headers(...): same without X-Hub-Signature-256
        def forged_headers(...):   same with "sha256=" + os.urandom(32).hex()
        def db_event_id(self, event_id): return <what the store keys on>

    then in main(): start a Server(bindir, providers=["github"]), call
    cases.run_common(tap, SPEC, srv), provider cases, cases.run_final(...),
    cases.run_failure_modes(tap, SPEC, bindir, servers); see test_stripe.py.
    Print "ok - github: ... # SKIP no github.fcgi" if the binary is absent.
"""

import atexit
import contextlib
import json
import os
import shutil
import sqlite3
import stat
import tempfile
import time

import harness

from harness import Server, check, check_eq, parallel, suite_main

# How long a row may take to be processed to 'done'.
DONE_TIMEOUT = 15.0
# The effect the switch records for a type it has no case for.
UNKNOWN_EFFECT = "recorded_unknown_type"


class Spec:
    """What the common cases need to know about one provider."""

    name = None  # "stripe", ...

    def body(self, event_id, event_type, pad=0):
        """A realistic JSON body for the event (bytes), optionally padded."""
        raise NotImplementedError

    def headers(self, server, body, event_id, event_type, secret=None):
        """Headers of a valid delivery of body (signed with secret or the server's)."""
        raise NotImplementedError

    def unsigned_headers(self, server, body, event_id, event_type):
        """A delivery with the authentication header left out."""
        raise NotImplementedError

    def forged_headers(self, server, body, event_id, event_type):
        """A delivery with a well-formed but wrong signature/token."""
        raise NotImplementedError

    def db_event_id(self, event_id):
        """The event_id the store should hold for this delivery."""
        return event_id

    def event_type(self, event_type):
        """The event_type the store should hold."""
        return event_type

    def new_id(self, tag):
        return "evt_%s_%s" % (tag, os.urandom(6).hex())

    default_type = "test.event"

    # helpers built on the above

    def deliver(self, server, event_id, event_type=None, body=None, secret=None, pad=0):
        event_type = event_type or self.default_type
        if body is None:
            body = self.body(event_id, event_type, pad)
        h = self.headers(server, body, event_id, event_type, secret)
        return server.post(server.url(self.name), body, h), body

    def post(self, server, body, headers):
        """POST body with headers as they are to this provider's URL."""
        return server.post(server.url(self.name), body, headers)


# ------------------------------------------------------------ assertions

def expect_status(r, code, what="response"):
    check(r.status == code, "%s: expected HTTP %d, got %d body=%r"
          % (what, code, r.status, r.body[:300]))


def expect_json_status(r, value, what="response"):
    j = r.json()
    check(j == {"status": value}, "%s: expected body {\"status\":\"%s\"}, got %r"
          % (what, value, r.body[:300]))


def action_folder(suite):
    """The suite's own folder for its actions' output, writable by the
    receivers whichever user they run as; removed when the suite exits."""
    d = tempfile.mkdtemp(prefix="ih-%s-actions-" % suite)
    os.chmod(d, 0o777)
    atexit.register(shutil.rmtree, d, ignore_errors=True)
    return d


def echo_action(pattern, out):
    """An action for the types pattern matches that adds a line, the
    event's id, to the file out at each run."""
    return '%s cat >/dev/null; echo "$IDEMHOOK_EVENT_ID" >> %s' % (pattern, out)


def expect_stored(r, want, srv, spec, eid, what):
    """want 200: r accepted and eid stored once; else r the error want
    and nothing stored."""
    if want == 200:
        expect_accepted(r, what)
        one_row(srv, spec, eid)
    else:
        expect_error(r, want, what)
        no_row(srv, spec, eid)


def note_refused(bad, r, status, srv, provider, event_id, what):
    """For a case that tries many bad inputs and reports them together:
    adds to the list bad what went wrong unless r is status and nothing
    was stored under event_id (as the store keeps it)."""
    if r.status != status:
        bad.append("%s -> %d, expected %d: %r" % (what, r.status, status, r.body[:80]))
    elif srv.rows(provider, event_id):
        bad.append("%s: row written" % what)


def expect_error(r, code, what="response"):
    expect_status(r, code, what)
    j = r.json()
    check(isinstance(j, dict) and j.get("status") == "error"
          and isinstance(j.get("error"), str) and j.get("error"),
          "%s: error body must be {\"status\":\"error\",\"error\":\"<code>\"}, got %r"
          % (what, r.body[:300]))


def expect_accepted(r, what="delivery"):
    expect_status(r, 200, what)
    expect_json_status(r, "accepted", what)


def expect_duplicate(r, what="redelivery"):
    expect_status(r, 200, what)
    expect_json_status(r, "duplicate", what)


def one_row(server, spec, event_id):
    rows = server.rows(spec.name, spec.db_event_id(event_id))
    check(len(rows) == 1, "expected exactly one row for %s/%s, found %d"
          % (spec.name, spec.db_event_id(event_id), len(rows)))
    return rows[0]


def no_row(server, spec, event_id):
    rows = server.rows(spec.name, spec.db_event_id(event_id))
    check(not rows, "a row was written for %s/%s: %r"
          % (spec.name, spec.db_event_id(event_id), rows[:1]))


def as_bytes(v):
    if v is None:
        return None
    if isinstance(v, str):
        return v.encode("utf-8")
    return bytes(v)


def wait_status(spec, srv, stored_id, want="done", timeout=DONE_TIMEOUT):
    """Polls the row stored as stored_id (the id as the store keys it)
    until its status is want; returns the row."""
    deadline = time.monotonic() + timeout
    rows = []
    while time.monotonic() < deadline:
        rows = srv.rows(spec.name, stored_id)
        if len(rows) == 1 and rows[0]["status"] == want:
            return rows[0]
        time.sleep(0.1)
    check(False, "row %s: expected status %r within %.0fs, got %r"
          % (stored_id, want, timeout, [r["status"] for r in rows]))


def effects(srv, row):
    """Kinds of the effects the switch recorded for row (same transaction
    as its move to 'done')."""
    with contextlib.closing(srv.connect_ro()) as c:
        return sorted(k for (k,) in c.execute(
            "SELECT kind FROM effects WHERE event = ?", (row["id"],)))


# ------------------------------------------------------------ common cases

def case_accepted(spec, srv):
    eid = spec.new_id("acc")
    before = time.time()
    r, body = spec.deliver(srv, eid, spec.default_type)
    expect_accepted(r)
    row = one_row(srv, spec, eid)
    check_eq(as_bytes(row.get("payload")), body, "stored payload")
    check_eq(row.get("event_type"), spec.event_type(spec.default_type), "stored event_type")
    # Processing after the answer may be under way when the row is read.
    check(row.get("status") in ("received", "processing", "done"),
          "stored status: expected received/processing/done, got %r"
          % row.get("status"))
    check_eq(row.get("duplicates"), 0, "duplicates of a new event")
    check(row.get("headers") is not None, "headers column is NULL")
    ra = row.get("received_at")
    check(ra is not None, "received_at is NULL")
    if isinstance(ra, (int, float)):
        ts = ra / 1000.0 if ra > 1e11 else ra  # seconds or milliseconds
        check(before - 5 <= ts <= time.time() + 5,
              "received_at %r is not the current time" % ra)


def case_duplicate(spec, srv):
    eid = spec.new_id("dup")
    r1, body = spec.deliver(srv, eid)
    expect_accepted(r1, "first delivery")
    h = spec.headers(srv, body, eid, spec.default_type)
    r2 = srv.post(srv.url(spec.name), body, h)
    expect_duplicate(r2, "second identical delivery")
    row = one_row(srv, spec, eid)
    check_eq(row.get("duplicates"), 1, "duplicates after one redelivery")
    check_eq(as_bytes(row.get("payload")), body, "payload after redelivery")


def case_large_body(spec, srv):
    """A 300 KB body goes through lighttpd in several FastCGI records."""
    eid = spec.new_id("big")
    r, body = spec.deliver(srv, eid, pad=300 * 1024)
    expect_accepted(r)
    row = one_row(srv, spec, eid)
    check_eq(len(as_bytes(row["payload"])), len(body), "stored payload length")
    check(as_bytes(row["payload"]) == body, "stored payload differs from the sent body")


def case_forged(spec, srv):
    eid = spec.new_id("forged")
    body = spec.body(eid, spec.default_type)
    n = srv.count()
    r = srv.post(srv.url(spec.name), body, spec.forged_headers(srv, body, eid, spec.default_type))
    expect_error(r, 401, "forged signature")
    no_row(srv, spec, eid)
    check_eq(srv.count(), n, "row count after a forged delivery")


def case_missing_auth(spec, srv):
    eid = spec.new_id("noauth")
    body = spec.body(eid, spec.default_type)
    r = srv.post(srv.url(spec.name), body, spec.unsigned_headers(srv, body, eid, spec.default_type))
    expect_error(r, 401, "missing signature header")
    no_row(srv, spec, eid)


def case_wrong_secret(spec, srv):
    eid = spec.new_id("wrongkey")
    secret = srv.secrets[spec.name]
    other = secret[:-4] + ("0000" if not secret.endswith("0000") else "1111")
    if spec.name == "standard":
        from harness import standard_secret
        other = standard_secret()
    r, _ = spec.deliver(srv, eid, secret=other)
    expect_error(r, 401, "signed with another secret")
    no_row(srv, spec, eid)


def case_not_json(spec, srv):
    eid = spec.new_id("notjson")
    body = b"this is not json"
    r = srv.post(srv.url(spec.name), body, spec.headers(srv, body, eid, spec.default_type))
    expect_error(r, 400, "signed non-JSON body")
    no_row(srv, spec, eid)


def case_method(spec, srv):
    r = srv.get(srv.url(spec.name))
    expect_error(r, 405, "GET")
    allow = r.header("Allow")
    check(allow is not None and allow.replace(" ", "").upper() == "POST",
          "GET: expected header Allow: POST, got %r" % allow)
    r = srv.request("PUT", srv.url(spec.name), b"{}")
    expect_error(r, 405, "PUT")
    check((r.header("Allow") or "").replace(" ", "").upper() == "POST",
          "PUT: expected header Allow: POST, got %r" % r.header("Allow"))


def case_concurrent(spec, srv, n=50):
    eid = spec.new_id("conc")
    body = spec.body(eid, spec.default_type)
    h = spec.headers(srv, body, eid, spec.default_type)
    results = parallel(n, lambda i: srv.post(srv.url(spec.name), body, h))
    errs = [r for r in results if isinstance(r, Exception) or r is None]
    check(not errs, "%d of %d requests failed: %r" % (len(errs), n, errs[:3]))
    statuses = {}
    for r in results:
        key = (r.status, (r.json() or {}).get("status"))
        statuses[key] = statuses.get(key, 0) + 1
    want = {(200, "accepted"): 1, (200, "duplicate"): n - 1}
    check(statuses == want, "expected %r, got %r" % (want, statuses))
    row = one_row(srv, spec, eid)
    check_eq(row.get("duplicates"), n - 1, "duplicates after %d concurrent deliveries" % n)


def case_concurrent_distinct(spec, srv, n=50):
    """n different events at once: every one accepted and stored."""
    ids = [spec.new_id("many%d" % i) for i in range(n)]
    reqs = []
    for eid in ids:
        body = spec.body(eid, spec.default_type)
        reqs.append((body, spec.headers(srv, body, eid, spec.default_type)))
    results = parallel(n, lambda i: srv.post(srv.url(spec.name), *reqs[i]))
    bad = [(ids[i], r) for i, r in enumerate(results)
           if isinstance(r, Exception) or r is None or r.status != 200
           or (r.json() or {}).get("status") != "accepted"]
    check(not bad, "%d of %d not accepted, e.g. %r" % (len(bad), n, bad[:3]))
    missing = [eid for eid in ids if len(srv.rows(spec.name, spec.db_event_id(eid))) != 1]
    check(not missing, "%d events without exactly one row, e.g. %r" % (len(missing), missing[:3]))


def case_chunked(spec, srv):
    """A chunked request body (no Content-Length from the client)."""
    eid = spec.new_id("chunked")
    body = spec.body(eid, spec.default_type, pad=5000)
    r = srv.post(srv.url(spec.name), body, spec.headers(srv, body, eid, spec.default_type),
                 chunked=True)
    expect_accepted(r, "chunked delivery")
    check_eq(as_bytes(one_row(srv, spec, eid)["payload"]), body, "stored payload")


def case_query_string(spec, srv):
    eid = spec.new_id("qs")
    body = spec.body(eid, spec.default_type)
    r = srv.post(srv.url(spec.name) + "?source=test&x=1", body,
                 spec.headers(srv, body, eid, spec.default_type))
    expect_accepted(r, "delivery to a URL with a query string")


def case_restart(spec, srv, eid_holder):
    """The store survives a restart: a redelivery afterwards is a duplicate."""
    eid = spec.new_id("restart")
    r, body = spec.deliver(srv, eid)
    expect_accepted(r, "before the restart")
    srv.stop()
    srv.start()
    r = srv.post(srv.url(spec.name), body, spec.headers(srv, body, eid, spec.default_type))
    expect_duplicate(r, "redelivery after the restart")
    check_eq(one_row(srv, spec, eid)["duplicates"], 1, "duplicates")


LOG_FIELDS = ("provider=", "event=", "type=", "outcome=", "status=", "ms=")


def case_log_in_errorlog(spec, srv):
    """The request log lines reach lighttpd's server.errorlog.  Lines written
    to the raw fd 2 end up on lighttpd's stderr instead (/dev/null once
    lighttpd daemonizes); the FastCGI stderr stream goes to server.errorlog."""
    lines = srv.log_lines(spec.name)
    if not lines:
        raw = srv.log_lines(spec.name, srv.stderr_text())
        check(False, "no 'provider=%s ... outcome=' line in server.errorlog%s"
              % (spec.name, "; %d such lines went to the raw stderr (fd 2), which a "
                 "daemonized lighttpd connects to /dev/null: write them to the FastCGI "
                 "stderr stream (FCGI_stderr / FCGX_PutS(err)) instead" % len(raw)
                 if raw else ""))


def case_log_lines(spec, srv):
    """One line per request, with the fields; no secret or signature logged.
    Looks in server.errorlog, else in lighttpd's stderr (see above)."""
    import re
    lines = srv.log_lines(spec.name) or srv.log_lines(spec.name, srv.stderr_text())
    sent = srv.sent.get(srv.url(spec.name), 0)
    check(lines, "no 'provider=%s ... outcome=' line in the errorlog or on stderr" % spec.name)
    check(len(lines) == sent, "expected %d request log lines (one per request), found %d"
          % (sent, len(lines)))
    for l in lines:
        missing = [f for f in LOG_FIELDS if f not in l]
        check(not missing, "log line lacks %s: %r" % (missing, l))
        check(re.search(r"status=\d{3}\b", l), "log line without status=NNN: %r" % l)
        check(re.search(r"ms=\d", l), "log line without ms=<number>: %r" % l)
    check(any("status=200" in l and "event=-" not in l for l in lines),
          "no log line with an event id and status=200")
    text = srv.errorlog() + srv.stderr_text()
    for p, s in srv.secrets.items():
        check(s not in text, "the %s secret appears in the logs" % p)
    for env in [srv.env] + list(srv.provider_env.values()):
        for k, v in env.items():
            if "SECRET" in k or "TOKEN" in k:
                check(v not in text, "%s appears in the logs" % k)
    leaked = [s for s in srv.signatures if s in text]
    check(not leaked, "signature values appear in the logs: %r" % leaked[:2])


def case_sanitizers(srv):
    rep = srv.sanitizer_reports()
    if rep:
        # The report itself, so that a failure in CI can be read.
        text = (srv.errorlog() + srv.stderr_text()).splitlines()
        at = next((i for i, l in enumerate(text)
                   if any(m in l for m in harness.SANITIZER_MARKERS)), 0)
        for line in text[at:at + 40]:
            print("# " + line)
    check(not rep, "sanitizer reports in the errorlog: %r" % rep)


def case_db_modes(spec, srv):
    """The server's DB path did not exist: the receiver created the directory
    0700 and the file 0600 (and its -wal/-shm without group/other bits).
    PostgreSQL: the receiver created the schema at this build's version."""
    if harness.is_pg(srv.db):
        with srv.connect_ro() as c:
            v = c.execute("SELECT max(version) FROM idemhook_schema").fetchone()[0]
        check(v is not None and v >= 2, "schema version %r" % v)
        return
    d = os.path.dirname(srv.db)
    check(os.path.isdir(d), "database directory %s was not created" % d)
    check(os.path.exists(srv.db), "database file %s was not created" % srv.db)
    dm = stat.S_IMODE(os.stat(d).st_mode)
    fm = stat.S_IMODE(os.stat(srv.db).st_mode)
    check(dm == 0o700, "database directory mode %04o, expected 0700" % dm)
    check(fm == 0o600, "database file mode %04o, expected 0600" % fm)
    for suffix in ("-wal", "-shm", "-journal"):
        p = srv.db + suffix
        if os.path.exists(p):
            m = stat.S_IMODE(os.stat(p).st_mode)
            check(m & 0o077 == 0, "%s mode %04o gives access to group/others" % (p, m))


def case_wal(spec, srv):
    if harness.is_pg(srv.db):
        # PostgreSQL has no journal mode: the unique index is what counts.
        with srv.connect_ro() as c:
            defs = [d for (d,) in c.execute(
                "SELECT indexdef FROM pg_indexes WHERE tablename = 'events'")]
        check(any("UNIQUE" in d and "(provider, account, event_id)" in d
                  for d in defs),
              "no UNIQUE(provider, account, event_id) on events: %r" % defs)
        return
    with srv.connect_ro() as c:
        mode = c.execute("PRAGMA journal_mode").fetchone()[0]
    check_eq(str(mode).lower(), "wal", "journal_mode")
    with srv.connect_ro() as c:
        idx = c.execute("SELECT sql FROM sqlite_master WHERE tbl_name='events'").fetchall()
    sqls = " ".join((s or "") for (s,) in idx).lower().replace(" ", "")
    check("unique(provider,account,event_id)" in sqls or _has_unique_index(srv),
          "no UNIQUE(provider, account, event_id) on events: %r" % sqls[:300])


def _has_unique_index(srv):
    with srv.connect_ro() as c:
        for (name, uniq) in c.execute("SELECT name, \"unique\" FROM pragma_index_list('events')"):
            if not uniq:
                continue
            cols = [r[2] for r in c.execute("SELECT * FROM pragma_index_info(?)", (name,))]
            if cols == ["provider", "account", "event_id"]:
                return True
    return False


def case_unwritable(spec, bindir, servers):
    """IDEMHOOK_DB under a regular file: 503 + Retry-After, never 200."""
    srv = servers.add(Server(bindir, providers=[spec.name], name="unwritable",
                             db="/dev/null/idemhook/events.db"))
    srv.start()
    eid = spec.new_id("unwr")
    for attempt in (1, 2):
        r, _ = spec.deliver(srv, eid)
        expect_error(r, 503, "attempt %d with an unwritable store" % attempt)
        ra = r.header("Retry-After")
        check(ra is not None and ra.strip().isdigit(),
              "503 without a numeric Retry-After header (got %r)" % ra)
    case_sanitizers(srv)


def case_locked(spec, bindir, servers, busy_ms=200, hold_s=1.5):
    """Another process holds the write lock longer than IDEMHOOK_BUSY_TIMEOUT_MS:
    503 + Retry-After; after release the retry is accepted."""
    srv = servers.add(Server(bindir, providers=[spec.name], name="locked",
                             env={"IDEMHOOK_BUSY_TIMEOUT_MS": str(busy_ms)}))
    srv.start()
    r, _ = spec.deliver(srv, spec.new_id("prelock"))
    expect_accepted(r, "delivery before the lock")
    eid = spec.new_id("locked")
    with harness.store_locked(srv.db):
        t0 = time.monotonic()
        r, _ = spec.deliver(srv, eid)
        took = time.monotonic() - t0
        expect_error(r, 503, "delivery while the store is locked")
        check(r.header("Retry-After") is not None, "503 without Retry-After")
        check(took < hold_s + 3, "503 took %.1fs with a %d ms busy timeout" % (took, busy_ms))
    no_row(srv, spec, eid)
    r, body = spec.deliver(srv, eid)  # a retry: freshly signed
    expect_accepted(r, "retry after the lock was released")
    row = one_row(srv, spec, eid)
    check_eq(row.get("duplicates"), 0, "duplicates after 503 + retry")
    case_sanitizers(srv)


def case_processed(spec, srv):
    """Accepted, stored byte-identical, then processed to 'done' with the
    default type; returns the row."""
    eid = spec.new_id("done")
    r, body = spec.deliver(srv, eid)
    expect_accepted(r)
    row = wait_status(spec, srv, spec.db_event_id(eid))
    check_eq(as_bytes(row["payload"]), body, "stored payload")
    check_eq(row["event_type"], spec.default_type, "event_type")
    return row


def case_rotation(spec, srv, var, label="signed with ", unknown=None,
                  unknown_what="signed with an unknown third secret"):
    """Deliveries signed with var's secret and with var_2's are both
    accepted; with unknown (a function giving a secret neither holds), one
    signed with that -> 401, nothing written."""
    for what, s in ((var, srv.secrets[spec.name]),
                    (var + "_2", srv.provider_env[spec.name][var + "_2"])):
        eid = spec.new_id("rot")
        r, _ = spec.deliver(srv, eid, secret=s)
        expect_accepted(r, label + what)
        one_row(srv, spec, eid)
    if unknown is not None:
        eid = spec.new_id("rot")
        r, _ = spec.deliver(srv, eid, secret=unknown())
        expect_error(r, 401, unknown_what)
        no_row(srv, spec, eid)


AUTH_TITLES = ("forged signature -> 401, nothing written",
               "missing signature header -> 401",
               "wrong secret -> 401")


def run_common(tap, spec, srv, auth_titles=AUTH_TITLES, not_json=True):
    """Cases on the main server (default limits); call before log checks.
    auth_titles name the forged/missing/wrong-secret cases; not_json=False
    leaves out 'signed non-JSON body -> 400' (Asaas quarantines it)."""
    p = spec.name + ": "
    tap.run(p + "accepted: 200, one row, payload byte-identical", case_accepted, spec, srv)
    tap.run(p + "DB directory 0700 and file 0600 when created", case_db_modes, spec, srv)
    tap.run(p + "DB is WAL with UNIQUE(provider,account,event_id)", case_wal, spec, srv)
    tap.run(p + "duplicate: identical redelivery -> duplicate, one row, duplicates=1",
            case_duplicate, spec, srv)
    tap.run(p + "300 KB body accepted byte-identical", case_large_body, spec, srv)
    forged, missing, wrong = auth_titles
    tap.run(p + forged, case_forged, spec, srv)
    tap.run(p + missing, case_missing_auth, spec, srv)
    tap.run(p + wrong, case_wrong_secret, spec, srv)
    if not_json:
        tap.run(p + "signed non-JSON body -> 400", case_not_json, spec, srv)
    tap.run(p + "GET/PUT -> 405 with Allow: POST", case_method, spec, srv)
    tap.run(p + "50 concurrent deliveries of one event -> 1 accepted, 49 duplicate",
            case_concurrent, spec, srv)
    tap.run(p + "50 concurrent distinct events -> 50 accepted, 50 rows",
            case_concurrent_distinct, spec, srv)
    tap.run(p + "chunked request body accepted byte-identical", case_chunked, spec, srv)
    tap.run(p + "URL with a query string accepted", case_query_string, spec, srv)


def case_fail_closed(spec, bindir, servers):
    """Misconfiguration never accepts: an unparsable setting, or an empty
    secret (with a delivery signed by that empty key), gives no 2xx and
    writes nothing."""
    bad = []
    for what, kw in (("IDEMHOOK_TOLERANCE=abc", {"env": {"IDEMHOOK_TOLERANCE": "abc"}}),
                     ("IDEMHOOK_MAX_BODY=-1", {"env": {"IDEMHOOK_MAX_BODY": "-1"}}),
                     ("empty secret", {"secrets": {spec.name: ""}})):
        srv = servers.add(Server(bindir, providers=[spec.name], name="misconfigured", **kw))
        try:
            srv.start()
        except Exception:  # noqa: BLE001 - refusing to start is fail-closed too
            continue
        eid = spec.new_id("misconf")
        r, _ = spec.deliver(srv, eid, secret=srv.secrets[spec.name] or None)
        if 200 <= r.status < 300:
            bad.append("%s -> %d %r" % (what, r.status, r.body[:80]))
        elif srv.rows(spec.name, spec.db_event_id(eid)):
            bad.append("%s: row written" % what)
        srv.cleanup()
    check(not bad, "accepted while misconfigured: " + "; ".join(bad))


def run_failure_modes(tap, spec, bindir, servers):
    p = spec.name + ": "
    tap.run(p + "DB unwritable (under /dev/null) -> 503 with Retry-After",
            case_unwritable, spec, bindir, servers)
    tap.run(p + "DB locked past IDEMHOOK_BUSY_TIMEOUT_MS -> 503, retry after release -> 200",
            case_locked, spec, bindir, servers)
    tap.run(p + "misconfiguration (bad setting, empty secret) never accepts",
            case_fail_closed, spec, bindir, servers)


def run_final(tap, spec, srv):
    """Cases that inspect what the other cases left in the errorlog."""
    p = spec.name + ": "
    tap.run(p + "request log lines reach lighttpd's server.errorlog",
            case_log_in_errorlog, spec, srv)
    tap.run(p + "one log line per request with provider/event/type/outcome/status/ms, no secrets",
            case_log_lines, spec, srv)
    tap.run(p + "no sanitizer reports in the errorlog", case_sanitizers, srv)
    tap.run(p + "store survives a lighttpd restart: redelivery -> duplicate",
            case_restart, spec, srv, None)


def run_provider_suite(spec, extra_cases, provider_env=None, vector=None,
                       common_kw=None):
    """main() of a provider's test module: checks the binary is there,
    runs vector (a (title, fn) pair, no server), starts the main server
    (shipped config, provider_env for spec.name), run_common(**common_kw),
    each (title, fn, *args) of extra_cases as fn(srv, *args), run_final,
    then run_failure_modes.  Titles are prefixed "<name>: ".  Returns the
    exit code."""
    p = spec.name + ": "

    def run(tap, bindir, servers):
        if vector is not None:
            tap.run(p + vector[0], vector[1])
        srv = servers.add(Server(bindir, providers=[spec.name], name="main",
                                 provider_env={spec.name: provider_env or {}}))
        if tap.run(p + "lighttpd starts with the shipped config", srv.start):
            run_common(tap, spec, srv, **(common_kw or {}))
            for title, fn, *args in extra_cases:
                tap.run(p + title, fn, srv, *args)
            run_final(tap, spec, srv)
            srv.stop()
        run_failure_modes(tap, spec, bindir, servers)

    return suite_main(spec.name, run, needs=(spec.name + ".fcgi",))


def dumps_pretty(obj):
    """JSON the way Stripe sends it: 2-space indent, spaces after colons."""
    return (json.dumps(obj, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
