"""A throw-away CA and serving certificate for LocalApiServer, in pure Python.

No `cryptography`, no `openssl` binary: an RSA-2048 key (Miller-Rabin primes), a self-signed CA
certificate and a 127.0.0.1/localhost server certificate signed by it (both on that one key: it
only has to live as long as the test process), DER-encoded by hand and signed with PKCS#1 v1.5 /
SHA-256. Generated once per process (key generation is the slow part, ~0.2-1 s) and reused by
every server, so clients keep TLS verification ON with the CA.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import secrets
import threading
from dataclasses import dataclass

_SMALL_PRIMES = [p for p in range(3, 2000) if all(p % d for d in range(2, int(p**0.5) + 1))]


def _is_probable_prime(n: int, rounds: int = 40) -> bool:
    if any(n % p == 0 for p in _SMALL_PRIMES):
        return n in _SMALL_PRIMES
    d, r = n - 1, 0
    while d % 2 == 0:
        d //= 2
        r += 1
    for _ in range(rounds):
        x = pow(secrets.randbelow(n - 3) + 2, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = pow(x, 2, n)
            if x == n - 1:
                break
        else:
            return False
    return True


def _prime(bits: int, e: int) -> int:
    while True:
        cand = secrets.randbits(bits) | (3 << (bits - 2)) | 1
        if cand % e != 1 and _is_probable_prime(cand):
            return cand


# --- DER ---------------------------------------------------------------------------------


def _len(n: int) -> bytes:
    if n < 0x80:
        return bytes([n])
    raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(raw)]) + raw


def _tlv(tag: int, body: bytes) -> bytes:
    return bytes([tag]) + _len(len(body)) + body


def _seq(*parts: bytes) -> bytes:
    return _tlv(0x30, b"".join(parts))


def _int(v: int) -> bytes:
    raw = v.to_bytes(v.bit_length() // 8 + 1, "big", signed=False) if v else b"\x00"
    return _tlv(0x02, raw)


def _oid(dotted: str) -> bytes:
    nums = [int(x) for x in dotted.split(".")]
    body = bytes([40 * nums[0] + nums[1]])
    for n in nums[2:]:
        chunk = [n & 0x7F]
        n >>= 7
        while n:
            chunk.append(0x80 | (n & 0x7F))
            n >>= 7
        body += bytes(reversed(chunk))
    return _tlv(0x06, body)


def _name(cn: str) -> bytes:
    return _seq(_tlv(0x31, _seq(_oid("2.5.4.3"), _tlv(0x0C, cn.encode()))))


def _time(t: datetime.datetime) -> bytes:
    return _tlv(0x17, t.strftime("%y%m%d%H%M%SZ").encode())


def _ext(oid: str, value: bytes, critical: bool = False) -> bytes:
    crit = _tlv(0x01, b"\xff") if critical else b""
    return _seq(_oid(oid), crit, _tlv(0x04, value))


_SHA256_RSA = _seq(_oid("1.2.840.113549.1.1.11"), b"\x05\x00")
_SHA256_DIGEST_INFO = bytes.fromhex("3031300d060960864801650304020105000420")


@dataclass(frozen=True)
class _Key:
    n: int
    e: int
    d: int
    p: int
    q: int

    def public_der(self) -> bytes:
        rsa_pub = _seq(_int(self.n), _int(self.e))
        alg = _seq(_oid("1.2.840.113549.1.1.1"), b"\x05\x00")
        return _seq(alg, _tlv(0x03, b"\x00" + rsa_pub))

    def private_pem(self) -> str:
        dp, dq, qi = self.d % (self.p - 1), self.d % (self.q - 1), pow(self.q, -1, self.p)
        der = _seq(*(_int(v) for v in (0, self.n, self.e, self.d, self.p, self.q, dp, dq, qi)))
        return _pem("RSA PRIVATE KEY", der)

    def sign(self, data: bytes) -> bytes:
        k = (self.n.bit_length() + 7) // 8
        t = _SHA256_DIGEST_INFO + hashlib.sha256(data).digest()
        em = b"\x00\x01" + b"\xff" * (k - len(t) - 3) + b"\x00" + t
        return pow(int.from_bytes(em, "big"), self.d, self.n).to_bytes(k, "big")


def _new_key(bits: int = 2048) -> _Key:
    e = 65537
    while True:
        p, q = _prime(bits // 2, e), _prime(bits // 2, e)
        if p == q:
            continue
        n = p * q
        if n.bit_length() == bits:
            return _Key(n, e, pow(e, -1, (p - 1) * (q - 1)), p, q)


def _pem(label: str, der: bytes) -> str:
    b64 = base64.encodebytes(der).decode().replace("\n", "")
    lines = [b64[i : i + 64] for i in range(0, len(b64), 64)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----\n"


def _certificate(
    key: _Key, signer: _Key, subject: str, issuer: str, serial: int, extensions: list[bytes]
) -> bytes:
    now = datetime.datetime.now(datetime.UTC)
    tbs = _seq(
        _tlv(0xA0, _int(2)),
        _int(serial),
        _SHA256_RSA,
        _name(issuer),
        _seq(_time(now - datetime.timedelta(hours=1)), _time(now + datetime.timedelta(days=3650))),
        _name(subject),
        key.public_der(),
        _tlv(0xA3, _seq(*extensions)),
    )
    return _seq(tbs, _SHA256_RSA, _tlv(0x03, b"\x00" + signer.sign(tbs)))


def _key_id(key: _Key) -> bytes:
    return hashlib.sha1(_seq(_int(key.n), _int(key.e))).digest()


@dataclass(frozen=True)
class ServingCertificate:
    """PEM strings: the CA that clients trust, and the server's certificate and key."""

    ca_pem: str
    cert_pem: str
    key_pem: str


_lock = threading.Lock()
_cached: ServingCertificate | None = None


def serving_certificate() -> ServingCertificate:
    """The process-wide CA + 127.0.0.1 serving certificate (made on first use)."""
    global _cached
    with _lock:
        if _cached is None:
            _cached = _make()
        return _cached


def _make() -> ServingCertificate:
    ca_key = srv_key = _new_key()  # one key: half the (slow, pure-Python) key generation
    ca_id, srv_id = _key_id(ca_key), _key_id(srv_key)
    ca_cn = f"kubeinformers-local-ca-{secrets.token_hex(4)}"
    ca = _certificate(
        ca_key,
        ca_key,
        ca_cn,
        ca_cn,
        secrets.randbits(63),
        [
            _ext("2.5.29.19", _seq(_tlv(0x01, b"\xff")), critical=True),  # CA:TRUE
            _ext("2.5.29.15", _tlv(0x03, b"\x01\x06"), critical=True),  # keyCertSign, cRLSign
            _ext("2.5.29.14", _tlv(0x04, ca_id)),
        ],
    )
    san = _seq(_tlv(0x82, b"localhost"), _tlv(0x87, bytes([127, 0, 0, 1])))
    srv = _certificate(
        srv_key,
        ca_key,
        "127.0.0.1",
        ca_cn,
        secrets.randbits(63),
        [
            _ext("2.5.29.19", _seq(), critical=True),  # CA:FALSE
            _ext("2.5.29.15", _tlv(0x03, b"\x05\xa0"), critical=True),  # digitalSig, keyEnc
            _ext("2.5.29.37", _seq(_oid("1.3.6.1.5.5.7.3.1"))),  # serverAuth
            _ext("2.5.29.17", san),
            _ext("2.5.29.14", _tlv(0x04, srv_id)),
            _ext("2.5.29.35", _seq(_tlv(0x80, ca_id))),
        ],
    )
    return ServingCertificate(
        ca_pem=_pem("CERTIFICATE", ca),
        cert_pem=_pem("CERTIFICATE", srv),
        key_pem=srv_key.private_pem(),
    )


@dataclass(frozen=True)
class SigningKeyPair:
    """PEM strings of an RSA key pair (a kube-apiserver signs service-account tokens with it)."""

    private_pem: str
    public_pem: str


_cached_signing: SigningKeyPair | None = None


def signing_key_pair() -> SigningKeyPair:
    """A process-wide RSA-2048 key pair, separate from the serving key (made on first use)."""
    global _cached_signing
    with _lock:
        if _cached_signing is None:
            key = _new_key()
            _cached_signing = SigningKeyPair(
                key.private_pem(), _pem("PUBLIC KEY", key.public_der())
            )
        return _cached_signing
