"""Issue 15: an operator whose CSV speaks emoji installs like any other.

The admin applies, with `kubectl apply`, a CSV whose display name, description, provider,
annotations and Deployment pod-template annotations hold characters outside the Basic
Multilingual Plane. OLM copies every CSV annotation (kubectl's last-applied-configuration
too, so the display name travels) into the operator's pod template; the CSV must reach
Succeeded and the text must arrive on the Deployment exactly as written.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import yaml

from tests.support.cluster import ControlPlane
from tests.support.olm_run import OlmOperator
from tests.support.stories import minimal_csv, operator_group, wait_phase

NAME = "emoji-operator"
GRIN = "\U0001f600"
SPEC_TEXT = {
    "displayName": f"Emoji operator {GRIN}",
    "description": f"Says hello {GRIN} \U0001f680 in 日本語, é and ✓",
    "provider": {"name": f"Smiles {GRIN} Inc."},
}
CSV_ANNOTATIONS = {
    "example.com/mood": f"{GRIN} happy",
    "example.com/team": "\U0001f469\u200d\U0001f4bb\U0001f468\u200d\U0001f469\u200d\U0001f467",
    # YAML would fold a raw LINE SEPARATOR inside a quoted string; it must arrive as it is.
    "example.com/lines": "first\u2028second",
}
POD_ANNOTATIONS = {"example.com/pod-mood": f"pod {GRIN}\U0001f389"}


def emoji_csv() -> dict[str, Any]:
    csv = copy.deepcopy(minimal_csv(NAME, **SPEC_TEXT))
    csv["metadata"]["annotations"] = dict(CSV_ANNOTATIONS)
    template = csv["spec"]["install"]["spec"]["deployments"][0]["spec"]["template"]
    template["metadata"]["annotations"] = dict(POD_ANNOTATIONS)
    return csv


def test_a_csv_with_emoji_installs_and_keeps_its_text(
    control_plane: ControlPlane, olm_operator: OlmOperator, namespace: str
) -> None:
    operator_group(control_plane, namespace)
    manifest = yaml.safe_dump(emoji_csv(), allow_unicode=True, sort_keys=False)
    assert GRIN in manifest  # the admin's file holds the emoji itself, not an escape
    control_plane.kubectl("apply", "-n", namespace, "-f", "-", stdin=manifest)

    csv = wait_phase(control_plane, namespace, NAME, "Succeeded/InstallSucceeded")

    for field, value in SPEC_TEXT.items():
        assert csv["spec"][field] == value, field
    deployment = control_plane.get_json("deployment", f"{NAME}-controller", "-n", namespace)
    pod_annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    for key, value in {**CSV_ANNOTATIONS, **POD_ANNOTATIONS}.items():
        assert pod_annotations.get(key) == value, key
    last_applied = json.loads(pod_annotations["kubectl.kubernetes.io/last-applied-configuration"])
    assert last_applied["spec"]["displayName"] == SPEC_TEXT["displayName"]
    assert last_applied["spec"]["description"] == SPEC_TEXT["description"]
