"""``zarrbolt tree PATH``: the hierarchy below a group."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import add_store_options, open_node, storage_options


def add_parser(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("tree", help="the hierarchy with shapes and data types",
                       description="Show the hierarchy below a group, with each array's shape, data type, chunks "
                       "and shards; nodes zarrbolt cannot open are listed with the reason.")
    p.add_argument("path", help="group or array (path or URL)")
    p.add_argument("--level", type=int, default=None, help="how deep to go (default: everything)")
    add_store_options(p)
    p.set_defaults(func=run)


def describe(node: Any) -> str:
    from ..array import Array
    from ..group import Group

    if isinstance(node, Array):
        text = f"{node.shape} {node.metadata.data_type.to_json()} chunks {node.chunks}"
        if node.shards is not None:
            text += f" shards {node.shards}"
        return text + f" (v{node.metadata.zarr_format})"
    if isinstance(node, Group):
        if getattr(node, "_cli_implicit", False):
            return "(no group document: the nodes below it)"
        return f"group (v{node.metadata.zarr_format})"
    return f"cannot open: {getattr(node, '_message', node)}"


def lines(group: Any, level: int | None) -> list[str]:
    from ..group import Group

    out = [f"/{group.path} {describe(group)}"]

    def walk(g: Any, indent: str, depth: int) -> None:
        try:
            members = g.members()
        except Exception as exc:  # noqa: BLE001 - a listing that fails is shown, not fatal
            out.append(f"{indent}└── (cannot list: {type(exc).__name__}: {exc})")
            return
        for i, (name, node) in enumerate(members):
            last = i == len(members) - 1
            out.append(f"{indent}{'└── ' if last else '├── '}{name} {describe(node)}")
            if isinstance(node, Group) and (level is None or depth < level):
                walk(node, indent + ("    " if last else "│   "), depth + 1)

    if level is None or level > 0:
        walk(group, "", 1)
    return out


def open_tolerant(path: str, options: dict[str, Any] | None) -> Any:
    """The node at ``path``; when there is none but keys lie below it (a bucket or directory
    holding Zarr nodes without a group document of its own), an implicit group over it."""
    from ..errors import NodeNotFoundError
    from ..group import Group
    from ..node import new_group_metadata
    from ..storage import make_store
    from ._common import is_url

    try:
        return open_node(path, options)
    except NodeNotFoundError:
        store, base = make_store(path, mode="r", storage_options=options if is_url(path) else None)
        prefix = base.strip("/")
        if next(iter(store.list_prefix(f"{prefix}/" if prefix else "")), None) is None:
            raise
        group = Group(store, prefix, new_group_metadata(3), read_only=True)
        group._cli_implicit = True  # type: ignore[attr-defined]
        return group


def run(args: argparse.Namespace) -> int:
    from ..array import Array

    node = open_tolerant(args.path, storage_options(args))
    if isinstance(node, Array):
        print(f"/{node.path} {describe(node)}")
        return 0
    print("\n".join(lines(node, args.level)))
    return 0
