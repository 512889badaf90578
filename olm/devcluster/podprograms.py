"""What the pod runner runs for a pod: the image table, and a container's command and env.

A pod's container image picks its program (podrunner.py runs it):
- a local sample image (`olm-py.local/<name>:<version>`, `PROGRAMS`) runs the sample's Python
  module with `--version <tag>`;
- an image the real OLM and its e2e suite run (`STAND_INS`: OLM's configmap-server, opm, the
  suite's mock-extension-apiserver) runs a stand-in module given the container's command
  (without its program) and args (docs/pod-network.md, "Stand-ins");
- the olm-py image itself (any repository whose last part is `olm-py`) runs this venv's `olm`
  with the container's arguments; `--<name>-port=N` arguments are rewritten to the host ports
  the runner gives the declared containerPorts (`localize_ports`);
- any other image runs nothing (kwok only simulates its pod).

The container's env is its plain values plus `fieldRef`s to the pod's own metadata, name,
namespace, ServiceAccount, node and pod IP (`resolve_env`). Pure: no I/O.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

# Image repository -> the Python module that is its program. The getting-started guide's own
# memcached operator image is served by the sample too: same API, same behaviour, and there
# is no container runtime to run the original.
PROGRAMS: dict[str, str] = {
    "olm-py.local/memcached-operator": "olm.samples.memcached",
    "quay.io/jzelinskie/memcached-operator": "olm.samples.memcached",
    # A validating webhook that answers with its own message (docs/pod-network.md).
    "olm-py.local/echo-webhook": "olm.samples.echo_webhook",
}
# Image repository -> the Python module that stands in for the image's own command: it gets the
# container's command (without the program's name) and args. The real OLM's catalog operator
# serves a ConfigMap catalog from a pod of this image (`configmap-server -c <cm> -n <ns>`).
STAND_INS: dict[str, str] = {
    "quay.io/operator-framework/configmap-operator-registry": "olm.devcluster.standin_configmap_server",
    # OLM's e2e suite serves file-based catalogs from pods of opm (`opm serve /opt/olm`).
    "quay.io/operator-framework/opm": "olm.devcluster.standin_opm",
    # OLM's e2e suite's APIService server (`/bin/mock-extension-apiserver --mock-kinds ...`).
    "quay.io/operator-framework/mock-extension-apiserver": "olm.devcluster.standin_mock_apiserver",
}

OLM_PY_REPOSITORY = "olm-py"  # the last part of the olm-py image's repository


def split_image(image: str) -> tuple[str, str]:
    """(repository, tag) of an image reference (a digest counts as no tag)."""
    image = image.split("@", 1)[0]
    if ":" in image.split("/")[-1]:
        repository, _, tag = image.rpartition(":")
        return repository, tag
    return image, ""


def is_olm_py_image(image: str) -> bool:
    return split_image(image)[0].rsplit("/", 1)[-1] == OLM_PY_REPOSITORY


def olm_executable() -> list[str]:
    """This venv's `olm` command (or `python -m olm.cli` where no script is installed)."""
    script = Path(sys.executable).parent / "olm"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "olm.cli"]


def program_for(image: str, container: dict[str, Any] | None = None) -> list[str] | None:
    """The command line for a local sample image, a stand-in's image or the olm-py image, else
    None.

    The olm-py image runs the container's `command` (its entrypoint is `olm`) and `args` with
    this venv's `olm` in place of the image's.
    """
    repository, tag = split_image(image)
    if is_olm_py_image(image):
        spec = container or {}
        command = [str(part) for part in spec.get("command") or ["olm"]]
        if Path(command[0]).name != "olm":
            return None  # not the olm command: nothing this runner knows how to run
        return [*olm_executable(), *command[1:], *(str(arg) for arg in spec.get("args") or [])]
    stand_in = STAND_INS.get(repository)
    if stand_in is not None:
        spec = container or {}
        given = [
            str(part) for part in [*(spec.get("command") or [])[1:], *(spec.get("args") or [])]
        ]
        return [sys.executable, "-m", stand_in, *given]
    module = PROGRAMS.get(repository)
    if module is None:
        return None
    return [sys.executable, "-m", module, "--version", tag.removeprefix("v") or "latest"]


_PORT_ARG = re.compile(r"(--[a-z-]+-port)(=|$)(\d*)")


def localize_ports(command: list[str], host_ports: dict[int, int]) -> list[str]:
    """`command` with every `--<x>-port=N` / `--<x>-port N` whose N is a declared
    containerPort rewritten to that port's host port."""
    result: list[str] = []
    pending = False  # the previous argument was `--<x>-port` without a value
    for arg in command:
        if pending and arg.isdigit() and int(arg) in host_ports:
            result.append(str(host_ports[int(arg)]))
            pending = False
            continue
        pending = False
        match = _PORT_ARG.fullmatch(arg)
        if match and match[2] == "=" and match[3] and int(match[3]) in host_ports:
            arg = f"{match[1]}={host_ports[int(match[3])]}"
        elif match and not match[2]:
            pending = True
        result.append(arg)
    return result


_FIELD_PATH = re.compile(r"metadata\.(annotations|labels)\['(.+)'\]")


def resolve_env(container: dict[str, Any], pod: dict[str, Any]) -> dict[str, str]:
    """The container's env: plain values, and fieldRefs to the pod's own metadata."""
    meta = pod["metadata"]
    env: dict[str, str] = {}
    for item in container.get("env") or []:
        if "value" in item:
            env[item["name"]] = str(item["value"])
            continue
        path = ((item.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath", "")
        match = _FIELD_PATH.fullmatch(path)
        if match:
            env[item["name"]] = (meta.get(match[1]) or {}).get(match[2], "")
        elif path in ("metadata.name", "metadata.namespace"):
            env[item["name"]] = meta[path.split(".")[1]]
        elif path == "spec.serviceAccountName":
            env[item["name"]] = pod["spec"].get("serviceAccountName", "default")
        elif path in ("status.podIP", "spec.nodeName"):
            section, field = path.split(".")
            env[item["name"]] = str((pod.get(section) or {}).get(field, ""))
    return env
