"""What a remote store's failure means, in one place: obstore, fsspec, aiohttp and botocore
exceptions sorted into kinds, and the kinds turned into :mod:`zarrbolt.errors` classes.

Kinds (module constants): ``ABSENT`` (the object does not exist: reads give None),
``MISSING_CONTAINER`` (the bucket / container itself does not exist: always an error, never
"absent", so a typo in a bucket name cannot read as an empty array), ``PERMISSION`` (401/403),
``TRANSIENT`` (5xx, 429, connection resets, timeouts: retried, then
:class:`~zarrbolt.errors.StoreUnavailableError`), ``TRUNCATED`` (a body shorter than its
Content-Length: retried, then :class:`~zarrbolt.errors.StoreError`), ``PRECONDITION`` / ``EXISTS``
(a conditional write lost: :class:`~zarrbolt.errors.ConflictError`), ``UNSATISFIABLE`` (416: a
range past the end of the object), ``NOT_PARTIAL`` (the server ignored a Range header, e.g. for
an empty object), ``UNSUPPORTED`` and ``OTHER``.

Nothing here imports obstore, fsspec, aiohttp or botocore: exceptions are recognised by their
class names and modules, so a store that is not installed costs nothing.
"""

from __future__ import annotations

import asyncio
import errno
import re
from typing import Any

from ..errors import (
    ConflictError,
    ReadOnlyError,
    StoreError,
    StorePermissionError,
    StoreUnavailableError,
    ZarrboltError,
)

ABSENT = "absent"
MISSING_CONTAINER = "missing-container"
PERMISSION = "permission"
TRANSIENT = "transient"
TRUNCATED = "truncated"
PRECONDITION = "precondition"
EXISTS = "exists"
UNSATISFIABLE = "unsatisfiable"
NOT_PARTIAL = "not-partial"
UNSUPPORTED = "unsupported"
OTHER = "other"

RETRYABLE = frozenset({TRANSIENT, TRUNCATED})

_STATUS = re.compile(r"(?:status code:?|status[= ]|HTTP/\d(?:\.\d)? |\bcode )\s*(\d{3})\b", re.IGNORECASE)
_MISSING_CONTAINER = ("NoSuchBucket", "ContainerNotFound", "The specified bucket does not exist",
                      "bucket does not exist", "The specified container does not exist")
_TRUNCATED = ("error decoding response body", "end of file before message length", "IncompleteMessage",
              "incomplete message", "Content-Length", "ContentLengthError", "payload is not completed",
              "Response payload is not completed", "IncompleteRead", "unexpected end of file",
              "connection closed before message completed", "response body error", "body error",
              "decoding response body")
_TRANSIENT = ("timed out", "timeout", "Timeout", "connection reset", "Connection reset", "reset by peer",
              "error sending request", "broken pipe", "Broken pipe", "connection refused", "Connection refused",
              "Connection aborted", "connection closed", "ServerDisconnected", "tcp connect error",
              "dns error", "SlowDown", "ServiceUnavailable", "InternalError", "RequestTimeout")

_BOTO_CODES = {
    "NoSuchKey": ABSENT, "404": ABSENT, "NotFound": ABSENT,
    "NoSuchBucket": MISSING_CONTAINER,
    "AccessDenied": PERMISSION, "403": PERMISSION, "401": PERMISSION, "InvalidAccessKeyId": PERMISSION,
    "SignatureDoesNotMatch": PERMISSION, "ExpiredToken": PERMISSION, "Forbidden": PERMISSION,
    "PreconditionFailed": PRECONDITION, "412": PRECONDITION, "ConditionalRequestConflict": PRECONDITION,
    "InvalidRange": UNSATISFIABLE, "416": UNSATISFIABLE,
    "SlowDown": TRANSIENT, "ServiceUnavailable": TRANSIENT, "InternalError": TRANSIENT,
    "RequestTimeout": TRANSIENT, "503": TRANSIENT, "500": TRANSIENT, "502": TRANSIENT, "504": TRANSIENT,
}


def _by_status(status: int) -> str | None:
    if status in (401, 403):
        return PERMISSION
    if status == 404:
        return ABSENT
    if status == 412:
        return PRECONDITION
    if status == 409:
        return EXISTS
    if status == 416:
        return UNSATISFIABLE
    if status == 429 or status == 408 or 500 <= status <= 599:
        return TRANSIENT
    return None


def _by_text(text: str) -> str | None:
    if any(s in text for s in _MISSING_CONTAINER):
        return MISSING_CONTAINER
    if "non-partial response" in text or "NotPartial" in text:
        return NOT_PARTIAL
    if "Range Not Satisfiable" in text or "InvalidRange" in text:
        return UNSATISFIABLE
    m = _STATUS.search(text)
    if m is not None:
        kind = _by_status(int(m.group(1)))
        if kind is not None:
            return kind
    if any(s in text for s in _TRUNCATED):
        return TRUNCATED
    if any(s in text for s in _TRANSIENT):
        return TRANSIENT
    return None


def _classify_one(exc: BaseException) -> str | None:
    """The kind of one exception, or None when it says nothing specific."""
    name = type(exc).__name__
    module = type(exc).__module__ or ""
    text = str(exc)
    if module.startswith("obstore"):
        # obstore appends a "Debug source:" dump (retry settings, timeouts...): not evidence
        text = text.split("Debug source:", 1)[0]
        if name == "NotFoundError":
            return MISSING_CONTAINER if any(s in text for s in _MISSING_CONTAINER) else ABSENT
        if name in ("PermissionDeniedError", "UnauthenticatedError"):
            return PERMISSION
        if name in ("PreconditionError", "NotModifiedError"):
            return PRECONDITION
        if name == "AlreadyExistsError":
            return EXISTS
        if name == "NotSupportedError":
            return UNSUPPORTED
        return _by_text(text) or OTHER
    if module.startswith("botocore") or module.startswith("aiobotocore"):
        response = getattr(exc, "response", None)
        if isinstance(response, dict):
            code = str(response.get("Error", {}).get("Code", ""))
            status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            kind = _BOTO_CODES.get(code) or (_by_status(int(status)) if isinstance(status, int) else None)
            if kind is not None:
                return kind
        if name in ("IncompleteReadError", "ResponseStreamingError"):
            return TRUNCATED
        if name in ("EndpointConnectionError", "ConnectionClosedError", "ReadTimeoutError",
                    "ConnectTimeoutError", "ProxyConnectionError", "HTTPClientError"):
            return TRANSIENT
        return _by_text(text)
    if module.startswith("aiohttp"):
        if name in ("ClientPayloadError", "ContentLengthError", "TransferEncodingError"):
            return TRUNCATED
        status = getattr(exc, "status", None)
        if isinstance(status, int) and name in ("ClientResponseError", "ClientResponseError"):
            return _by_status(status) or OTHER
        if "Timeout" in name or "Disconnected" in name or "Connection" in name or name == "ClientOSError":
            return TRANSIENT
        return _by_text(text)
    if isinstance(exc, (IsADirectoryError, NotADirectoryError)):
        return ABSENT  # a prefix ("directory") is not a key
    if isinstance(exc, FileNotFoundError):
        return MISSING_CONTAINER if any(s in text for s in _MISSING_CONTAINER) else ABSENT
    if isinstance(exc, PermissionError):
        return PERMISSION
    if isinstance(exc, FileExistsError):
        return EXISTS
    if isinstance(exc, (ConnectionError, TimeoutError, asyncio.TimeoutError)):
        return TRANSIENT
    if isinstance(exc, OSError) and exc.errno in (errno.EIO, errno.ECONNRESET, errno.ETIMEDOUT, errno.EAGAIN):
        return _by_text(text) or TRANSIENT
    if isinstance(exc, NotImplementedError):
        return UNSUPPORTED
    return _by_text(text)


def classify(exc: BaseException) -> str:
    """The kind of ``exc``, looking through its chain of causes for the most specific answer."""
    seen: set[int] = set()
    cur: BaseException | None = exc
    fallback: str | None = None
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        kind = _classify_one(cur)
        if kind is not None and kind not in (OTHER, UNSUPPORTED):
            return kind
        fallback = fallback or kind
        cur = cur.__cause__ or cur.__context__
    return fallback or OTHER


def short_message(exc: BaseException, limit: int = 300) -> str:
    """The first line of ``exc``'s message (obstore appends pages of debug output), capped."""
    text = str(exc).strip() or type(exc).__name__
    line = text.splitlines()[0].strip()
    return line if len(line) <= limit else line[: limit - 3] + "..."


def store_error(exc: BaseException, kind: str, *, op: str, key: str, where: str, attempts: int = 1) -> ZarrboltError:
    """The :mod:`zarrbolt.errors` exception for a failed ``op`` on ``key`` of the store described
    by ``where`` (its URL), given the failure's ``kind``; the message names the key."""
    detail = short_message(exc)
    what = f"{op} of key {key!r} in {where}"
    if isinstance(exc, ZarrboltError):
        return exc
    if kind == PERMISSION:
        return StorePermissionError(f"{what} was refused (permission denied / not authenticated): {detail}")
    if kind == TRANSIENT:
        tries = f" after {attempts} attempt{'s' if attempts != 1 else ''}"
        return StoreUnavailableError(f"{what} failed{tries} (service unavailable, connection reset or timeout): {detail}")
    if kind == TRUNCATED:
        return StoreError(f"{what}: the response body was truncated (shorter than its Content-Length), "
                          f"{attempts} attempt{'s' if attempts != 1 else ''}: {detail}")
    if kind in (PRECONDITION, EXISTS):
        return ConflictError(f"{what} was refused: the object changed (or appeared) since its version was read "
                             f"(another writer?): {detail}")
    if kind == MISSING_CONTAINER:
        return StoreError(f"{what}: the bucket / container of {where} does not exist: {detail}")
    if kind == ABSENT:
        return StoreError(f"{what}: not found: {detail}")
    if kind == UNSUPPORTED:
        return StoreError(f"{what}: not supported by this store: {detail}")
    if isinstance(exc, ReadOnlyError):
        return exc
    return StoreError(f"{what} failed: {type(exc).__name__}: {detail}")


def as_error(exc: BaseException, *, op: str, key: str, where: str, attempts: int = 1) -> ZarrboltError:
    """:func:`store_error` with the kind found by :func:`classify`."""
    return store_error(exc, classify(exc), op=op, key=key, where=where, attempts=attempts)


def describe(obj: Any) -> str:
    """A short name of a store for messages: its URL where it has one."""
    url = getattr(obj, "url", None)
    return str(url) if url else repr(obj)
