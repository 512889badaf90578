"""Per-kind reshaping of the objects a parity snapshot holds, before they are normalized
(tests/parity/normalize.py): what one implementation writes in an order or at a moment the other
does not, and that is not a difference.

- A CSV's `status.conditions` history loses its timing-dependent `Installing/InstallWaiting`
  entries, consecutive repeats collapsed.
- A PackageManifest's `currentCSVDesc.relatedImages` are sorted (packageserver gathers them in a
  Go map: their order changes from call to call).

Pure functions on plain dicts; an object that is not shaped as expected comes back unchanged.
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def csv_history(csv: Obj) -> Obj:
    """A CSV's `status.conditions` (its phase history) without the timing-dependent
    `Installing/InstallWaiting` entries (written or not depending on when the Deployment's
    status arrives), consecutive repeats collapsed."""
    status = csv.get("status")
    if not isinstance(status, dict) or not isinstance(status.get("conditions"), list):
        return csv
    history: list[Any] = []
    for entry in status["conditions"]:
        if isinstance(entry, dict) and entry.get("reason") == "InstallWaiting":
            continue
        same = (
            history
            and isinstance(entry, dict)
            and (history[-1].get("phase"), history[-1].get("reason"))
            == (entry.get("phase"), entry.get("reason"))
        )
        if not same:
            history.append(entry)
    return {**csv, "status": {**status, "conditions": history}}


def related_images_sorted(manifest: Obj) -> Obj:
    """A PackageManifest with each channel's `currentCSVDesc.relatedImages` sorted."""
    status = manifest.get("status")
    if not isinstance(status, dict) or not isinstance(status.get("channels"), list):
        return manifest
    channels = []
    for channel in status["channels"]:
        desc = channel.get("currentCSVDesc") if isinstance(channel, dict) else None
        images = desc.get("relatedImages") if isinstance(desc, dict) else None
        sortable = isinstance(images, list) and all(isinstance(i, str) for i in images)
        if isinstance(desc, dict) and isinstance(images, list) and sortable:
            channel = {**channel, "currentCSVDesc": {**desc, "relatedImages": sorted(images)}}
        channels.append(channel)
    return {**manifest, "status": {**status, "channels": channels}}


BY_KIND = {"ClusterServiceVersion": csv_history, "PackageManifest": related_images_sorted}
