"""Keys and certificates for the tunnels, made fresh for each run (pyca/cryptography).

OpenVPN runs in TLS mode, as deployed: a throwaway CA signs one server and one client
certificate (ECDSA P-256, with the key usages that --remote-cert-tls checks). WireGuard
needs one X25519 key pair per peer, in its base64 form.
"""

from __future__ import annotations

import base64
import datetime
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, x25519
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALID = datetime.timedelta(days=2)


@dataclass(frozen=True)
class WireGuardKey:
    private: str  # base64, as `wg genkey` prints it
    public: str


def wireguard_key() -> WireGuardKey:
    key = x25519.X25519PrivateKey.generate()
    raw = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                            serialization.NoEncryption())
    pub = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return WireGuardKey(base64.b64encode(raw).decode(), base64.b64encode(pub).decode())


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _certificate(subject: str, key: ec.EllipticCurvePrivateKey, issuer: str, signer: ec.EllipticCurvePrivateKey,
                 *, ca: bool = False, usage: x509.ObjectIdentifier | None = None) -> bytes:
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(_name(issuer))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALID)
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(digital_signature=not ca, key_cert_sign=ca, crl_sign=ca,
                                            content_commitment=False, key_encipherment=False,
                                            data_encipherment=False, key_agreement=False,
                                            encipher_only=False, decipher_only=False), critical=True))
    if usage is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    return builder.sign(signer, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


def openvpn_pki() -> dict[str, bytes]:
    """File name -> PEM: ca.crt, server.crt/.key, client.crt/.key."""
    ca_key, server_key, client_key = (ec.generate_private_key(ec.SECP256R1()) for _ in range(3))
    return {
        "ca.crt": _certificate("shootout test CA", ca_key, "shootout test CA", ca_key, ca=True),
        "server.crt": _certificate("server", server_key, "shootout test CA", ca_key,
                                   usage=ExtendedKeyUsageOID.SERVER_AUTH),
        "server.key": _pem_key(server_key),
        "client.crt": _certificate("client", client_key, "shootout test CA", ca_key,
                                   usage=ExtendedKeyUsageOID.CLIENT_AUTH),
        "client.key": _pem_key(client_key),
    }
