"""A CRD schema's broken `pattern` is refused in the words of Go's regexp package (kube-apiserver
compiles it with Go), never with Python's re error text."""

import re

import pytest

from control.kinds.structural import go_regexp_error, structural_causes


@pytest.mark.parametrize("pattern, code", [
    ("(", "missing closing )"), (")", "unexpected )"), ("[a", "missing closing ]"),
    ("*", "missing argument to repetition operator"), ("a**", "invalid nested repetition operator"),
    ("\\", "trailing backslash at end of expression"), ("\\q", "invalid escape sequence"),
    ("[z-a]", "invalid character class range"), ("(?<x", "invalid or unsupported Perl syntax"),
])
def test_python_regexp_errors_read_as_go_regexp_errors(pattern, code):
    with pytest.raises(re.error) as failure:
        re.compile(pattern)
    assert go_regexp_error(failure.value, pattern) == f"error parsing regexp: {code}: `{pattern}`"


def test_a_broken_pattern_is_a_cause_with_no_python_text():
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}}
    [problem] = structural_causes(schema, "schema")
    assert problem["field"] == "schema.properties[a].pattern"
    assert problem["message"] == ('Invalid value: "(": must be a valid regular expression, but isn\'t: '
                                  "error parsing regexp: missing closing ): `(`")
