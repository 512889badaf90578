"""The `secret` and `configMap` volumes of a pod the local pod runner runs, as local files.

Each volume is written to `<pod directory>/volumes/<volume>/` (one file per key, `items`
honoured, mode 0600, nothing outside the volume's directory) when the pod starts; each
container gets `OLM_PY_MOUNTS`, a JSON object `{"<mountPath>": "<local directory>"}` of its
volumeMounts (docs/pod-network.md, "Volumes"). A missing Secret or ConfigMap that is not
`optional` makes the pod wait (`NotYetRunnable`).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

MOUNTS_ENV = "OLM_PY_MOUNTS"


class NotYetRunnable(Exception):
    """The pod cannot start yet (a volume's Secret is missing, no pod IP yet); retried."""


VolumeReader = Callable[[str, str, str], "dict[str, bytes] | None"]


def materialize_volumes(
    pod: dict[str, Any], directory: Path, read: VolumeReader
) -> dict[str, Path]:
    """Write the pod's `secret` and `configMap` volumes under `directory/volumes/<volume>/`
    (`items` pick and rename keys); returns volume name -> directory."""
    namespace = pod["metadata"]["namespace"]
    written: dict[str, Path] = {}
    for volume in pod["spec"].get("volumes") or []:
        for kind, name_field in (("secret", "secretName"), ("configMap", "name")):
            source = volume.get(kind)
            if source is None:
                continue
            name = str(source.get(name_field, ""))
            data = read(namespace, kind, name)
            if data is None:
                if source.get("optional"):
                    data = {}
                else:
                    raise NotYetRunnable(f"{kind} {namespace}/{name} of volume {volume['name']}")
            items = source.get("items")
            files = (
                {str(i["path"]): data[i["key"]] for i in items if i["key"] in data}
                if items
                else data
            )
            target = directory / "volumes" / str(volume["name"])
            if target.exists():
                shutil.rmtree(target)
            target.mkdir(parents=True, mode=0o700)
            for relative, content in files.items():
                path = target / relative
                if target not in path.resolve().parents:
                    continue  # a key may not write outside its volume
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(content)
                path.chmod(0o600)
            written[str(volume["name"])] = target
    return written


def mounts_for(container: dict[str, Any], volumes: dict[str, Path]) -> dict[str, str]:
    """`OLM_PY_MOUNTS` of a container: mountPath -> local directory (or file, with subPath)."""
    mounts = {}
    for mount in container.get("volumeMounts") or []:
        local = volumes.get(str(mount.get("name")))
        if local is None:
            continue
        sub_path = mount.get("subPath")
        mounts[str(mount["mountPath"])] = str(local / sub_path if sub_path else local)
    return mounts
