"""End-to-end harness for idemhook: a real lighttpd in front of the receivers.

Python 3 standard library only.  What it gives a test module:

  Server(...)            a lighttpd started from a generated top-level config
                         that sets the var.idemhook_* variables and includes
                         the shipped www-config/lighttpd/*.conf unchanged.
  server.post(...)       HTTP through http.client, with timeouts.
  server.rows(...)       read-only queries on the store, whichever backend.
  db_connect(location)   a DB-API-like connection to a store: sqlite3 for a
                         file, a psql-backed one for a postgresql:// URI.
  IH_DB_BACKEND=pg       every Server without an explicit db gets a fresh
                         database on the PostgreSQL server at IH_PG_URI
                         (tests/run.sh starts one) instead of a SQLite file.
  server.errorlog()      lighttpd's server.errorlog (receivers' stderr).
  sign_stripe, sign_github, sign_shopify, sign_standard, ASAAS_TOKEN_HEADER
                         signers for the five providers.
  Tap                    TAP-style reporting ("ok - name" / "not ok - name").

The directory of binaries comes from IH_BIN (or the first argument of the
test script); nothing outside the repository is referenced.

This module is a facade: the harness lives in the package ihtest/, one
module per job (signing, TAP, HTTP, processes, the store, one launcher
per web server; see ihtest/__init__.py).  Every name the harness has
ever offered is re-exported here, so tests keep importing from harness.
"""

# noqa: F401 throughout: these imports are the module's interface.  The
# standard modules the single-file harness imported stay reachable as its
# attributes too (tests use harness.tempfile and harness.shutil).
import atexit  # noqa: F401
import base64  # noqa: F401
import contextlib  # noqa: F401
import hashlib  # noqa: F401
import hmac  # noqa: F401
import http.client  # noqa: F401
import json  # noqa: F401
import os  # noqa: F401
import shutil  # noqa: F401
import signal  # noqa: F401
import socket  # noqa: F401
import sqlite3  # noqa: F401
import subprocess  # noqa: F401
import sys  # noqa: F401
import tempfile  # noqa: F401
import threading  # noqa: F401
import time  # noqa: F401
import traceback  # noqa: F401

from ihtest.common import (  # noqa: F401
    HERE, HTTP_TIMEOUT, IS_ROOT, PROVIDERS, REPO, SANITIZER_ENV,
    SANITIZER_MARKERS, SECRET_VAR, START_TIMEOUT, HarnessError, bin_dir,
    secret_env)
from ihtest.store import (  # noqa: F401
    PgConn, PgCursor, PgError, PgRow, _pg_seq, _pg_value, db_connect,
    db_exists, schema_version, is_pg, pg_admin_uri, pg_backend, pg_bind, pg_literal,
    pg_new_db, pg_uri, psql, store_locked)
from ihtest.sign import (  # noqa: F401
    ASAAS_TOKEN_HEADER, VECTORS, check_vector, default_secret, hmac_sha256,
    sign_github, sign_github_sha1, sign_shopify, sign_standard, sign_stripe,
    standard_key, standard_secret, stripe_body, stripe_sdk_header,
    stripe_v1)
from ihtest.strace import (  # noqa: F401
    LINE, accepted_after_sync, answers_after_commit, processes,
    strace_missing, strace_wrap, thread_traces, traces, wal_fds,
    wal_writes)
from ihtest.tap import Tap, check, check_eq  # noqa: F401
from ihtest.docs import (  # noqa: F401
    DOCS, Settings, anchors, cron_commands, doc_blocks, links, markdown_files, readme_blocks,
    recipe, recipe_home, shell_commands, slug)
from ihtest.http import (  # noqa: F401
    Response, free_port, parallel, recv_all, wait_port)
from ihtest.procs import (  # noqa: F401
    _STAGED, _SUBREAPER, Servers, _alive, _children_of, _reap,
    become_subreaper, daemon_env, install_signal_cleanup, link_or_copy,
    program_of, reach_problem, server_group, server_user, staged_programs,
    suite_main, wait_or_kill_group)
from ihtest.servers.lighttpd import (  # noqa: F401
    CONF_DIR, Server, conf_array, conf_list, conf_str, console_conf,
    env_file_text)
from ihtest.servers.apache import (  # noqa: F401
    APACHE_CONF_DIR, APACHE_MODULES, ApacheServer, apache_quote)
from ihtest.servers.nginx import NGINX_CONF_DIR, NginxServer  # noqa: F401
