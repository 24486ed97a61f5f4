"""Secrets out of URLs before a URL reaches an error, a log line, a manifest or a notebook.

Why: request URLs carry credentials in their query (NCBI's ``api_key`` and ``email``, signed
URLs' ``token``/``signature``) or in their user-info (``https://user:pass@host``), and the
transport quoted the full URL in its errors, so a failed request printed the key in clear.
``redact_url`` replaces the value of every query parameter whose name says it is a secret or a
contact detail, and any user-info, with ``REDACTED``; the rest of the URL is kept byte for byte so
the message still says which request failed. ``redact_text`` does the same to every URL (and every
bare ``name=value`` pair with such a name) inside a longer text.
"""
from __future__ import annotations

import re
import urllib.parse

MASK = "REDACTED"
# parameter names (lower case, "-" read as "_") whose values are secrets or contact details
SECRET_NAMES = {"key", "api_key", "apikey", "token", "access_token", "refresh_token", "id_token", "auth",
                "authorization", "password", "passwd", "pwd", "secret", "client_secret", "email", "mail",
                "signature", "sig", "session", "sessionid", "x_amz_signature", "x_amz_credential",
                "x_amz_security_token", "x_goog_signature", "x_goog_credential"}
_SECRET_PARTS = ("key", "token", "secret", "password", "signature", "credential")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")
_PAIR = re.compile(r"(?<![\w-])([A-Za-z][\w.-]*)=([^&\s'\"<>`;]+)")


def is_secret(name: str) -> bool:
    """True when a parameter called ``name`` carries a secret or a contact detail."""
    name = urllib.parse.unquote_plus(name).strip().lower().replace("-", "_")
    return name in SECRET_NAMES or any(part in name for part in _SECRET_PARTS)


def _mask_pairs(text: str) -> str:
    return _PAIR.sub(lambda m: f"{m.group(1)}={MASK}" if is_secret(m.group(1)) else m.group(0), text)


def redact_url(url: str) -> str:
    """``url`` with secret query values and any user-info replaced by ``REDACTED``."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return _mask_pairs(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rsplit('@', 1)[1]}"
    query = "&".join(_mask_pairs(piece) for piece in parts.query.split("&")) if parts.query else ""
    fragment = _mask_pairs(parts.fragment) if parts.fragment else ""
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def redact_text(text: str) -> str:
    """Every URL in ``text`` redacted, and every bare ``secret_name=value`` pair masked."""
    return _mask_pairs(_URL.sub(lambda m: redact_url(m.group(0)), str(text)))
