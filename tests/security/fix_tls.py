"""A certificate authority of the tests' own (trustme), and a server certificate it
signed for localhost, written where a server and a client read them."""

from __future__ import annotations

from pathlib import Path

import trustme


def certificates(folder: Path) -> Path:
    """``key.pem`` and ``cert.pem`` (the server's, for localhost and 127.0.0.1) and
    ``ca.pem`` (what a client verifies them with), in ``folder``; the folder."""
    ca = trustme.CA()
    cert = ca.issue_cert("localhost", "127.0.0.1")
    cert.private_key_pem.write_to_path(str(folder / "key.pem"))
    cert.cert_chain_pems[0].write_to_path(str(folder / "cert.pem"))
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    return folder
