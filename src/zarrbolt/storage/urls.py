"""Store URLs: a registry of schemes, ``storage_options`` (zarr-python's convention) and the
standard cloud environment variables.

==============================  ===========================================================
``s3://bucket/path``            :class:`~zarrbolt.storage.object_store.ObjectStore` (obstore
(``s3a://``)                    S3Store); else :class:`~zarrbolt.storage.fsspec_store.
                                FsspecStore` (s3fs)
``gs://``, ``gcs://``           ObjectStore (GCSStore); else FsspecStore (gcsfs)
``az://``, ``abfs://``,         ObjectStore (AzureStore); else FsspecStore (adlfs)
``abfss://``, ``azure://``
``http://``, ``https://``       ObjectStore (HTTPStore), always read-only; else FsspecStore
                                (fsspec's HTTP filesystem, aiohttp)
``memory://``                   FsspecStore on fsspec's process-wide memory filesystem (so
                                two ``open`` calls see the same data, as in zarr-python)
``file://``                     :class:`~zarrbolt.storage.LocalStore` (native file I/O is
                                faster than either client)
any other fsspec protocol       FsspecStore
==============================  ===========================================================

``storage_options`` accepts s3fs-style keys (``key``, ``secret``, ``token``, ``endpoint_url``,
``anon``, ``region_name``, ``client_kwargs={"region_name": ..., "endpoint_url": ...}``) and
obstore's own (``access_key_id``, ``endpoint``, ``region``, ``skip_signature``, ... and
client options such as ``allow_http`` or ``timeout``; ``client_options`` / ``retry_config``
dicts are passed on).  An ``http://`` endpoint given in the options allows plain HTTP.  With
no options, obstore reads the standard environment: ``AWS_ENDPOINT_URL``,
``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION`` /
``AWS_DEFAULT_REGION``, ``AWS_ALLOW_HTTP`` (``true`` for a plain-HTTP endpoint such as a local
test server), ``GOOGLE_SERVICE_ACCOUNT`` / ``GOOGLE_APPLICATION_CREDENTIALS``,
``AZURE_STORAGE_ACCOUNT_NAME`` / ``AZURE_STORAGE_ACCOUNT_KEY`` / ... .

Stores made here switch obstore's own retries off: zarrbolt retries (config ``remote_retries``).
:func:`register_scheme` adds a scheme.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping
from typing import Any, cast
from urllib.parse import urlsplit

from ..errors import StoreError

Factory = Callable[[str, dict[str, Any], bool], Any]

_KIND = {
    "s3": "s3", "s3a": "s3",
    "gs": "gcs", "gcs": "gcs",
    "az": "azure", "abfs": "azure", "abfss": "azure", "azure": "azure", "adl": "azure",
    "http": "http", "https": "http",
    "memory": "memory",
}
_FSSPEC_PACKAGE = {"s3": "s3fs", "gcs": "gcsfs", "azure": "adlfs", "http": "aiohttp"}
_registry: dict[str, Factory] = {}

# s3fs-style option names -> obstore S3 config keys
_S3_ALIASES = {
    "key": "access_key_id", "secret": "secret_access_key", "token": "session_token",
    "endpoint_url": "endpoint", "region_name": "region", "anon": "skip_signature",
    "aws_access_key_id": "access_key_id", "aws_secret_access_key": "secret_access_key",
    "aws_session_token": "session_token", "requester_pays": "request_payer",
}
_GCS_ALIASES = {"anon": "skip_signature", "endpoint_url": "url"}
_AZURE_ALIASES = {"account_key": "account_key", "anon": "skip_signature", "connection_string": "connection_string"}
# obstore client options (reqwest): anything else is store configuration
_CLIENT_KEYS = frozenset({
    "allow_http", "allow_invalid_certificates", "connect_timeout", "content_type", "default_content_type",
    "default_headers", "http1_only", "http2_keep_alive_interval", "http2_keep_alive_timeout",
    "http2_keep_alive_while_idle", "http2_max_frame_size", "http2_only", "pool_idle_timeout",
    "pool_max_idle_per_host", "proxy_url", "proxy_ca_certificate", "proxy_excludes", "randomize_addresses",
    "timeout", "user_agent",
})
# s3fs-only knobs that have no obstore meaning and change nothing about what is read
_IGNORED = frozenset({"use_listings_cache", "listings_expiry_time", "max_paths", "skip_instance_cache",
                      "default_block_size", "default_fill_cache", "default_cache_type", "asynchronous",
                      "loop", "config_kwargs", "s3_additional_kwargs", "use_ssl", "version_aware",
                      "cache_regions", "auto_mkdir"})


def register_scheme(scheme: str, factory: Factory) -> None:
    """Open ``scheme://`` URLs with ``factory(url, storage_options, read_only) -> (store, path)``."""
    _registry[scheme.lower()] = factory


def url_scheme(s: str) -> str | None:
    """The scheme of ``s`` when it is a URL (``scheme://...``), lowercased; None otherwise
    (plain paths, and Windows drive letters such as ``C:\\``)."""
    if "://" not in s:
        return None
    scheme = s.split("://", 1)[0]
    if len(scheme) < 2 or not scheme.replace("+", "").replace("-", "").replace(".", "").isalnum():
        return None
    return scheme.lower()


def _gcs_token(token: Any, cfg: dict[str, Any]) -> None:
    """gcsfs's ``token``: ``"anon"`` (no credentials), a path to a service-account file, a
    service-account key as a dict, or ``"google_default"`` / ``None`` (the environment)."""
    if token == "anon":
        cfg["skip_signature"] = "true"
    elif isinstance(token, Mapping):
        import json

        cfg["service_account_key"] = json.dumps(dict(token))
    elif isinstance(token, str) and token not in ("google_default", "cloud", "browser", "cache"):
        cfg["service_account"] = token
    elif token is not None and not isinstance(token, str):
        raise StoreError(f"storage_options['token'] for GCS must be 'anon', a file path or a dict, got "
                         f"{type(token).__name__}")


def _flatten_options(kind: str, options: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None]:
    """``(config, client_options, retry_config)`` for obstore from ``storage_options``."""
    aliases = {"s3": _S3_ALIASES, "gcs": _GCS_ALIASES, "azure": _AZURE_ALIASES}.get(kind, {})
    cfg: dict[str, Any] = {}
    client: dict[str, Any] = {}
    retry: dict[str, Any] | None = None
    for k, v in options.items():
        if not isinstance(k, str):
            raise StoreError(f"storage_options keys must be strings, got {k!r}")
        if k == "client_kwargs":
            if not isinstance(v, Mapping):
                raise StoreError(f"storage_options['client_kwargs'] must be a dict, got {type(v).__name__}")
            c, cl, _ = _flatten_options(kind, v)
            cfg.update(c)
            client.update(cl)
        elif k == "client_options":
            client.update(dict(v))
        elif k == "retry_config":
            retry = dict(v)
        elif k in _IGNORED:
            continue
        elif k in _CLIENT_KEYS:
            client[k] = v
        elif kind == "gcs" and k == "token":
            _gcs_token(v, cfg)
        else:
            cfg[aliases.get(k, k)] = str(v).lower() if isinstance(v, bool) else v  # object_store parses strings
    endpoint = cfg.get("endpoint") or cfg.get("aws_endpoint") or cfg.get("aws_endpoint_url")
    if isinstance(endpoint, str) and endpoint.startswith("http://"):
        client.setdefault("allow_http", True)
    if kind == "s3" and "endpoint" in cfg and "region" not in cfg and "aws_region" not in cfg:
        cfg.setdefault("region", "us-east-1")  # S3-compatible endpoints ignore the region; signing needs one
    return cfg, client, retry


def _obstore_store(url: str, kind: str, options: Mapping[str, Any]) -> Any:
    from .object_store import import_obstore

    obs = import_obstore()
    cfg, client, retry = _flatten_options(kind, options)
    if retry is None:
        retry = {"max_retries": 0}
    try:
        if kind == "http":
            if url.lower().startswith("http://"):
                client.setdefault("allow_http", True)  # a plain-http URL given explicitly
            return obs.store.HTTPStore.from_url(url, client_options=client or None, retry_config=retry)
        return obs.store.from_url(url, config=cfg or None, client_options=client or None, retry_config=retry)
    except Exception as exc:  # noqa: BLE001 - obstore's configuration errors, typed here
        raise StoreError(f"cannot open {url!r} with obstore: {type(exc).__name__}: {str(exc).splitlines()[0]}") from exc


def open_url(url: str, storage_options: Mapping[str, Any] | None = None, *, read_only: bool = False) -> tuple[Any, str]:
    """``(store, path)`` for a store URL (see the module documentation)."""
    scheme = url_scheme(url)
    if scheme is None:
        raise StoreError(f"{url!r} is not a store URL (scheme://...)")
    options = dict(storage_options or {})
    if scheme in _registry:
        return cast("tuple[Any, str]", _registry[scheme](url, options, read_only))
    if scheme == "file":
        if options:
            raise StoreError(f"storage_options are not used by local file URLs ({url!r})")
        from .local import LocalStore

        return LocalStore(url, read_only=read_only), ""
    kind = _KIND.get(scheme)
    if kind == "memory":
        return _fsspec_store(url, scheme, options, read_only)
    if kind is not None and importlib.util.find_spec("obstore") is not None:
        from .object_store import ObjectStore

        return ObjectStore(_obstore_store(url, kind, options), read_only=read_only or kind == "http"), ""
    return _fsspec_store(url, scheme, options, read_only)


def _fsspec_store(url: str, scheme: str, options: dict[str, Any], read_only: bool) -> tuple[Any, str]:
    if importlib.util.find_spec("fsspec") is None:
        extra = "obstore" if _KIND.get(scheme) not in (None, "memory") else "fsspec"
        raise StoreError(f"cannot open {url!r}: install {extra} (pip install 'zarrbolt[remote]')")
    import fsspec

    if scheme not in fsspec.available_protocols():
        raise StoreError(f"unsupported store URL scheme {scheme!r} in {url!r}: neither obstore nor fsspec knows it")
    try:
        fs, path = fsspec.url_to_fs(url, **options)
    except ImportError as exc:
        pkg = _FSSPEC_PACKAGE.get(_KIND.get(scheme, ""), f"the fsspec implementation of {scheme!r}")
        raise StoreError(f"cannot open {url!r}: install obstore (pip install 'zarrbolt[remote]') or {pkg}") from exc
    except (TypeError, ValueError) as exc:
        raise StoreError(f"cannot open {url!r} with fsspec: {exc}") from exc
    from .fsspec_store import FsspecStore

    return FsspecStore(fs, path=path, read_only=read_only or _KIND.get(scheme) == "http"), ""


def check_options(storage_options: Any) -> dict[str, Any] | None:
    """``storage_options`` as a dict (None when not given); a typed error for anything else."""
    if storage_options is None:
        return None
    if not isinstance(storage_options, Mapping):
        raise StoreError(f"storage_options must be a dict, got {type(storage_options).__name__}")
    return dict(storage_options)


def split_url(url: str) -> tuple[str, str, str]:
    """``(scheme, netloc, path)`` of a URL (path without leading ``/``)."""
    parts = urlsplit(url)
    return parts.scheme.lower(), parts.netloc, parts.path.lstrip("/")
