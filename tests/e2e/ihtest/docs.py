"""The documentation as the tests read it: the recipes marked in the
README and the folder READMEs, and the links and anchors of every
Markdown file.

A recipe is the fenced blocks marked, each just above it, with

    <!-- recipe: NAME -->                a shell block: run as root, line by line
    <!-- recipe: NAME file=PATH -->      a file: written to PATH as it stands
    <!-- recipe: NAME settings=PATH -->  settings lines: each NAME=value
                                         replaces NAME's line of PATH, or is
                                         added (a Settings path)

A mark and its block may be indented, as in a numbered step; the
block's lines lose the fence's indentation.

DOCS lists where recipes may be marked, in reading order: the short
recipes are in README.md, their variants in www-config/README.md, the
catch-up cron lines in handlers/README.md.
"""

import os
import re
import subprocess

from .common import REPO, HarnessError

DOCS = tuple(os.path.join(REPO, p) for p in (
    "README.md", "www-config/README.md", "handlers/README.md", "db/README.md"))
MARK = re.compile(r"^( *)<!-- recipe: ([\w-]+)(?: (file|settings)=(\S+))? -->\s*$")


class Settings(str):
    """The path of a settings= block: its lines are merged into the
    file, not written over it."""


def doc_blocks(path):
    """[(recipe, file or None, text)] of one Markdown file, in its order."""
    out = []
    with open(path) as f:
        lines = f.read().split("\n")
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        i += 1
        if not m:
            continue
        ind = m.group(1)
        if i >= len(lines) or not lines[i].startswith(ind + "```"):
            raise HarnessError("%s: no code block after %r"
                               % (os.path.relpath(path, REPO), lines[i - 1]))
        j = i + 1
        while j < len(lines) and not lines[j].startswith(ind + "```"):
            j += 1
        body = [l[len(ind):] if l.startswith(ind) else l.lstrip() for l in lines[i + 1:j]]
        where = m.group(4)
        if m.group(3) == "settings":
            where = Settings(where)
        out.append((m.group(2), where, "\n".join(body) + "\n"))
        i = j + 1
    return out


def readme_blocks(paths=DOCS):
    """[(recipe, file or None, text)] of every file of paths, in order."""
    return [b for p in paths for b in doc_blocks(p)]


def recipe_home(name, paths=DOCS):
    """The files that mark blocks of recipe name."""
    return [p for p in paths if any(r == name for r, _, _ in doc_blocks(p))]


def recipe(name, paths=DOCS):
    """[(file or None, text)]: the blocks of recipe name, in order."""
    blocks = [(f, t) for r, f, t in readme_blocks(paths) if r == name]
    if not blocks:
        raise HarnessError("no block marked <!-- recipe: %s --> in %s"
                           % (name, ", ".join(os.path.relpath(p, REPO) for p in paths)))
    return blocks


def shell_commands(text):
    """The commands of a shell block: continuation lines joined, blank
    lines and whole-line comments dropped (trailing comments are the
    shell's business)."""
    cmds, cur = [], ""
    for line in text.split("\n"):
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        cur += line
        if cur.strip() and not cur.strip().startswith("#"):
            cmds.append(cur.strip())
        cur = ""
    return cmds


def cron_commands(text):
    """The commands of crontab lines (the five time fields dropped)."""
    out = []
    for line in text.split("\n"):
        if line.strip() and not line.lstrip().startswith("#"):
            out.append(line.split(None, 5)[5])
    return out


# Links and anchors, as GitHub renders them.

def markdown_files():
    """Every tracked Markdown file (git ls-files; without git, every
    *.md under the checkout but build folders and node_modules)."""
    try:
        r = subprocess.run(["git", "-C", REPO, "ls-files", "-z", "--", "*.md"],
                           capture_output=True, timeout=60)
        if r.returncode == 0:
            names = [n for n in r.stdout.decode().split("\0") if n]
            return sorted(os.path.join(REPO, n) for n in names
                          if os.path.exists(os.path.join(REPO, n)))
    except OSError:
        pass
    out = []
    for d, dirs, files in os.walk(REPO):
        dirs[:] = [x for x in dirs if x not in (".git", "node_modules")
                   and not x.startswith("build")]
        out += [os.path.join(d, f) for f in files if f.endswith(".md")]
    return sorted(out)


FENCE = re.compile(r"^ {0,3}(```+|~~~+)")


def prose_lines(text):
    """The lines outside fenced code blocks, as (line number, line)."""
    out, fence = [], None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if m:
            if fence is None:
                fence = m.group(1)[0] * 3
            elif m.group(1).startswith(fence):
                fence = None
            continue
        if fence is None:
            out.append((n, line))
    return out


def slug(heading):
    """GitHub's anchor of a heading: lower case, inline markup's
    characters and every punctuation but '-' and '_' dropped, each space
    a '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())
    text = text.lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
EXPLICIT = re.compile(r"""<a\s+(?:name|id)=["']([^"']+)["']""")


def anchors(path):
    """The anchors of a Markdown file: each heading's slug (a repeated
    one gets -1, -2, ...) and each <a name=...> or id=...."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    seen, out = {}, set()
    for _, line in prose_lines(text):
        m = HEADING.match(line)
        if m:
            s = slug(m.group(2))
            k = seen.get(s, 0)
            seen[s] = k + 1
            out.add(s if k == 0 else "%s-%d" % (s, k))
        out.update(EXPLICIT.findall(line))
    return out


LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s|$)")


def links(path):
    """[(line number, target)] of every inline link, image and
    reference definition outside code (inline code spans dropped)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    out = []
    for n, line in prose_lines(text):
        line = re.sub(r"`[^`]*`", "", line)
        out += [(n, t) for t in LINK.findall(line)]
        m = REFDEF.match(line)
        if m:
            out.append((n, m.group(1)))
    return out
