"""Argument text: tokens, strace's string escapes, numbers and flags (cohsim.workload.args)."""

from __future__ import annotations

import pytest

from cohsim.errors import CohsimError
from cohsim.workload.args import Args, ArgumentError, number, split_args, unescape, unquote


def test_args_with_quotes_brackets_comments() -> None:
    text = '6, "a,\\"b)", {x=1, y=(2,3)}, /* a, b */ 7, "cut"...'
    assert split_args(text) == ["6", '"a,\\"b)"', "{x=1, y=(2,3)}", "/* a, b */ 7", '"cut"...']
    assert split_args("") == []


#: every escape strace's string_quote() writes, and the byte it stands for
STRACE_ESCAPES = [
    ("\\\\", "\\"), ('\\"', '"'), ("\\f", "\f"), ("\\n", "\n"), ("\\r", "\r"), ("\\t", "\t"),
    ("\\v", "\v"), ("\\0", "\0"), ("\\1", "\1"), ("\\33", "\33"), ("\\177", "\177"),
    ("\\x41", "A"), ("\\x7f", "\x7f"), ("\\x7F", "\x7f"),
]  # fmt: skip


@pytest.mark.parametrize(("escape", "char"), STRACE_ESCAPES, ids=[e for e, _ in STRACE_ESCAPES])
def test_every_escape_strace_writes_decodes(escape: str, char: str) -> None:
    assert unescape(f"a{escape}b") == f"a{char}b"


def test_octal_takes_three_digits_at_most() -> None:
    """strace writes three octal digits when an octal digit follows (`\\00012` is NUL, then
    12; `\\0012` is byte 1, then 2)."""
    assert unescape("\\00012") == "\x0012"
    assert unescape("\\0012") == "\x012"
    assert unescape("\\1012") == "A2"


def test_escaped_bytes_are_read_as_utf8() -> None:
    """strace escapes every byte above 0x7e: a UTF-8 name comes back whole, a byte that is not
    UTF-8 stays visible."""
    assert unescape("/var/caf\\303\\251") == "/var/café"
    assert unescape("/x\\xc3\\xa9") == "/xé"
    assert unescape("/bad\\377") == "/bad\\xff"
    assert unescape("/plain é") == "/plain é"


BAD_ESCAPES = ["\\u", "\\9", "\\xZZ", "\\x5", "\\777", "\\a", "\\'", "\\"]


@pytest.mark.parametrize("body", BAD_ESCAPES)
def test_other_escapes_are_argument_errors(body: str) -> None:
    with pytest.raises(ArgumentError, match="unknown string escape") as exc:
        unescape(f"/var/lib/x{body}")
    assert isinstance(exc.value, CohsimError) and "\n" not in str(exc.value)


def test_unquote_cut_and_unterminated_strings() -> None:
    assert unquote('"/a/b"...') == "/a/b"
    assert unquote('"a\\"b"') == 'a"b'
    with pytest.raises(ArgumentError, match="unterminated string"):
        unquote('"abc\\"')


@pytest.mark.parametrize(
    ("text", "value"),
    [("0", 0), ("7", 7), ("007", 7), ("0755", 0o755), ("0x1F", 31), ("0X10", 16),
     ("18446744073709551615", 2**64 - 1), ("01777777777777777777777", 2**64 - 1)],
)  # fmt: skip
def test_numbers_decimal_hex_and_leading_zero_octal(text: str, value: int) -> None:
    assert number(text) == value


@pytest.mark.parametrize("text", ["08", "0x", "019", "9" * 24, "0x" + "f" * 30, "1" * 5000])
def test_bad_numbers(text: str) -> None:
    with pytest.raises(ArgumentError):
        number(text)


def test_flags_with_a_leading_zero_are_octal() -> None:
    """strace prints flags symbolically or in hex, modes in octal with a leading 0: a flags
    argument of 002 is MNT_DETACH, 010 (8) none of the flags umount2 has."""
    assert Args("umount2", '"/p", 002').flags == ("MNT_DETACH",)
    assert set(Args("umount2", '"/p", 007').flags) == {"MNT_DETACH", "MNT_FORCE"}
    assert Args("umount2", '"/p", 010').flags == ()
    with pytest.raises(ArgumentError, match="bad number '08'"):
        Args("umount2", '"/p", 08')


def test_args_read_path_and_fd_when_made() -> None:
    a = Args("move_mount", '6, "", -9, "/t/0", MOVE_MOUNT_F_EMPTY_PATH')
    assert (a.path_of, a.fd0, a.flags) == ("/t/0", 6, ("MOVE_MOUNT_F_EMPTY_PATH",))
    assert Args("openat", 'AT_FDCWD, "/proc/self/mountinfo", O_RDONLY').path_of == (
        "/proc/self/mountinfo"
    )
    with pytest.raises(ArgumentError, match="unknown string escape"):
        Args("umount2", '"/var/lib/x\\unts/0", 0')
    with pytest.raises(ArgumentError, match="fd .* out of range"):
        Args("close", "1" * 40)
    # a buffer read is not decoded: whatever it holds is not looked at
    assert Args("read", '3, "\\u\\9", 832').fd0 == 3
