"""sort, uniq, tr, gzip, sed and awk: the basics one-liners and kubernetes.io's examples use."""

from __future__ import annotations

import pytest

from tests.userland.test_shell import new_shell, run


@pytest.mark.parametrize("line, stdout", [
    ("seq 10 | sort -rn | head -n 3", "10\n9\n8\n"),
    ("printf 'b\\na\\nc\\n' | sort", "a\nb\nc\n"),
    ("printf 'x 2\\ny 1\\n' | sort -k 2", "y 1\nx 2\n"),
    ("printf 'b\\na\\nb\\nb\\n' | sort | uniq -c", "      1 a\n      3 b\n"),
    ("printf 'a\\na\\nb\\n' | uniq -d", "a\n"),
    ("echo Hello | tr a-z A-Z", "HELLO\n"),
    ("echo 'a  b' | tr -s ' '", "a b\n"),
    ("echo hello | tr -d l", "heo\n"),
    ("echo hello world | sed s/world/there/", "hello there\n"),
    ("echo aaa | sed 's/a/b/2'", "aba\n"),
    ("echo aaa | sed 's/a/b/g'", "bbb\n"),
    ("seq 6 | sed -n '2,4p'", "2\n3\n4\n"),
    ("seq 3 | sed 2d", "1\n3\n"),
    ("seq 5 | sed -n '/3/,$p'", "3\n4\n5\n"),
    ("echo x=1 | sed -E 's/(x)=([0-9])/\\2=\\1/'", "1=x\n"),
    ("echo 'x=1' | sed 's/\\(x\\)=/\\1 is /'", "x is 1\n"),
    ("echo abc | sed 's/b/[&]/'", "a[b]c\n"),
    ("seq 3 | sed q", "1\n"),
    ("printf 'a b\\nc d\\n' | awk '{print $2, NR}'", "b 1\nd 2\n"),
    ("seq 10 | awk '{s += $1} END {print s}'", "55\n"),
    ("echo a:b:c | awk -F: '{print $NF, NF}'", "c 3\n"),
    ("seq 5 | awk '$1 > 3'", "4\n5\n"),
    ("seq 4 | awk 'NR % 2 == 0 { print \"even\", $0 }'", "even 2\neven 4\n"),
    ("printf 'GET /a\\nPOST /b\\n' | awk '/POST/ {print $2}'", "/b\n"),
    ("awk 'BEGIN { printf \"%d items\\n\", 3 }'", "3 items\n"),
    ("echo hello | awk '{ print toupper(substr($0, 1, 1)) length($0) }'", "H5\n"),
    ("seq 3 | awk '{ if ($1 == 2) print \"two\"; else print \"not\" }'", "not\ntwo\nnot\n"),
    ("echo hi | gzip | gunzip", "hi\n"),
    ("echo hi > /tmp/f; gzip /tmp/f; ls /tmp; zcat /tmp/f.gz; gunzip /tmp/f.gz; cat /tmp/f", "f.gz\nhi\nhi\n"),
])
def test_filters(line, stdout):
    assert run(line) == (stdout, "", 0)


@pytest.mark.parametrize("line, stderr, code", [
    ("sed 'k'", "sed: unknown command: 'k'\n", 1),
    ("sed 's/a/b'", "sed: unmatched '/'\n", 1),
    ("sed p /nope", "sed: can't open '/nope': No such file or directory\n", 2),
    ("awk '{print $1'", "awk: cmd. line:1: syntax error\n", 2),
    ("awk 1 /nope", 'awk: cannot open "/nope" (No such file or directory)\n', 2),
    ("gzip /nope", "gzip: /nope: No such file or directory\n", 1),
    ("echo plain | gunzip", "gunzip: invalid magic\n", 1),
    ("sort /nope", "sort: can't open '/nope': No such file or directory\n", 2),
])
def test_their_errors_are_busybox_s(line, stderr, code):
    assert run(line)[1:] == (stderr, code)


def test_sed_edits_in_place():
    shell = new_shell()
    run("echo 'color: red' > /tmp/c", shell)
    assert run("sed -i s/red/blue/ /tmp/c; cat /tmp/c", shell) == ("color: blue\n", "", 0)
