"""The TA's side of a cluster's TLS: the client's certificate, key and CA, from Dask's own configuration.

A scheduler started with ``--tls-ca-file/--tls-cert/--tls-key`` accepts only clients whose certificate that CA
signed. The TA's client reads its side from Dask's configuration (one source, which dask-jobqueue and the Helm
chart read too): a YAML file in ``~/.config/dask/`` (or the folder ``$DASK_CONFIG`` names), or the environment
variables below. Both are checked here before anything is graded or written, and a refused handshake is said as
such, not as a scheduler that did not answer.
"""

from __future__ import annotations

import os
import ssl
from pathlib import Path

from .cluster import ClusterError

# Dask's configuration keys for the client's side, with the environment variable that sets each
CLIENT_SETTINGS = {
    "tls_ca_file": ("distributed.comm.tls.ca-file", "DASK_DISTRIBUTED__COMM__TLS__CA_FILE"),
    "tls_client_cert": ("distributed.comm.tls.client.cert", "DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT"),
    "tls_client_key": ("distributed.comm.tls.client.key", "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY"),
}
WHERE = ("in Dask's configuration (distributed: comm: tls: in a YAML file in ~/.config/dask/ or the folder $DASK_CONFIG "
         "names) or its environment variables")


def _setting(field: str) -> str:
    key, env = CLIENT_SETTINGS[field]
    return f"{key} ({env})"


def client_security(address: str):
    """The Security of a TA's client for ``address`` (tls://host:port), from Dask's configuration: its CA file,
    certificate and key set, readable, and loadable as one TLS context; a ClusterError says which is not."""
    from distributed.security import Security

    security = Security(require_encryption=True)
    missing = [_setting(f) for f in ("tls_ca_file", "tls_client_cert") if not getattr(security, f)]
    if missing:
        raise ClusterError(f"--cluster {address}: a TLS scheduler needs this client's certificate and the CA that signs "
                           f"the cluster's certificates; set {' and '.join(missing)} {WHERE}, and "
                           f"{_setting('tls_client_key')} unless the key is in the certificate's file")
    for field in CLIENT_SETTINGS:
        value = getattr(security, field)
        if value and not os.access(Path(value).expanduser(), os.R_OK):
            raise ClusterError(f"--cluster {address}: {_setting(field)} is {value}: no such readable file")
    expanded = {f: str(Path(getattr(security, f)).expanduser()) for f in CLIENT_SETTINGS if getattr(security, f)}
    key_field = "tls_client_key" if "tls_client_key" in expanded else "tls_client_cert"
    if os.stat(expanded[key_field]).st_mode & 0o077:  # a kernel as another uid that reads it could run code on the workers
        raise ClusterError(f"--cluster {address}: {_setting(key_field)}: the client's private key {expanded[key_field]} can "
                           f"be read by other users, so by the kernels too: chmod 600 {expanded[key_field]}")
    security = Security(require_encryption=True, **expanded)
    try:
        security.get_connection_args("client")  # loads the CA, the certificate and its key into one context
    except (ssl.SSLError, OSError, ValueError) as err:
        raise ClusterError(f"--cluster {address}: the TLS files of {', '.join(_setting(f) for f in expanded)} "
                           f"do not load as a CA, a certificate and its key ({err})") from None
    return security


def check_address(address: str) -> None:
    """What can be checked of ``--cluster`` before a class is read: a tls:// scheduler's TLS settings."""
    if address.startswith("tls://"):
        client_security(address)


def connect_remote(address: str, timeout: float = 30):
    """A client of the scheduler at ``address`` (with the configuration's TLS for tls://); a refused TLS
    handshake, a scheduler certificate this CA did not sign, or no answer each raise their own ClusterError."""
    from distributed import Client
    from distributed.comm.core import CommClosedError

    security = client_security(address) if address.startswith("tls://") else None
    kwargs = {"security": security} if security is not None else {}
    try:
        return Client(address, timeout=timeout, **kwargs)
    except CommClosedError as err:
        if security is None:
            raise ClusterError(f"--cluster {address}: the scheduler closed the connection ({err})") from None
        if _caused_by(err, ssl.SSLCertVerificationError):  # this side's check of the scheduler's certificate
            raise ClusterError(f"--cluster {address}: refused: the scheduler's certificate is not signed by the CA of "
                               f"{_setting('tls_ca_file')} ({security.tls_ca_file})") from None
        raise ClusterError(f"--cluster {address}: refused: the scheduler ended the TLS handshake, so it does not accept "
                           f"this client's certificate ({_setting('tls_client_cert')}: {security.tls_client_cert}): it "
                           f"must be signed by the CA the scheduler was started with (its --tls-ca-file)") from None
    except OSError as err:
        raise ClusterError(f"--cluster {address}: no scheduler answered ({err})") from None


def _caused_by(err: BaseException, kind: type) -> bool:
    """Whether ``err`` or an exception it was raised from (or while handling) is a ``kind``."""
    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, kind):
            return True
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return False
