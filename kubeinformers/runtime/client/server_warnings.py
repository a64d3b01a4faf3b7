"""The API server's warnings (the `Warning` response header), said as client-go says them.

kube-apiserver answers a request it accepted but has something to say about with
`Warning: 299 - "<text>"` headers (RFC 7234): a field it does not know and dropped
(`unknown field "spce"`, the default field validation, Warn), a deprecated API version, a
value it will refuse in a later release. client-go's rest client hands every code-299 warning
with a text to its default warning handler, which logs it (`rest.WarningLogger`); so does the
typed client, once per warning and request, at WARNING on `kubeinformers.client`, with the
request it answers.
"""

from __future__ import annotations

import logging
import re

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


def log_warnings(header: str | None, what: str, server: str) -> None:
    """Log each code-299 warning with a text (client-go's WarningLogger), naming the request."""
    for code, text in parse_warnings(header):
        if code == 299 and text:
            logger.warning("%s at %s: the server warns: %s", what, server, text)


__all__ = ["log_warnings", "parse_warnings"]
