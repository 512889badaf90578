"""`make tools` / `olm dev tools`: every pinned tool by default, only the named ones otherwise,
and the PATH line for the tools run as commands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from olm import cli
from olm.devcluster import tools
from olm.progress import Progress


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Stand-ins for the builds: each records its name and returns a path."""
    calls: list[str] = []

    def stand_in(name: str, path: str) -> Callable[[Progress], Path]:
        def ensure(progress: Progress) -> Path:
            calls.append(name)
            return Path(path)

        return ensure

    monkeypatch.setattr(
        tools,
        "TOOLS",
        {
            "helm": stand_in("helm", "/c/tools/helm-v3/helm"),
            "kubectl-operator": stand_in("kubectl-operator", "/c/tools/ko-v0/kubectl-operator"),
            "reference-olm": stand_in("reference-olm", "/c/tools/olm-v0.38.0"),
        },
    )
    return calls


def test_every_pinned_tool_is_built_by_default(built: list[str]) -> None:
    paths = tools.ensure_tools([])
    assert built == ["helm", "kubectl-operator", "reference-olm"]
    assert tools.path_hint(paths) == 'export PATH="/c/tools/helm-v3:/c/tools/ko-v0:$PATH"'


def test_only_the_named_tools_are_built(built: list[str]) -> None:
    paths = tools.ensure_tools(["reference-olm"])
    assert built == ["reference-olm"]
    assert tools.path_hint(paths) is None  # nothing to put on PATH


def test_the_command_prints_each_path_and_the_path_line(
    built: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["dev", "tools", "helm"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == ["/c/tools/helm-v3/helm"]
    assert 'export PATH="/c/tools/helm-v3:$PATH"' in err


def test_an_unknown_tool_is_refused_before_any_build(
    built: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["dev", "tools", "kubectl"])
    assert exit_.value.code == 2
    assert "'kubectl' is not one of" in capsys.readouterr().err
    assert built == []


def test_the_pinned_tools_are_helm_kubectl_operator_and_the_reference_olm() -> None:
    assert list(tools.TOOLS) == ["helm", "kubectl-operator", "reference-olm"]
