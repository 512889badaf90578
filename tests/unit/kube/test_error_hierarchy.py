"""One error hierarchy: NotFound and Conflict are GatewayErrors, so no handler anywhere in olm/
may catch GatewayError before a later handler of the same `try` that names a subclass (the
later one would never run)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from olm.kube import gateway
from olm.kube.errors import Conflict, GatewayError, NotFound, UnservedKind

OLM = Path(__file__).resolve().parents[3] / "olm"
SUBCLASSES = {"NotFound", "Conflict", "UnservedKind"}


@pytest.mark.parametrize(
    ("error", "status"),
    [(NotFound("x"), 404), (Conflict("x"), 409), (UnservedKind("x", 404), 404)],
)
def test_every_gateway_error_carries_its_status(error: GatewayError, status: int) -> None:
    assert isinstance(error, GatewayError)
    assert error.status == status


def test_the_gateway_module_still_exports_the_errors() -> None:
    assert gateway.NotFound is NotFound and gateway.Conflict is Conflict
    assert gateway.GatewayError is GatewayError and gateway.UnservedKind is UnservedKind


def _names(handler: ast.ExceptHandler) -> set[str]:
    node = handler.type
    items = node.elts if isinstance(node, ast.Tuple) else [node] if node else []
    return {item.id if isinstance(item, ast.Name) else getattr(item, "attr", "") for item in items}


def shadowed_handlers() -> list[str]:
    found = []
    for path in sorted(OLM.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Try):
                continue
            broad_at = None
            for handler in node.handlers:
                names = _names(handler)
                if broad_at is not None and names & SUBCLASSES:
                    found.append(f"{path.relative_to(OLM.parent)}:{handler.lineno}")
                if "GatewayError" in names and broad_at is None:
                    broad_at = handler.lineno
    return found


def test_no_handler_of_a_subclass_comes_after_gateway_error() -> None:
    assert shadowed_handlers() == []
