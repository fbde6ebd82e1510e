#!/usr/bin/env python3
"""checksrc.py -- the house style of idemhook's C, checked in the manner
of curl's checksrc: one pass per file, one "file:line: message" per
violation, exit status 1 when there is any.

    tests/lint/checksrc.py [--pending LIST] FILE...

The rules (each has a name, shown in brackets after the message):

  long-line     a line wider than 80 columns (tabs stop every 8)
  assign-cond   an assignment inside the condition of an if or a while
                (do the assignment first, then test the variable)
  contract      a header (.h) that does not open with its contract: a
                comment whose first line is "NAME.h -- what it is for"
  banned        a call to a function the project never uses: strcpy,
                strcat, sprintf, vsprintf, gets, strtok, atoi, atol,
                sscanf (unbounded, or silent on bad input)
  long-file     a file of more than 700 lines, reported at line 701:
                a file that long holds more than one job; split it by
                job into well-named modules (issue 28)

Comments, strings and character constants are blanked before the
assign-cond and banned rules look at the code, so that prose and
messages never trip them.

--pending LIST names violations that are known and owned by someone
else's work in progress, as lines "FILE RULE COUNT -- why".  They are
still printed, marked "(pending)", but do not fail the run.  A file with
more violations of a rule than its count fails, and so does an entry
that is no longer needed (fewer violations than its count), so that the
list only ever shrinks and nothing is excused silently.
"""
import os
import re
import sys

MAX_COLUMNS = 80
MAX_LINES = 700
BANNED = ("strcpy", "strcat", "sprintf", "vsprintf", "gets", "strtok",
          "atoi", "atol", "sscanf")
BANNED_RE = re.compile(r"(?<![\w.>])(%s)\s*\(" % "|".join(BANNED))
# '=' that is an assignment: not part of ==, !=, <=, >=; compound
# assignments (+=, <<=, ...) count as assignments.
ASSIGN_RE = re.compile(r"(?<![=!<>])=(?!=)")
COND_RE = re.compile(r"\b(if|while)\s*\(")


def columns(line):
    """The width of line on a terminal with tab stops every 8."""
    return len(line.expandtabs(8))


def blank_code(text):
    """text with comments, strings and character constants replaced by
    spaces (newlines kept), so that offsets and line numbers still
    match the original."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) +
                       text[j - 1:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def condition_end(code, start):
    """The offset of the ')' that closes the '(' at start, or -1."""
    depth = 0
    for j in range(start, len(code)):
        if code[j] == "(":
            depth += 1
        elif code[j] == ")":
            depth -= 1
            if depth == 0:
                return j
    return -1


def check_header_contract(path, lines):
    name = os.path.basename(path)
    if not lines or not lines[0].startswith("/*"):
        return [(1, "a header opens with its contract comment "
                 "(\"/*\" then \" * %s -- what it is for\")" % name,
                 "contract")]
    first = lines[0][2:].strip() or (lines[1] if len(lines) > 1 else "")
    first = first.strip().lstrip("*").strip()
    if not first.startswith(name + " -- "):
        return [(1 if lines[0][2:].strip() else 2,
                 "the contract's first line names the header: "
                 "\"%s -- what it is for\"" % name, "contract")]
    return []


def check(path):
    """Returns the violations in path as (line, message, rule) tuples."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    lines = text.split("\n")
    found = []
    nlines = text.count("\n") + (0 if text.endswith("\n") or not text
                                 else 1)
    if nlines > MAX_LINES:
        found.append((MAX_LINES + 1, "file is %d lines, over %d: split it "
                      "by job" % (nlines, MAX_LINES), "long-file"))
    for no, line in enumerate(lines, 1):
        if columns(line) > MAX_COLUMNS:
            found.append((no, "line is %d columns, over %d"
                          % (columns(line), MAX_COLUMNS), "long-line"))
    if path.endswith(".h"):
        found += check_header_contract(path, lines)
    code = blank_code(text)
    for m in BANNED_RE.finditer(code):
        found.append((line_of(code, m.start()),
                      "banned function %s()" % m.group(1), "banned"))
    for m in COND_RE.finditer(code):
        open_at = m.end() - 1
        close_at = condition_end(code, open_at)
        if close_at < 0:
            continue
        cond = code[open_at + 1:close_at]
        a = ASSIGN_RE.search(cond)
        if a:
            found.append((line_of(code, open_at + 1 + a.start()),
                          "assignment inside the condition of %s"
                          % m.group(1), "assign-cond"))
    return sorted(found)


def read_pending(path):
    """{(file, rule): count} from a --pending list."""
    pending = {}
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            line = line.split("--", 1)[0].strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            if len(parts) != 3 or not parts[2].isdigit():
                raise SystemExit("%s:%d: give FILE RULE COUNT -- why"
                                 % (path, no))
            pending[(parts[0], parts[1])] = int(parts[2])
    return pending


def main(argv):
    args = argv[1:]
    pending = {}
    if len(args) >= 2 and args[0] == "--pending":
        pending = read_pending(args[1])
        args = args[2:]
    if not args:
        sys.stderr.write("usage: checksrc.py [--pending LIST] FILE...\n")
        return 2
    bad = 0
    seen = {}
    for path in args:
        for no, msg, rule in check(path):
            key = (path, rule)
            seen[key] = seen.get(key, 0) + 1
            if seen[key] <= pending.get(key, 0):
                print("%s:%d: %s [%s] (pending)" % (path, no, msg, rule))
                continue
            print("%s:%d: %s [%s]" % (path, no, msg, rule))
            bad += 1
    for (path, rule), count in sorted(pending.items()):
        if path in args and seen.get((path, rule), 0) < count:
            print("%s: %d pending %s violation(s) listed, %d found: "
                  "lower the count in the pending list"
                  % (path, count, rule, seen.get((path, rule), 0)))
            bad += 1
    if bad:
        print("checksrc: %d problem(s)" % bad, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
