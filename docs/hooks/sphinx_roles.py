"""A griffe extension (mkdocs.yml: mkdocstrings' python handler, ``extensions``) that turns the
Sphinx cross-reference roles of zarrbolt's docstrings (``:func:`~zarrbolt.copy```,
``:class:`Array```, ``:meth:`resize```, ``:mod:``, ``:data:``, ``:attr:``, ``:exc:``) into links
of the API reference, as the site is built: the docstrings keep the roles (what ``help()`` and
the editors show), the site gets links.

Each role's target is resolved where the docstring is: in its object's scope (a class's members,
a module's names and imports), then its parents', then the package's top level; a ``~`` shows the
last name only.  The result is an autorefs cross-reference marked optional: a link where the
target is rendered in the site, plain code where it is not (a private module the reference does
not show), never a build warning and never the raw role."""

from __future__ import annotations

import html
import re
from typing import Any

from griffe import Alias, Extension, Module, Object

ROLE = re.compile(r":(?:py:)?(?P<kind>func|class|meth|mod|data|attr|exc|obj|const):`(?P<tilde>~?)(?P<name>[^`]+?)`")
PACKAGE = "zarrbolt"


def _scopes(obj: Object) -> list[Object]:
    out: list[Object] = []
    o: Any = obj
    while o is not None:
        if o.is_class or o.is_module:
            out.append(o)
        o = o.parent
    return out


def _resolve(obj: Object, name: str, root: Module) -> str | None:
    """The full path ``name`` names from ``obj``'s docstring, or None."""
    name = name.strip().removesuffix("()")
    if name == PACKAGE or name.startswith(PACKAGE + "."):
        return name
    first, _, rest = name.partition(".")
    for scope in _scopes(obj):
        try:
            base = scope.resolve(first)
        except Exception:  # noqa: BLE001 - griffe raises NameResolutionError (and others) when unknown
            continue
        return f"{base}.{rest}" if rest else base
    try:  # a name of the package's top level (zarrbolt.Array, zarrbolt.copy, ...)
        return root[name].path
    except (KeyError, Exception):  # noqa: BLE001 - griffe's lookup errors
        return None


def convert(text: str, obj: Object, root: Module) -> str:
    """``text`` with every role replaced (see the module doc)."""

    def link(m: re.Match[str]) -> str:
        written = m["name"].strip()
        title = written.rsplit(".", 1)[-1] if m["tilde"] else written
        code = f"<code>{html.escape(title)}</code>"
        target = _resolve(obj, written, root)
        if target is None:
            return code
        return f'<autoref identifier="{html.escape(target)}" optional>{code}</autoref>'

    return ROLE.sub(link, text)


class SphinxRoles(Extension):
    """Rewrites the roles of every docstring of the package once it is loaded."""

    def on_package(self, *, pkg: Module, **kwargs: Any) -> None:
        seen: set[int] = set()

        def walk(obj: Object) -> None:
            if id(obj) in seen:
                return
            seen.add(id(obj))
            if obj.docstring is not None and ":" in obj.docstring.value:
                obj.docstring.value = convert(obj.docstring.value, obj, pkg)
            for member in obj.members.values():
                if not isinstance(member, Alias):
                    walk(member)

        walk(pkg)
