"""LocalApiServer's selector parsers (apimachinery's grammar and error words) and its
pure-Python serving certificate (accepted by a strict TLS client)."""

from __future__ import annotations

import socket
import ssl
import threading
from pathlib import Path

import pytest

from kubeinformers.testing.apiserver.selectors import (
    SelectorError,
    parse_field_selector,
    parse_label_selector,
)
from kubeinformers.testing.apiserver.tls import serving_certificate

LABELS = {"app": "web", "tier": "fe", "n": "3"}


@pytest.mark.parametrize(
    ("selector", "matches"),
    [
        ("", True),
        ("app=web", True),
        ("app==web,tier=fe", True),
        ("app!=web", False),
        ("app!=db", True),
        ("missing!=x", True),
        ("tier in (fe, be)", True),
        ("tier notin (fe)", False),
        ("missing notin (fe)", True),
        ("app", True),
        ("!app", False),
        ("!missing", True),
        ("n>2,n<4", True),
        ("n>3", False),
        ("app=", False),
        ("  app = web ,  tier in (fe)  ", True),
    ],
)
def test_label_selector_grammar(selector: str, matches: bool) -> None:
    assert parse_label_selector(selector)(LABELS) is matches


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("===", "found '==', expected: !, identifier, or 'end of string'"),
        ("app=web,", "found '', expected: identifier after ','"),
        (
            "app web",
            "unable to parse requirement: found 'web', expected: in, notin, =, ==, !=, gt, lt",
        ),
        ("app=web tier", "found 'tier', expected: ',' or 'end of string'"),
        ("tier in fe", "unable to parse requirement: found 'fe' expected: '('"),
        ("n>x", "unable to parse requirement: for 'gt', 'lt' operators"),
    ],
)
def test_bad_label_selectors_are_worded_like_apimachinery(selector: str, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        parse_label_selector(selector)
    assert str(err.value).startswith(message)


def test_field_selector_terms_and_unsupported_labels() -> None:
    obj = {
        "metadata": {"name": "a", "namespace": "ns"},
        "status": {"phase": "Running"},
        "spec": {"hostNetwork": True},
    }
    allowed, pods = frozenset({"status.phase", "spec.hostNetwork"}), ("", "pods")
    assert parse_field_selector("metadata.name=a,status.phase!=Pending", allowed, pods)(obj)
    assert parse_field_selector("spec.hostNetwork=true", allowed, pods)(obj)
    assert not parse_field_selector("metadata.namespace==other", allowed, pods)(obj)
    with pytest.raises(SelectorError, match=r"field label not supported: spec\.nodeName"):
        parse_field_selector("spec.nodeName=n1", allowed, pods)
    with pytest.raises(SelectorError, match="invalid selector"):
        parse_field_selector("garbage", allowed, pods)
    # a resource without field labels of its own: the default conversion's wording
    with pytest.raises(SelectorError, match=r'^"data.k" is not a known field selector: only'):
        parse_field_selector("data.k=v", frozenset(), ("", "configmaps"))


def test_serving_certificate_passes_strict_verification(tmp_path: Path) -> None:
    cert = serving_certificate()
    (tmp_path / "ca").write_text(cert.ca_pem)
    (tmp_path / "crt").write_text(cert.cert_pem)
    (tmp_path / "key").write_text(cert.key_pem)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(tmp_path / "crt", tmp_path / "key")
    listener = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def serve() -> None:
        conn, _ = listener.accept()
        with server_ctx.wrap_socket(conn, server_side=True) as tls:
            tls.sendall(b"ok")
        done.set()

    threading.Thread(target=serve, daemon=True).start()
    client_ctx = ssl.create_default_context(cafile=str(tmp_path / "ca"))
    client_ctx.verify_flags |= ssl.VERIFY_X509_STRICT
    with (
        socket.create_connection(listener.getsockname()) as raw,
        client_ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        assert tls.recv(2) == b"ok"
    assert done.wait(5)
    listener.close()
    assert serving_certificate() is cert  # made once per process
