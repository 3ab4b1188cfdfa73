"""One reading of ``key=value`` pairs for every verb (``-T``, ``-M``, ``--model-arg``)."""

from __future__ import annotations

import pytest

from m3kit.cli.options import OptionError, parse_key_values
from m3kit.errors import M3kitError


def test_values_are_read_as_yaml_as_inspect_reads_them():
    got = parse_key_values(
        ["flag=yes", "off=false", "n=3", "x=1.5", "s=abc", 'j={"a": 1}', "m={b: [1, 2]}",
         "empty=", "none=null", "expr=a=b"], "-M")
    assert got == {"flag": True, "off": False, "n": 3, "x": 1.5, "s": "abc", "j": {"a": 1},
                   "m": {"b": [1, 2]}, "empty": None, "none": None, "expr": "a=b"}
    assert type(got["n"]) is int and type(got["x"]) is float and got["flag"] is True


def test_dates_and_invalid_yaml_stay_strings_and_later_pairs_win():
    got = parse_key_values(["d=2024-01-01", "bad={unclosed", " k =1", "k=2"], "-T")
    assert got == {"d": "2024-01-01", "bad": "{unclosed", "k": 2}


@pytest.mark.parametrize("item", ["flag", "=3"])
def test_a_pair_without_key_or_equals_is_a_typed_error_naming_the_option(item):
    with pytest.raises(OptionError, match="--model-arg expects key=value") as info:
        parse_key_values([item], "--model-arg")
    assert isinstance(info.value, M3kitError) and info.value.field == "--model-arg"


def test_no_pairs_is_an_empty_mapping():
    assert parse_key_values(None, "-M") == {} and parse_key_values([], "-M") == {}
