"""Paths, the providers, and what every part of the test harness shares:
its error, the binary directory, the sanitizer settings and time limits."""

import os
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(os.path.dirname(HERE))

PROVIDERS = ("stripe", "github", "shopify", "asaas", "standard")


# The lighttpd variable (and environment variable) holding each secret.
SECRET_VAR = {p: "idemhook_%s_secret" % p for p in PROVIDERS}
SECRET_VAR["asaas"] = "idemhook_asaas_token"


def secret_env(provider):
    """IDEMHOOK_STRIPE_SECRET, ..., IDEMHOOK_ASAAS_TOKEN."""
    return SECRET_VAR[provider].upper()

# Environment variables passed from the test's environment to the receivers
# (through lighttpd's bin-copy-environment), so sanitizer settings apply.
SANITIZER_ENV = ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS",
                 "MSAN_OPTIONS", "TSAN_OPTIONS")

# Markers of sanitizer reports in the errorlog.
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                     "runtime error:", "WARNING: ThreadSanitizer",
                     "ERROR: UndefinedBehaviorSanitizer",
                     "WARNING: MemorySanitizer")

HTTP_TIMEOUT = 15.0

# Root is the reference: as root every case runs, and Apache, nginx and
# spawn-fcgi drop to www-data.  As another user they run as that user.
IS_ROOT = os.geteuid() == 0
START_TIMEOUT = 10.0


class HarnessError(Exception):
    pass


def bin_dir(argv=None):
    """Directory of the binaries: argv[1], else $IH_BIN.  Must exist."""
    argv = sys.argv if argv is None else argv
    d = argv[1] if len(argv) > 1 else os.environ.get("IH_BIN", "")
    if not d:
        raise HarnessError("no binary directory: pass it as argument or set IH_BIN")
    d = os.path.abspath(d)
    if not os.path.isdir(d):
        raise HarnessError("IH_BIN %r is not a directory" % d)
    return d
