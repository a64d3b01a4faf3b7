"""The API server's warnings (the `Warning` response header), said as client-go says them.

kube-apiserver answers a request it accepted but has something to say about with
`Warning: 299 - "<text>"` headers (RFC 7234): a field it does not know and dropped
(`unknown field "spce"`, the default field validation, Warn), a deprecated API version, a
value it will refuse in a later release. client-go's rest client hands every code-299 warning
with a text to its default warning handler, which logs it (`rest.WarningLogger`); so does the
typed client, at WARNING on `kubeinformers.client`, with the request it answers: each text
once, its repeats at DEBUG.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict

logger = logging.getLogger("kubeinformers.client")

# code SP agent SP "text" [SP "date"], several separated by commas (apimachinery's
# net.ParseWarningHeaders); the text is a quoted string whose backslash escapes one character.
_WARNING = re.compile(r'\s*(\d{3})\s+(\S+)\s+"((?:[^"\\]|\\.)*)"(?:\s+"[^"]*")?\s*(?:,|$)')
_ESCAPE = re.compile(r"\\(.)")


def parse_warnings(header: str | None) -> list[tuple[int, str]]:
    """The (code, text) of each warning in a `Warning` header (its values joined by commas);
    an entry that does not parse ends the parsing, as in apimachinery."""
    found: list[tuple[int, str]] = []
    if not header:
        return found
    at = 0
    while at < len(header):
        match = _WARNING.match(header, at)
        if match is None or match.end() == at:
            break
        found.append((int(match.group(1)), _ESCAPE.sub(r"\1", match.group(3))))
        at = match.end()
    return found


# Warning texts said at WARNING, most recent last: a text said again goes to DEBUG.
_said: OrderedDict[str, None] = OrderedDict()
_said_lock = threading.Lock()
SAID_KEPT = 1_000  # distinct texts remembered; the least recently said is forgotten first


def log_warnings(header: str | None, what: str, server: str, log: logging.Logger = logger) -> None:
    """Log each code-299 warning with a text (client-go's WarningLogger), naming the request:
    each text once at WARNING, its repeats at DEBUG. Why: a controller writes the same kind
    again and again, and a deprecated API version's warning would otherwise be one line per
    write (client-go's own deduplicating writer, kubectl's, says each text once too)."""
    for code, text in parse_warnings(header):
        if code != 299 or not text:
            continue
        with _said_lock:
            first = text not in _said
            _said[text] = None
            _said.move_to_end(text)
            if len(_said) > SAID_KEPT:
                _said.popitem(last=False)
        log.log(
            logging.WARNING if first else logging.DEBUG,
            "%s at %s: the server warns: %s%s",
            what,
            server,
            text,
            "" if first else " (said before)",
        )


__all__ = ["log_warnings", "parse_warnings"]
