"""A throw-away CA and the server certificate it signs (valid for 127.0.0.1, localhost and the host)."""

import datetime
import ipaddress
import os

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _names(hosts):
    out = []
    for host in ('127.0.0.1', 'localhost') + tuple(hosts):
        if host in ('', '0.0.0.0', '::'):
            continue
        try:
            entry = x509.IPAddress(ipaddress.ip_address(host))
        except ValueError:
            entry = x509.DNSName(host)
        if entry not in out:
            out.append(entry)
    return out


def make_tls(directory, hosts=()):
    """Write ca.pem, cert.pem and key.pem (0600) into directory; returns (ca, cert, key) paths."""
    os.makedirs(directory, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, 'pvesim test CA')])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False,
                                       data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                       crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, 'pvesim')]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=30))
            .add_extension(x509.SubjectAlternativeName(_names(hosts)), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = tuple(os.path.join(directory, name) for name in ('ca.pem', 'cert.pem', 'key.pem'))
    with open(paths[0], 'wb') as out:
        out.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(paths[1], 'wb') as out:
        out.write(cert.public_bytes(serialization.Encoding.PEM))
    with os.fdopen(os.open(paths[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 'wb') as out:
        out.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                    serialization.NoEncryption()))
    return paths
