"""``zarrbolt info PATH``: what an array or group is and how it is stored."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ._common import add_store_options, human, open_node, pretty_json, storage_options


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("info", help="format, shape, dtype, chunks, shards, codecs, bytes stored of an array or group",
                       description="Describe an array (layout, codecs, what is stored) or a group (members).")
    p.add_argument("path", help="array or group (path or URL)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    add_store_options(p)
    p.set_defaults(func=run)


def stored(arr: Any) -> tuple[int, int, int]:
    """``(stored objects, their bytes, metadata bytes)`` under the array's prefix, by one listing."""
    from ..node import ZARR_JSON

    store = arr.store
    prefix = arr._key_prefix
    n = nbytes = meta = 0
    keys = set(arr._iter_stored_chunk_keys())
    for key in store.list_prefix(prefix):
        size = store.getsize(key)
        if key in keys:
            n += 1
            nbytes += size
        elif key[len(prefix):] in (ZARR_JSON, ".zarray", ".zattrs"):
            meta += size
    return n, nbytes, meta


def array_info(arr: Any) -> dict[str, Any]:
    from ..errors import StoreError

    meta = arr.metadata
    n: int | None
    nbytes: int | None
    try:
        n, nbytes, meta_bytes = stored(arr)
    except (StoreError, NotImplementedError):  # a store that cannot list (plain HTTP)
        n = nbytes = None
        meta_bytes = 0
    total_units = arr.nchunks
    out: dict[str, Any] = {
        "node_type": "array",
        "path": "/" + arr.path,
        "zarr_format": meta.zarr_format,
        "shape": list(arr.shape),
        "dtype": str(meta.data_type.to_json()),
        "chunks": list(arr.chunks),
        "shards": list(arr.shards) if arr.shards is not None else None,
        "codecs": _codecs_json(arr),
        "fill_value": meta.data_type.fill_value_to_json(arr.fill_value),
        "dimension_names": list(meta.dimension_names) if getattr(meta, "dimension_names", None) else None,
        ("shards_stored" if arr.shards is not None else "chunks_stored"): n,
        ("shards_total" if arr.shards is not None else "chunks_total"): total_units,
        "bytes": arr.nbytes,
        "bytes_stored": None if nbytes is None else nbytes + meta_bytes,
        "ratio": round(arr.nbytes / nbytes, 3) if nbytes else None,
        "attributes": dict(arr.attrs),
    }
    if arr.shards is not None:
        per = 1
        for s, c in zip(arr.shards, arr.chunks):
            per *= -(-s // c)
        out["chunks_per_shard"] = per
    return out


def _codecs_json(arr: Any) -> Any:
    meta = arr.metadata
    if meta.zarr_format == 2:
        doc = meta.to_json()
        return {"filters": doc.get("filters"), "compressor": doc.get("compressor"), "order": doc.get("order")}
    return [c.to_json() for c in meta.codecs]


def group_info(grp: Any) -> dict[str, Any]:
    from ..array import Array
    from ..group import Group

    members = []
    for name, node in grp.members():
        kind = "array" if isinstance(node, Array) else "group" if isinstance(node, Group) else "unsupported"
        entry: dict[str, Any] = {"name": name, "node_type": kind}
        if isinstance(node, Array):
            entry.update(shape=list(node.shape), dtype=str(node.metadata.data_type.to_json()))
        elif kind == "unsupported":
            entry["error"] = str(node.error)
        members.append(entry)
    from ..ome.plate import plate_summary
    from ..ome.summary import multiscales_summary

    out: dict[str, Any] = {"node_type": "group", "path": "/" + grp.path, "zarr_format": grp.metadata.zarr_format,
                           "members": members, "attributes": dict(grp.attrs)}
    ome = multiscales_summary(grp)
    if ome is not None:
        out["ome_multiscales"] = ome
    hcs = plate_summary(grp)  # an OME-Zarr plate or well: its layout, acquisitions, field image
    if hcs is not None:
        out["hcs"] = hcs
    return out


def _codec_text(c: Any) -> str:
    if isinstance(c, dict) and "name" in c:
        conf = c.get("configuration") or {}
        if c["name"] == "sharding_indexed":
            inner = ", ".join(_codec_text(x) for x in conf.get("codecs", []))
            index = ", ".join(_codec_text(x) for x in conf.get("index_codecs", []))
            return f"sharding_indexed(inner [{inner}], index [{index}] at {conf.get('index_location', 'end')})"
        args = " ".join(f"{k}={v}" for k, v in conf.items())
        return f"{c['name']}({args})" if args else c["name"]
    return json.dumps(c)


def render(info: dict[str, Any]) -> str:
    rows: list[tuple[str, Any]] = [("Path", info["path"]), ("Type", info["node_type"]),
                                   ("Zarr format", info["zarr_format"])]
    if info["node_type"] == "array":
        codecs = info["codecs"]
        codec_text = (", ".join(_codec_text(c) for c in codecs) if isinstance(codecs, list)
                      else " ".join(f"{k}={json.dumps(v)}" for k, v in codecs.items()))
        unit = "Shards" if info["shards"] is not None else "Chunks"
        stored_n = info.get("shards_stored", info.get("chunks_stored"))
        total_n = info.get("shards_total", info.get("chunks_total"))
        rows += [("Shape", tuple(info["shape"])), ("Data type", info["dtype"]), ("Chunk shape", tuple(info["chunks"]))]
        if info["shards"] is not None:
            rows += [("Shard shape", f"{tuple(info['shards'])} ({info['chunks_per_shard']} chunks per shard)")]
        rows += [("Codecs", codec_text), ("Fill value", info["fill_value"])]
        if info["dimension_names"]:
            rows.append(("Dimension names", tuple(info["dimension_names"])))
        if stored_n is None:
            rows += [(f"{unit} stored", f"? / {total_n} (the store cannot list its keys)"),
                     ("Bytes", f"{info['bytes']} ({human(info['bytes'])})")]
        else:
            rows += [(f"{unit} stored", f"{stored_n} / {total_n}"),
                     ("Bytes", f"{info['bytes']} ({human(info['bytes'])})"),
                     ("Bytes stored", f"{info['bytes_stored']} ({human(info['bytes_stored'])})"),
                     ("Ratio", f"{info['ratio']:.2f}" if info["ratio"] else "-")]
    else:
        rows.append(("Members", len(info["members"])))
        for m in info["members"]:
            desc = (f"array {tuple(m['shape'])} {m['dtype']}" if m["node_type"] == "array"
                    else "group" if m["node_type"] == "group" else f"cannot open: {m['error']}")
            rows.append((f"  {m['name']}", desc))
    if "hcs" in info:
        from ..ome.plate import plate_summary_rows

        rows += plate_summary_rows(info["hcs"])
    attrs = info["attributes"]
    if "ome_multiscales" in info:   # the OME-Zarr metadata as a summary, not as one long JSON line
        from ..ome.summary import multiscales_rows

        rows += multiscales_rows(info["ome_multiscales"])
    if "ome_multiscales" in info or "hcs" in info:
        from ..ome.summary import OME_KEYS

        summed = (*OME_KEYS, "plate", "well")  # (0.4 keeps a plate's and a well's at the top)
        rest = {k: v for k, v in attrs.items() if k not in summed}
        shown = json.dumps(rest, sort_keys=True) if rest else "{}"
        rows.append(("Attributes", f"{shown} (and the OME-Zarr metadata summed up above; --json shows it all)"))
    else:
        rows.append(("Attributes", json.dumps(attrs, sort_keys=True) if attrs else "{}"))
    w = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{w}} : {v}" for k, v in rows)


def run(args: argparse.Namespace) -> int:
    from ..array import Array

    node = open_node(args.path, storage_options(args))
    info = array_info(node) if isinstance(node, Array) else group_info(node)
    print(pretty_json(info) if args.json else render(info))
    return 0
