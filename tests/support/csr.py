"""A CertificateSigningRequest approved and denied through its `approval` subresource (M15),
the same flow on the real kube-apiserver and on LocalApiServer."""

from __future__ import annotations

import base64

import pytest

from kubeinformers.generated.certificates.v1 import (
    CertificateSigningRequest,
    CertificateSigningRequestCondition,
    CertificateSigningRequestSpec,
    CertificateSigningRequestStatus,
)
from kubeinformers.generated.core.v1 import ConfigMap
from kubeinformers.generated.meta.v1 import ObjectMeta
from kubeinformers.runtime.api.errors import NotFound
from kubeinformers.runtime.client.typed import Client

# A certificate request for CN=kubeinformers-test (an EC P-256 key made once for this test and
# thrown away): the real server parses and checks it when the CSR is created. The field is
# `format: byte`: base64 in the model, as on the wire (K3).
CSR_PEM = b"""-----BEGIN CERTIFICATE REQUEST-----
MIHrMIGRAgEAMC8xGzAZBgNVBAMMEmt1YmVpbmZvcm1lcnMtdGVzdDEQMA4GA1UE
CgwHZXhhbXBsZTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABDOw+3ci9ouoBzfO
/Z4jhi/TaCBWPfk7g7hiGiMFbj2e42InTXBYWr5DCikMpMy64iuMNArO+HuoP7Qx
WcdaPgigADAKBggqhkjOPQQDAgNJADBGAiEAqmbvoOu0nctYSGDQBla6sZK9HC9j
9Ntmy07SaZqNFywCIQCO1BuKsd3sGzZqiIeOUdu0VxSTvtJjZE7CXjpnT+fb0g==
-----END CERTIFICATE REQUEST-----
"""
CSR_REQUEST = base64.b64encode(CSR_PEM).decode()


def approve_and_deny(client: Client, prefix: str) -> None:
    """Create two CSRs named after `prefix`; approve one with `update` and deny the other
    with `patch`, both through `approval`, checking what the server keeps and stamps."""
    names = [f"{prefix}-approved", f"{prefix}-denied"]
    try:
        for name in names:
            client.create(
                CertificateSigningRequest(
                    metadata=ObjectMeta(name=name),
                    spec=CertificateSigningRequestSpec(
                        request=CSR_REQUEST,
                        signer_name="example.com/kubeinformers-test",
                        usages=["client auth"],
                    ),
                )
            )
        csr = client.get(CertificateSigningRequest, names[0])
        assert base64.b64decode(csr.spec.request) == CSR_PEM
        csr.status = CertificateSigningRequestStatus(
            conditions=[
                CertificateSigningRequestCondition(
                    type="Approved", status="True", reason="Test", message="approved by a test"
                )
            ]
        )
        csr.spec.usages = ["digital signature"]  # not the approval's part: kept as it was
        approved = client.update(csr, subresource="approval")
        assert approved.status is not None and approved.status.conditions is not None
        assert [(c.type, c.status, c.reason) for c in approved.status.conditions] == [
            ("Approved", "True", "Test")
        ]
        condition = approved.status.conditions[0]
        # The server stamps a condition sent without its times.
        assert condition.last_update_time is not None
        assert condition.last_transition_time is not None
        assert approved.spec.usages == ["client auth"]
        assert client.get(CertificateSigningRequest, names[0]) == approved

        # Sent again without its times, the condition keeps when it last changed.
        transitioned = condition.last_transition_time
        condition.last_update_time = condition.last_transition_time = None
        condition.message = "approved again"
        again = client.update(approved, subresource="approval")
        assert again.status is not None and again.status.conditions is not None
        assert again.status.conditions[0].message == "approved again"
        assert again.status.conditions[0].last_transition_time == transitioned

        denial = {"type": "Denied", "status": "True", "reason": "Test", "message": "no"}
        denied = client.patch(
            CertificateSigningRequest,
            names[1],
            {"status": {"conditions": [denial]}},
            subresource="approval",
        )
        assert denied.status is not None and denied.status.conditions is not None
        assert [(c.type, c.reason) for c in denied.status.conditions] == [("Denied", "Test")]
        assert denied.status.conditions[0].last_update_time is not None
        assert denied.spec.request == CSR_REQUEST
        with pytest.raises(ValueError, match=r"has no approval subresource"):
            client.patch(ConfigMap, "c", {}, namespace="default", subresource="approval")
    finally:
        for name in names:
            try:
                client.delete(CertificateSigningRequest, name)
            except NotFound:
                pass
