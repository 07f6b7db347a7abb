"""printf, seq and date +FORMAT, as busybox prints them (fake clock)."""

from __future__ import annotations

import pytest

from control.clock import FakeClock
from tests.userland.test_shell import new_shell, run


@pytest.mark.parametrize("line, stdout, stderr, code", [
    ('printf "%s-%03d\\n" a 7 b 9', "a-007\nb-009\n", "", 0),
    ('printf "%5.2f|%x|%c|%%\\n" 3.14159 255 xyz', " 3.14|ff|x|%\n", "", 0),
    ('printf "%-4s|\\n" ab', "ab  |\n", "", 0),
    ("printf '%d\\n' abc", "0\n", "printf: invalid number 'abc'\n", 1),
    ("printf", "", "Usage: printf FORMAT [ARG]...\n", 1),
    ("seq 3", "1\n2\n3\n", "", 0),
    ("seq 2 2 7", "2\n4\n6\n", "", 0),
    ("seq -s, 3", "1,2,3\n", "", 0),
    ("seq -w 8 10", "08\n09\n10\n", "", 0),
    ("seq 3 -1 1", "3\n2\n1\n", "", 0),
    ("seq 0.5 0.5 1.5", "0.5\n1.0\n1.5\n", "", 0),
    ("seq x", "", "seq: invalid number 'x'\n", 1),
    ("seq", "", "Usage: seq [-w] [-s SEP] [FIRST [INC]] LAST\n", 1),
])
def test_printf_and_seq(line, stdout, stderr, code):
    assert run(line) == (stdout, stderr, code)


def test_date_reads_the_shell_clock_in_utc():
    shell = new_shell(clock=FakeClock(1_800_000_000.25))
    assert run("date", shell) == ("Fri Jan 15 08:00:00 UTC 2027\n", "", 0)
    assert run("date -u +%Y-%m-%dT%H:%M:%S", shell)[0] == "2027-01-15T08:00:00\n"
    assert run("date +%s.%N", shell)[0] == "1800000000.250000000\n"
    assert run("date yesterday", shell) == ("", "date: invalid date 'yesterday'\n", 1)
