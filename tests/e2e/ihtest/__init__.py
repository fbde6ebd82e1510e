"""ihtest -- the end-to-end test harness of idemhook, one module a job.

  common    paths, PROVIDERS, HarnessError, bin_dir, sanitizer settings
  store     the store, whichever backend (SQLite file or PostgreSQL URI)
  sign      the providers' signers and their published test vectors
  strace    reading strace output: answers after WAL syncs
  tap       TAP output (Tap) and the checks (check, check_eq)
  docs      the documentation: recipes marked in the READMEs, links, anchors
  http      Response, ports, reading a socket to its end, requests in parallel
  procs     the servers' processes: users, staging, reaping, cleanup
  servers/  one launcher per web server: lighttpd (Server, the base of
            the others), apache (ApacheServer), nginx (NginxServer)

Tests import these names from tests/e2e/harness.py, which re-exports
every one of them, so a test never needs to know which module holds
what.  Python 3 standard library only.
"""
