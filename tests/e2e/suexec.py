"""Shared hosting as it really is: Debian's Apache with mod_userdir and
apache2-suexec-custom, a real account whose ~/public_html holds the
shipped .htaccess and the programs, which Apache runs as that account.

SuexecSite(bindir, mode) prepares, in a private mount namespace (see
test_recipes.Namespace: overlays on /etc, /var, /run, /usr/local and
/home, so the account, its home and Apache's state vanish afterwards):

  the host's part   Listen on a free loopback port, then the documented
                    host's side as written (www-config/README.md,
                    <!-- recipe: shared-host -->: the packages, Apache
                    started as at their install, a2enmod userdir suexec
                    rewrite fcgid, the README's AllowOverride line in
                    userdir.conf, suEXEC allowing programs in
                    public_html, a full restart); mode "cgi" then swaps
                    fcgid for cgi (cgid under the threaded MPM); a new
                    account (useradd);
  the upload        the programs and www-config/ in ~/idemhook-build, as
                    the README's shared-hosting recipe expects them.

run_as_user() then runs the README's own commands as the account.
Needs root (useradd, mount); the caller uses tap.run_as_root.
"""

import os
import re
import shutil
import subprocess
import tempfile

from harness import REPO, check, free_port
from test_recipes import Namespace, deps_list, recipe, run_recipe, shell_commands


class SuexecSite:
    def __init__(self, bindir, mode):
        if mode not in ("fcgid", "cgi"):
            raise ValueError("mode is fcgid or cgi")
        self.mode = mode
        self.bindir = bindir
        self.user = "ihsite"
        self.home = "/home/" + self.user
        self.ns = Namespace("suexec-" + mode)
        self.port = free_port()
        self.base = "http://127.0.0.1:%d/~%s" % (self.port, self.user)

    # -- the host's part, as root

    def host_setup(self):
        ns = self.ns
        p = "/etc/apache2/ports.conf"
        ns.write(p, re.sub(r"(?m)^Listen 80$", "Listen 127.0.0.1:%d" % self.port, ns.read(p)))
        pkgs = run_recipe(ns, "shared-host", {}, self.port)
        check(set(pkgs) == deps_list("shared-host"), "the host's side installs %s, not "
              "tests/deps.sh --list shared-host" % sorted(pkgs))
        if self.mode == "cgi":
            ns.run("a2dismod -q fcgid && a2enmod -q cgi")
        # The README's AllowOverride line, exactly, for every public_html.
        (_, line), = recipe("allowoverride")
        text = ns.read("/etc/apache2/mods-available/userdir.conf")
        check(re.findall(r"(?m)^\s*AllowOverride .*$", text) == ["\t" + line.strip()],
              "userdir.conf's AllowOverride lines after the host's side: %r"
              % re.findall(r"(?m)^\s*AllowOverride .*$", text))
        # suEXEC: programs anywhere in public_html (Debian's default is cgi-bin).
        check(ns.read("/etc/apache2/suexec/www-data").split("\n")[1] == "public_html",
              "suEXEC's second line is not public_html")
        ns.run("useradd -m -d %s -s /bin/sh %s" % (self.home, self.user))
        ns.run("chmod 0711 %s" % self.home)
        # The upload, as the README's shared-upload block makes it, on a
        # "build machine" of our own: a folder whose build/static is the
        # programs under test (which this machine's libraries can run)
        # and whose www-config is the checkout's; make static (done by
        # make check, or not: these programs stand in) and the copy to
        # the host (scp) are the only lines not run.
        up = tempfile.mkdtemp(prefix="ih-upload-", dir=ns.tmp)
        os.makedirs(os.path.join(up, "build"))
        os.symlink(os.path.abspath(self.bindir), os.path.join(up, "build", "static"))
        os.symlink(os.path.join(REPO, "www-config"), os.path.join(up, "www-config"))
        for _, text in recipe("shared-upload"):
            for cmd in shell_commands(text):
                if cmd.startswith(("make static", "scp ")):
                    continue
                r = subprocess.run(["sh", "-c", cmd], cwd=up, capture_output=True, text=True,
                                   timeout=60)
                check(r.returncode == 0, "%r: %s" % (cmd, r.stderr[-300:]))
        got = os.path.join(up, "idemhook-build")
        names = sorted(os.listdir(got))
        check("idemhook" in names and "stripe.fcgi" in names and "www-config" in names
              and not any(n in ("obj", "build") or n.endswith((".o", ".a")) for n in names),
              "the upload holds %r" % names)
        shutil.copytree(got, ns.path(self.home + "/idemhook-build"), symlinks=False)
        ns.run("chown -R %s: %s/idemhook-build" % (self.user, self.home))

    def start(self):
        # A full stop and start: mode cgi enabled a module since the
        # host's side started Apache.
        self.ns.run("apachectl configtest && /etc/init.d/apache2 restart")

    # -- the account's part

    def run_as_user(self, cmd, check_rc=True):
        return self.ns.run("/usr/sbin/runuser -u %s -- env -i HOME=%s PATH=/usr/bin:/bin "
                           "SHELL=/bin/sh sh -c %s" % (self.user, self.home,
                                                       _q("cd && " + cmd)),
                           check_rc=check_rc, cwd="/")

    def recipe_as_user(self, name):
        for _, text in recipe(name):
            for cmd in shell_commands(text):
                if self.mode == "cgi":
                    # The README: "cgi.htaccess without mod_fcgid".
                    cmd = cmd.replace("fcgid.htaccess", "cgi.htaccess")
                self.run_as_user(cmd)

    def uid(self):
        return os.stat(self.ns.path(self.home)).st_uid

    def close(self):
        self.ns.close()


def _q(s):
    return "'" + s.replace("'", "'\\''") + "'"
