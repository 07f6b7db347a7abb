"""Go's parse-error wording for bodies that are not JSON."""

import pytest

from control.api import gojson


@pytest.mark.parametrize("text, message", [
    ("not json", "invalid character 'o' in literal null (expecting 'u')"),
    ("", "unexpected end of JSON input"),
    ('{"a":1', "unexpected end of JSON input"),
    ('{"a":1,}', "invalid character '}' looking for beginning of object key string"),
    ('{"a" 1}', "invalid character '1' after object key"),
    ('{"a":1 "b":2}', "invalid character '\"' after object key:value pair"),
    ("[1 2]", "invalid character '2' after array element"),
    ("{}x", "invalid character 'x' after top-level value"),
    ("01", "invalid character '1' after top-level value"),
    ("-a", "invalid character 'a' in numeric literal"),
    ("1.x", "invalid character 'x' after decimal point in numeric literal"),
    ("1ex", "invalid character 'x' in exponent of numeric literal"),
    ('"\\x"', "invalid character 'x' in string escape code"),
    ('"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"),
    ('"a\nb"', "invalid character '\\n' in string literal"),
    ("NaN", "invalid character 'N' looking for beginning of value"),
    ("{'a': 1}", "invalid character '\\'' looking for beginning of object key string"),
    ("tru", "unexpected end of JSON input"),
])
def test_syntax_errors_read_as_go_writes_them(text, message):
    assert gojson.syntax_error(text) == message


@pytest.mark.parametrize("text", ['{"a":[1,2.5e-3,true,false,null,"\\u00e9\\n"]}', " 1 ", '""'])
def test_valid_json_has_no_error(text):
    assert gojson.syntax_error(text) is None


def test_summary_shows_objects_as_text_and_the_rest_as_hex():
    assert gojson.summary(b"") == "<empty>"
    assert gojson.summary(b'{"a":1}') == '{"a":1}'
    assert gojson.summary(b"{" + b"x" * 40) == "{" + "x" * 29 + " ..."
    assert gojson.summary(b"not") == "6e6f74"


def test_unmarshal_error_names_the_json_type():
    assert gojson.unmarshal_error([1]).startswith("json: cannot unmarshal array into Go value of type struct {")
    assert gojson.unmarshal_error("x", "string") == "json: cannot unmarshal string into Go value of type string"
