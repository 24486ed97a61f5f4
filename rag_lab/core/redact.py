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


# -- the secrets this process holds, out of everything it prints or saves --------------------------------
# Why one scrubber: a server may echo the key it was sent (some proxies and local servers put it in a
# 401/429/500 message), and that text travels through the reasoner's errors, ragas' exceptions (the
# judge's own HTTP client), warnings, log lines, progress output, notebook outputs and the report page.
# Masking URLs is not enough there: the key arrives as plain words. So every value the process knows to
# be a secret (the key variables below, and any key a client was handed: ``register_secret``) is replaced
# in each of those paths by this one function.
SECRET_ENV = ("OPENAI_API_KEY", "RAG_LAB_LLM_API_KEY", "NCBI_API_KEY", "NCBI_EMAIL")
SECRET_MASK = "***"
MIN_SECRET = 8                # shorter values (a dummy key, an empty variable) would mask ordinary words
_REGISTERED: set[str] = set()


def register_secret(value: str | None) -> None:
    """Remember ``value`` (a key handed to a client) so ``scrub`` masks it wherever it turns up."""
    if isinstance(value, str) and len(value) >= MIN_SECRET:
        _REGISTERED.add(value)


def known_secrets() -> list[str]:
    """The secrets to mask: the key variables' values and the registered keys, longest first."""
    import os

    found = {v for v in (os.environ.get(name) for name in SECRET_ENV) if v and len(v) >= MIN_SECRET}
    return sorted(found | _REGISTERED, key=len, reverse=True)


def scrub(text, urls: bool = True) -> str:
    """``text`` with every known secret replaced by ``***`` and (``urls``) every URL redacted."""
    text = str(text)
    for secret in known_secrets():
        if secret in text:
            text = text.replace(secret, SECRET_MASK)
    return redact_text(text) if urls else text


def scrub_file(path) -> bool:
    """Mask every known secret in the text file ``path`` in place (before it is renamed into view);
    True when one was found. A file that is not UTF-8 text is left as it is."""
    from pathlib import Path

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    if not holds_secret(text):
        return False
    path.write_text(scrub(text, urls=False), encoding="utf-8")
    return True


def holds_secret(text: str) -> bool:
    return any(secret in text for secret in known_secrets())


_installed = False


def install_scrubber() -> None:
    """Scrub every log record this process makes (message, arguments and traceback) and every warning's
    text, once per process: ragas and LangChain log the exceptions of the judge's HTTP client, and the
    notebook, the terminal and the report show those lines."""
    global _installed
    if _installed:
        return
    _installed = True
    import logging
    import warnings

    previous_factory = logging.getLogRecordFactory()

    def scrubbed_record(*args, **kwargs):
        record = previous_factory(*args, **kwargs)
        if not known_secrets():
            return record
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is logging's to report, as before
            return record
        if holds_secret(message):
            record.msg, record.args = scrub(message, urls=False), None
        if record.exc_info and record.exc_info[1] is not None:
            formatted = logging.Formatter().formatException(record.exc_info)
            if holds_secret(formatted):
                record.exc_text = scrub(formatted, urls=False)
        return record

    logging.setLogRecordFactory(scrubbed_record)
    previous_format = warnings.formatwarning

    def scrubbed_warning(message, category, filename, lineno, line=None):
        return scrub(previous_format(message, category, filename, lineno, line), urls=False)

    warnings.formatwarning = scrubbed_warning
