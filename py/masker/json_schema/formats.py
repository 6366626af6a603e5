"""The ``format`` keyword (JSON Schema 2020-12 validation, section 7): each supported format is
an anchored regex on the decoded value, translated like ``pattern``. Characters are produced in
raw form only (no escapes). Any other format is refused by name.

Sources: RFC 3339 section 5.6 (date, time, date-time; upper-case ``T`` and ``Z`` only, seconds
00..59, years 0001..9999 with real month lengths and leap years), RFC 4122 (uuid), RFC 5321
dot-atom local part and host names (email, a common subset), RFC 3986 section 3 (uri, without
percent escapes; uri-reference adds its relative references, section 4.2), RFC 2673 dotted
quad without leading zeros (ipv4), RFC 3986 section 3.2.2 IPv6address (ipv6: the nine forms
with "::", an embedded ipv4 at the end, no zone identifier), RFC 3339 appendix A (duration:
the ISO 8601 grammar given there, integer fields only), RFC 1123 host names
(labels of 1..63 characters; the 253-character total is not checked), RFC 4648 base64 (byte,
an OpenAPI format).
"""

from __future__ import annotations

from .errors import UnsupportedKeyword
from .ir import Node
from .pattern import pattern_units

_YEAR = "(?:[0-9]{3}[1-9]|[0-9]{2}[1-9]0|[0-9][1-9]00|[1-9]000)"
_LEAP = "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
_MONTH_DAY = ("(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
              "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
              "|02-(?:0[1-9]|1[0-9]|2[0-8]))")
_DATE = f"(?:{_YEAR}-{_MONTH_DAY}|{_LEAP}-02-29)"
_HM = "(?:[01][0-9]|2[0-3]):[0-5][0-9]"
_TIME = f"{_HM}:[0-5][0-9](?:\\.[0-9]+)?(?:Z|[+\\-]{_HM})"
_ATOM = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~\\-]+"
_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9\\-]*[A-Za-z0-9])?"
_H = "[0-9a-fA-F]"
_HOST_LABEL = "[A-Za-z0-9](?:[A-Za-z0-9\\-]{0,61}[A-Za-z0-9])?"
_OCTET = "(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
_PCHAR = "[A-Za-z0-9\\-._~!$&'()*+,;=:@]"
_URI = ("[A-Za-z][A-Za-z0-9+.\\-]*:"
        "(?://(?:[A-Za-z0-9\\-._~!$&'()*+,;=:]*@)?[A-Za-z0-9\\-._~!$&'()*+,;=]*(?::[0-9]*)?)?"
        f"(?:/{_PCHAR}*)*(?:\\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?")

_H16 = f"{_H}{{1,4}}"
_IPV4 = f"{_OCTET}(?:\\.{_OCTET}){{3}}"
_LS32 = f"(?:{_H16}:{_H16}|{_IPV4})"
_IPV6 = "|".join([  # RFC 3986 section 3.2.2, IPv6address (no zone identifier)
    f"(?:{_H16}:){{6}}{_LS32}",
    f"::(?:{_H16}:){{5}}{_LS32}",
    f"(?:{_H16})?::(?:{_H16}:){{4}}{_LS32}",
    f"(?:(?:{_H16}:){{0,1}}{_H16})?::(?:{_H16}:){{3}}{_LS32}",
    f"(?:(?:{_H16}:){{0,2}}{_H16})?::(?:{_H16}:){{2}}{_LS32}",
    f"(?:(?:{_H16}:){{0,3}}{_H16})?::{_H16}:{_LS32}",
    f"(?:(?:{_H16}:){{0,4}}{_H16})?::{_LS32}",
    f"(?:(?:{_H16}:){{0,5}}{_H16})?::{_H16}",
    f"(?:(?:{_H16}:){{0,6}}{_H16})?::",
])
_AUTHORITY = ("//(?:[A-Za-z0-9\\-._~!$&'()*+,;=:]*@)?[A-Za-z0-9\\-._~!$&'()*+,;=]*"
              "(?::[0-9]*)?")
_QUERY_FRAGMENT = f"(?:\\?(?:{_PCHAR}|[/?])*)?(?:#(?:{_PCHAR}|[/?])*)?"
_SEGMENTS = f"(?:/{_PCHAR}*)*"
_NO_COLON = "[A-Za-z0-9\\-._~!$&'()*+,;=@]"  # a pchar but ":" (segment-nz-nc)
_RELATIVE = (f"(?:{_AUTHORITY}{_SEGMENTS}|/(?:{_PCHAR}+{_SEGMENTS})?|{_NO_COLON}+{_SEGMENTS}|)"
             f"{_QUERY_FRAGMENT}")
_DUR_TIME = "T(?:[0-9]+H(?:[0-9]+M(?:[0-9]+S)?)?|[0-9]+M(?:[0-9]+S)?|[0-9]+S)"
_DURATION = (f"P(?:(?:[0-9]+D|[0-9]+M(?:[0-9]+D)?|[0-9]+Y(?:[0-9]+M(?:[0-9]+D)?)?)(?:{_DUR_TIME})?"
             f"|{_DUR_TIME}|[0-9]+W)")

FORMATS = {
    "date": _DATE,
    "time": _TIME,
    "date-time": f"{_DATE}T{_TIME}",
    "email": f"{_ATOM}(?:\\.{_ATOM})*@{_LABEL}(?:\\.{_LABEL})+",
    "uuid": f"{_H}{{8}}-{_H}{{4}}-{_H}{{4}}-{_H}{{4}}-{_H}{{12}}",
    "ipv4": _IPV4,
    "ipv6": f"(?:{_IPV6})",
    "uri": _URI,
    "uri-reference": f"(?:{_URI}|{_RELATIVE})",
    "duration": _DURATION,
    "hostname": f"{_HOST_LABEL}(?:\\.{_HOST_LABEL})*",
    "byte": "(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?",
}


def format_units(name: str, path: str) -> Node:
    """IR for the string content (between the quotes) of values of format ``name``.

    Raises UnsupportedKeyword("format") for any format not in FORMATS; for "regex" with the
    reason: the valid regular expressions nest their groups to any depth, so they are no
    regular language and no automaton here checks them.
    """
    if name == "regex":
        raise UnsupportedKeyword("format", path, "value 'regex' is not supported: the valid "
                                 "regular expressions nest their groups to any depth, which "
                                 "no finite automaton can check", code="schema.format_regex")
    if name not in FORMATS:
        raise unsupported_format(name, path)
    return pattern_units(f"^{FORMATS[name]}$", path)


def unsupported_format(name, path: str) -> UnsupportedKeyword:
    """The error for a ``format`` value not in :data:`FORMATS` (to raise): code
    ``"schema.unsupported_format"``, fields ``keyword`` ("format"), ``value`` (the format, as given)
    and ``supported`` (the supported names, comma-separated)."""
    supported = ", ".join(sorted(FORMATS))
    return UnsupportedKeyword("format", path, f"value {name!r} is not supported (supported: {supported})",
                              code="schema.unsupported_format", value=name, supported=supported)
