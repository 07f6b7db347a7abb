"""`$((...))`: ash's integer arithmetic, in the evaluator and through the shell."""

from __future__ import annotations

import pytest

from control.userland.arithmetic import ArithmeticFault, evaluate
from tests.userland.test_shell import new_shell, run


@pytest.mark.parametrize("expression, value", [
    ("1+2", 3), ("2*3+4", 10), ("2*(3+4)", 14), ("7/2", 3), ("-7/2", -3), ("-7%3", -1), ("2**10", 1024),
    ("1<2 && 2<1", 0), ("1 || 0", 1), ("!0", 1), ("~0", -1), ("0x10 + 010", 24), ("5 > 3 ? 7 : 9", 7),
    ("1 << 4", 16), ("", 0), ("9223372036854775807 + 1", -9223372036854775808),
])
def test_the_operators_and_their_precedence(expression, value):
    assert evaluate(expression, {}) == value


def test_names_read_and_assign_variables():
    variables = {"i": "5", "s": ""}
    assert evaluate("i + 1", variables) == 6 and evaluate("s + unset", variables) == 0
    assert evaluate("i += 2", variables) == 7 and variables["i"] == "7"
    assert evaluate("i++", variables) == 7 and variables["i"] == "8"
    assert evaluate("--i", variables) == 7


@pytest.mark.parametrize("expression, message", [("1/0", "divide by zero"), ("1 +", "arithmetic syntax error"),
                                                 ("(1", "arithmetic syntax error"), ("x", "arithmetic syntax error")])
def test_bad_expressions_are_ash_s_errors(expression, message):
    with pytest.raises(ArithmeticFault, match=message):
        evaluate(expression, {"x": "abc"})


def test_through_the_shell():
    assert run('i=1; i=$((i+1)); echo "$i: $(( i * 10 ))"') == ("2: 20\n", "", 0)
    assert run("echo $((1/0)); echo after") == ("", "sh: divide by zero\n", 2), "a script ends at the error"
    shell = new_shell()
    assert run("n=0; while [ $n -lt 5 ]; do n=$((n+1)); done; echo $n", shell) == ("5\n", "", 0)
