"""What a person at a terminal sees of the cluster: `kubectl` calls, and `kubectl get -w` per kind.

`Observer` keeps one `kubectl get KIND -A -w -o json --output-watch-events` per kind for as long
as it runs, so every state an object passed through is recorded with the moment it was seen,
including objects that lived only for a moment (a duplicate InstallPlan created and deleted,
a CSV that flipped to Failed for a second). A watch that ends is started again (its relist
replays ADDED events, which change nothing here: an object's state only counts as new when its
resourceVersion is new).

Used by the fault trials (benchmarks/fault_stories.py), `make bench` and the e2e restart tests.
Talks only to the local cluster the kubeconfig in `env` names.
"""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Short name -> the fully qualified resource `kubectl get` is given (no short-name clashes).
RESOURCES: dict[str, str] = {
    "csv": "clusterserviceversions.operators.coreos.com",
    "subscription": "subscriptions.operators.coreos.com",
    "installplan": "installplans.operators.coreos.com",
    "operatorgroup": "operatorgroups.operators.coreos.com",
    "operatorcondition": "operatorconditions.operators.coreos.com",
    "deployment": "deployments.apps",
    "serviceaccount": "serviceaccounts",
    "role": "roles.rbac.authorization.k8s.io",
    "rolebinding": "rolebindings.rbac.authorization.k8s.io",
    "memcached": "memcacheds.cache.example.com",
}


class KubectlError(RuntimeError):
    """A `kubectl` call failed; the message has the command and its stderr."""


@dataclass
class Kube:
    """`kubectl` against one cluster."""

    kubectl_path: Path
    env: dict[str, str]

    def run(
        self, *args: str, stdin: str | None = None, check: bool = True, timeout: float = 60
    ) -> str:
        result = subprocess.run(
            [str(self.kubectl_path), *args],
            input=stdin,
            capture_output=True,
            text=True,
            env=self.env,
            timeout=timeout,
        )
        if check and result.returncode != 0:
            raise KubectlError(f"kubectl {' '.join(args)} failed: {result.stderr.strip()}")
        return result.stdout

    def get_json(self, *args: str) -> Any:
        return json.loads(self.run("get", *args, "-o", "json"))

    def apply(self, obj: dict[str, Any], namespace: str | None = None) -> None:
        where = ["-n", namespace] if namespace else []
        self.run("apply", *where, "-f", "-", stdin=json.dumps(obj))

    def apply_file(self, path: Path, namespace: str | None = None) -> None:
        where = ["-n", namespace] if namespace else []
        self.run("apply", *where, "-f", str(path))


@dataclass(frozen=True)
class Seen:
    """One state of one object, as a watch delivered it."""

    at: float  # time.monotonic() when it arrived
    kind: str
    type: str  # ADDED, MODIFIED, DELETED
    obj: dict[str, Any]

    @property
    def namespace(self) -> str:
        return str(self.obj["metadata"].get("namespace", ""))

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])

    @property
    def resource_version(self) -> str:
        return str(self.obj["metadata"].get("resourceVersion", ""))


@dataclass
class _Namespace:
    history: list[Seen] = field(default_factory=list)
    latest: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)


class Observer:
    """Every state of the watched kinds, per namespace, for as long as it runs."""

    def __init__(
        self,
        kube: Kube,
        kinds: Iterable[str],
        keep: Callable[[str], bool] = lambda namespace: True,
    ) -> None:
        self.kube = kube
        self.kinds = list(kinds)
        self.keep = keep
        self._lock = threading.Lock()
        self._namespaces: dict[str, _Namespace] = {}
        self._versions: dict[tuple[str, str, str], str] = {}
        self._listed: set[str] = set()
        self._closed = threading.Event()
        self._processes: dict[str, subprocess.Popen[str]] = {}
        self._threads = [
            threading.Thread(target=self._follow, args=(kind,), daemon=True) for kind in self.kinds
        ]

    # ----- running ------------------------------------------------------------------------------

    def start(self, timeout: float = 60) -> Observer:
        for thread in self._threads:
            thread.start()
        # A watch is useful once its first list arrived; kinds with no objects yet never
        # show that, so wait for the kinds every namespace has (ServiceAccount "default").
        deadline = time.monotonic() + timeout
        while "serviceaccount" in self.kinds and "serviceaccount" not in self._listed:
            if time.monotonic() > deadline:
                raise KubectlError("the ServiceAccount watch delivered nothing")
            time.sleep(0.1)
        time.sleep(1.0)
        return self

    def close(self) -> None:
        self._closed.set()
        for process in list(self._processes.values()):
            if process.poll() is None:
                process.terminate()
                process.wait()

    def _follow(self, kind: str) -> None:
        while not self._closed.is_set():
            process = subprocess.Popen(
                [
                    str(self.kube.kubectl_path),
                    "get",
                    RESOURCES[kind],
                    "--all-namespaces",
                    "--watch",
                    "-o",
                    "json",
                    "--output-watch-events",
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=self.kube.env,
                text=True,
            )
            self._processes[kind] = process
            assert process.stdout is not None
            lines: list[str] = []
            # Into a pipe kubectl prints one compact JSON event per line (into a terminal,
            # indented JSON whose closing brace is alone at column 0): one json.loads per
            # event either way, no re-parsing of partial buffers.
            for line in process.stdout:
                lines.append(line)
                end = line.rstrip("\n")
                if end == "}" or (len(lines) == 1 and end.endswith("}")):
                    event = json.loads("".join(lines))
                    lines = []
                    self._record(kind, event["type"], event["object"])
            process.wait()
            if not self._closed.is_set():
                time.sleep(1.0)  # the watch ended (or the kind is not served yet): again

    def _record(self, kind: str, event_type: str, obj: dict[str, Any]) -> None:
        self._listed.add(kind)
        meta = obj.get("metadata") or {}
        namespace, name = meta.get("namespace", ""), meta.get("name", "")
        if not self.keep(namespace):
            return
        key = (kind, namespace, name)
        version = str(meta.get("resourceVersion", ""))
        with self._lock:
            if event_type != "DELETED" and self._versions.get(key) == version:
                return  # a relist replaying a state already recorded
            self._versions[key] = version
            space = self._namespaces.setdefault(namespace, _Namespace())
            space.history.append(Seen(time.monotonic(), kind, event_type, obj))
            if event_type == "DELETED":
                space.latest.pop((kind, name), None)
                self._versions.pop(key, None)
            else:
                space.latest[(kind, name)] = obj

    def resync(self, namespace: str) -> None:
        """List every watched kind in `namespace` now and record what the watches missed:
        objects gone (as DELETED) and newer states (as MODIFIED)."""
        listed = self.kube.get_json(",".join(RESOURCES[k] for k in self.kinds), "-n", namespace)
        kinds = {RESOURCES[k].split(".")[0]: k for k in self.kinds}
        present: dict[tuple[str, str], dict[str, Any]] = {}
        for item in listed["items"]:
            plural = next((p for p in kinds if item["kind"].lower() in (p, p.rstrip("s"))), None)
            kind = kinds.get(plural or "", "")
            if kind:
                present[(kind, item["metadata"]["name"])] = item
        with self._lock:
            space = self._namespaces.get(namespace)
            stale = [] if space is None else [k for k in space.latest if k not in present]
            gone = [(k, space.latest[k]) for k in stale] if space is not None else []
        for (kind, _), obj in gone:
            self._record(kind, "DELETED", obj)
        for (kind, _), obj in present.items():
            self._record(kind, "MODIFIED", obj)

    # ----- reading ------------------------------------------------------------------------------

    def items(self, kind: str, namespace: str) -> list[dict[str, Any]]:
        """The current objects of `kind` in `namespace`, by name."""
        with self._lock:
            space = self._namespaces.get(namespace)
            if space is None:
                return []
            return sorted(
                (o for (k, _), o in space.latest.items() if k == kind),
                key=lambda o: str(o["metadata"]["name"]),
            )

    def get(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        with self._lock:
            space = self._namespaces.get(namespace)
            return None if space is None else space.latest.get((kind, name))

    def history(self, namespace: str, since: float = 0.0) -> list[Seen]:
        with self._lock:
            space = self._namespaces.get(namespace)
            return [] if space is None else [s for s in space.history if s.at >= since]

    def last_change(self, namespaces: Iterable[str]) -> float:
        """When anything in `namespaces` last changed (0.0 if never)."""
        with self._lock:
            times = [
                space.history[-1].at
                for n in namespaces
                if (space := self._namespaces.get(n)) and space.history
            ]
        return max(times, default=0.0)

    def forget(self, namespace: str) -> None:
        """Drop what was recorded of `namespace` (a finished trial), and ignore it from now on."""
        with self._lock:
            self._namespaces.pop(namespace, None)
            for key in [k for k in self._versions if k[1] == namespace]:
                del self._versions[key]
        keep = self.keep
        self.keep = lambda n: n != namespace and keep(n)


def differences(before: Any, after: Any, path: str = "", limit: int = 8) -> list[str]:
    """`path: old -> new` for each leaf that differs (resourceVersion and write times left out)."""
    found: list[str] = []

    def walk(old: Any, new: Any, where: str) -> None:
        if len(found) >= limit or where.endswith(
            (".resourceVersion", ".time", ".lastUpdateTime", ".lastTransitionTime", ".lastUpdated")
        ):
            return
        if isinstance(old, dict) and isinstance(new, dict):
            for key in sorted(set(old) | set(new)):
                walk(old.get(key), new.get(key), f"{where}.{key}")
        elif isinstance(old, list) and isinstance(new, list) and (keyed := _by_key(old, new)):
            before, after = keyed
            for key in [*before, *(k for k in after if k not in before)]:
                walk(before.get(key), after.get(key), f"{where}[{key}]")
        elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
            for index, (a, b) in enumerate(zip(old, new, strict=True)):
                walk(a, b, f"{where}[{index}]")
        elif old != new:
            found.append(f"{where.lstrip('.')}: {_short(old)} -> {_short(new)}")

    walk(before, after, path)
    return found


def _by_key(old: list[Any], new: list[Any]) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Lists of conditions (or named entries) compared by their type (or name), not position."""
    for key in ("type", "name"):
        if all(isinstance(i, dict) and key in i for i in [*old, *new]):
            return {str(i[key]): i for i in old}, {str(i[key]): i for i in new}
    return None


def writers(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The field managers whose entries in managedFields are new or were rewritten."""
    old = {
        json.dumps({k: v for k, v in e.items() if k != "time"}, sort_keys=True): e.get("time")
        for e in before["metadata"].get("managedFields") or []
    }
    names = []
    for entry in after["metadata"].get("managedFields") or []:
        key = json.dumps({k: v for k, v in entry.items() if k != "time"}, sort_keys=True)
        if old.get(key, "missing") != entry.get("time"):
            label = f"{entry.get('manager')} ({entry.get('operation')}"
            label += f" {entry['subresource']})" if entry.get("subresource") else ")"
            names.append(label)
    return names


def _short(value: Any) -> str:
    text = json.dumps(value) if value is not None else "absent"
    return text if len(text) <= 80 else text[:77] + "..."
