"""Soak under faults: many namespaces under random user actions while faults are injected,
invariants judged from the watch streams the whole time (`make soak`).

    python -m benchmarks.soak                      # 60 minutes, 60 namespaces
    python -m benchmarks.soak --quick              # 5 minutes, 20 namespaces
    python -m benchmarks.soak --minutes 10 --namespaces 50 --seed 7

On a local cluster of its own (started and stopped here): two `olm run --leader-elect`
(`--replicas 1`: one, without), the soak catalog served from the host (catalog.py), one
`kubectl get -w` per kind recording every state (benchmarks/watching.py). The user
(actions.py) acts every few seconds in a random namespace not busy; faults (faults.py) come
`--fault-interval` seconds on average after the previous one ended (45 s: with the faults'
own 10-20 s, about 55 an hour, over the issue's 40), their kinds drawn round-robin in a
fresh random order each round. Actions wait while the API server is stopped or restarting (as a user
would); a kubectl step that fails is retried. After `--minutes`, actions and faults stop and
every namespace gets up to `converge.LIMIT` + 30 s to converge; then everything is judged
(converge.py, invariants.py) and written (report.py).
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from benchmarks.cli import RESULTS, parser
from benchmarks.fault_stories import KINDS, prepare_cluster
from benchmarks.soak import converge, invariants, report
from benchmarks.soak.actions import Actor, choices
from benchmarks.soak.catalog import Catalog, heads
from benchmarks.soak.converge import Desired, Touch
from benchmarks.soak.faults import FaultRecord, Injector, OlmRun
from benchmarks.soak.sampling import Sampler
from benchmarks.soak.watch import SoakObserver, diagnose
from benchmarks.watching import Kube, KubectlError, Observer
from olm.devcluster import health, manifests
from olm.devcluster.build import ensure_binaries
from olm.devcluster.cluster import DevCluster
from olm.progress import Progress

# Mean seconds from a fault's end to the next one's start. 75 gave 11 faults in the first 17
# minutes of a 60-minute run here, under the 40 an hour.
FAULT_INTERVAL = 45.0
CATALOG_UPDATE = "catalog-update"


class Soak:
    """The state of one soak: what was asked, what happened, when."""

    def __init__(self, names: list[str], origin: float) -> None:
        self.lock = threading.Lock()
        self.names = names
        self.origin = origin
        self.desired = {n: Desired() for n in names}
        self.touches = [Touch(origin, n, "start", Desired()) for n in names]
        self.heads: list[tuple[float, dict[str, str]]] = [(origin, heads(0))]
        self.actions: list[dict[str, Any]] = []
        self.faults: list[FaultRecord] = []
        self.busy: set[str] = set()
        self.operand_deletions: dict[str, list[float]] = defaultdict(list)
        self.gone: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self.api_ok = threading.Event()
        self.api_ok.set()
        self.faulting = threading.Event()  # a fault is in progress

    def touch_all(self, at: float, cause: str, judged: bool = True) -> None:
        with self.lock:
            for name in self.names:
                self.touches.append(Touch(at, name, cause, self.desired[name], judged))


def act(soak: Soak, actor: Actor, namespace: str, name: str, say: Any) -> None:
    started = time.monotonic()
    ok, detail = True, ""
    try:
        soak.api_ok.wait()
        started = time.monotonic()  # the user waited for the API server to come back
        with soak.lock:
            before = soak.desired[namespace]
        if name == "delete-operand":
            soak.operand_deletions[namespace].append(started)
        if name == "recreate-namespace":
            with soak.lock:
                soak.desired[namespace] = Desired(mode="deleted")
                soak.touches.append(
                    Touch(started, namespace, "action:delete-namespace", soak.desired[namespace])
                )
                soak.gone[namespace].append((started, float("inf")))
        after = actor.act(name, namespace, before)
        now = time.monotonic()
        with soak.lock:
            if name == "recreate-namespace":
                soak.gone[namespace][-1] = (started, now)
            soak.desired[namespace] = after
            # Timed from the moment the user started the command (a recreated namespace:
            # from its creation, when there is something to converge again); from its end
            # when a fault or a catalog update touched the namespace meanwhile (their touch
            # carried what was asked before); not judged while a fault lasts (its end is).
            later = any(t.at > started for t in soak.touches if t.namespace == namespace)
            at = now if name == "recreate-namespace" or later else started
            judged = not soak.faulting.is_set()
            soak.touches.append(Touch(at, namespace, f"action:{name}", after, judged))
    except (KubectlError, OSError) as exc:
        ok, detail = False, str(exc)[:300]
        say(f"action {name} in {namespace} failed: {detail}")
    finally:
        with soak.lock:
            soak.actions.append(
                {
                    "at": round(started - soak.origin, 2),
                    "took": round(time.monotonic() - started, 2),
                    "namespace": namespace,
                    "action": name,
                    "ok": ok,
                    "detail": detail,
                }
            )
            soak.busy.discard(namespace)


def objects(observer: Observer, namespace: str) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (kind, o["metadata"]["name"]): o for kind in KINDS for o in observer.items(kind, namespace)
    }


def judge(
    soak: Soak, observer: Observer, log: Path, end: float
) -> tuple[list[converge.Episode], list[invariants.Violation]]:
    episodes: list[converge.Episode] = []
    found: list[invariants.Violation] = []
    with soak.lock:
        touches = list(soak.touches)
        heads_now = list(soak.heads)
    for name in soak.names:
        history = observer.history(name)
        done = converge.episodes(name, history, touches, heads_now, end)
        episodes += done
        found += [
            invariants.Violation(
                "convergence",
                name,
                e.start,
                f"after {e.cause}: not converged in {converge.LIMIT:.0f} s: {'; '.join(e.missing)}"
                if e.seconds is None
                else f"after {e.cause}: converged only after {e.seconds:.1f} s",
            )
            for e in done
            if e.violation
        ]
        deletions = [start for start, _ in soak.gone[name]]
        found += invariants.operand_identity(
            name, history, sorted(soak.operand_deletions[name] + deletions)
        )
        found += invariants.live_csv_objects(name, history, soak.gone[name])
        found += invariants.installplans(name, history)
    text = log.read_text(errors="replace") if log.exists() else ""
    found += [invariants.Violation("traceback", "", 0.0, t) for t in invariants.tracebacks(text)]
    return episodes, found


def run(
    out: Path,
    minutes: float,
    namespaces: int,
    seed: int,
    replicas: int,
    action_interval: float,
    fault_interval: float,
) -> dict[str, Any]:
    rng = random.Random(seed)
    progress = Progress()
    log = Path(tempfile.gettempdir()) / f"olm-soak-{seed}-olm-run.log"
    log.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="olm-soak-") as state:
        cluster = DevCluster(Path(state) / "dev", binaries=ensure_binaries(), progress=progress)
        cluster.up()
        env = {**os.environ, **cluster.env()}
        assert cluster.bin_dir is not None
        kube = Kube(cluster.bin_dir / "kubectl", env)
        catalog = Catalog(Path(state) / "catalog")
        flags = ("--leader-elect",) if replicas > 1 else ()
        olms = [OlmRun(env, log, flags) for _ in range(replicas)]
        observer: SoakObserver | None = None
        sampler: Sampler | None = None
        try:
            manifests.install(cluster)
            prepare_cluster(kube)
            catalog.start()
            catalog.source(kube)
            for olm in olms:
                olm.start()
            names = [f"soak-{n:03d}" for n in range(namespaces)]
            watch = SoakObserver(
                kube, KINDS, keep=lambda n: n.startswith("soak-") and not n.endswith("-t")
            )
            observer = watch
            watch.start()
            actor = Actor(kube, watch, rng)
            for name in names:
                actor.prepare(name)
            progress.say(f"{namespaces} namespaces ready; soaking for {minutes:g} minutes")
            origin = time.monotonic()
            soak = Soak(names, origin)
            keys = cluster.state_dir / "pki"
            api_url = json.loads(cluster.record_path.read_text())["api_url"]
            sampler = Sampler(
                lambda: [o.pid for o in olms],
                api_url,
                health.admin_context(keys / "ca.crt", keys / "admin.crt", keys / "admin.key"),
                origin,
            ).start()
            _soak(
                soak,
                actor,
                watch,
                catalog,
                cluster,
                kube,
                olms,
                rng,
                log,
                progress,
                minutes,
                action_interval,
                fault_interval,
            )
            end = time.monotonic()
            episodes, violations = judge(soak, watch, log, end)
            sampler.close()
            exits = [
                (round(at - origin, 2), index, status)
                for index, olm in enumerate(olms)
                for at, status in olm.exits
            ]
            events = Counter(
                f"{seen.kind} {seen.type}" for name in names for seen in watch.history(name)
            )
            diagnosis = {
                name: diagnose(kube, watch, name, origin)
                for name in sorted({v.namespace for v in violations if v.namespace})
            }
            summary = report.summary(
                soak,
                episodes,
                violations,
                sampler.samples,
                end,
                seed=seed,
                minutes=minutes,
                replicas=replicas,
                log=log,
                exits=exits,
                events=dict(sorted(events.items())),
            )
            summary["diagnosis"] = diagnosis
            summary["watch_failures"] = [
                (round(at - origin, 2), kind, error) for at, kind, error in watch.failures
            ]
        finally:
            if sampler is not None:
                sampler.close()
            if observer is not None:
                observer.close()
            for olm in olms:
                olm.stop()
            catalog.stop()
            cluster.down()
    out.mkdir(parents=True, exist_ok=True)
    (out / "soak.json").write_text(json.dumps(summary, indent=2))
    report.plot(out / "soak.svg", summary)
    return summary


def _soak(
    soak: Soak,
    actor: Actor,
    observer: Observer,
    catalog: Catalog,
    cluster: DevCluster,
    kube: Kube,
    olms: list[OlmRun],
    rng: random.Random,
    log: Path,
    progress: Progress,
    minutes: float,
    action_interval: float,
    fault_interval: float,
) -> None:
    deadline = soak.origin + minutes * 60
    fault_rng = random.Random(rng.random())

    def api_down(down: bool) -> None:
        if down:
            soak.api_ok.clear()
        else:
            soak.api_ok.set()

    def resync() -> None:
        """After the API server restarted, the watches relisted: what was deleted during the
        gap is only found by listing. Right after a restart a listing may still fail (the
        CRDs' discovery comes back a moment later): tried again until it works."""
        for name in soak.names:
            for _ in range(10):
                try:
                    observer.resync(name)
                    break
                except (KubectlError, OSError):
                    time.sleep(2.0)

    injector = Injector(cluster, kube, olms, catalog, fault_rng, progress.say, api_down, resync)

    def faults() -> None:
        queue: list[str] = []
        while True:
            wait = fault_rng.expovariate(1.0 / fault_interval)
            if time.monotonic() + wait >= deadline:
                return
            time.sleep(wait)
            if not queue:
                queue = injector.available()
                fault_rng.shuffle(queue)
            kind = queue.pop(0)
            progress.say(f"fault {kind} ...")
            soak.faulting.set()
            try:
                record = injector.inject(kind)
            except (RuntimeError, OSError, KubectlError) as exc:
                record = FaultRecord(kind, time.monotonic(), time.monotonic(), f"failed: {exc}")
            progress.say(f"fault {kind}: {record.detail} ({record.end - record.start:.1f} s)")
            with soak.lock:
                soak.faults.append(record)
                if kind == "bounce-catalog":
                    soak.heads.append((record.end, heads(catalog.generation)))
            soak.touch_all(record.start, f"fault-start:{kind}", judged=False)
            soak.touch_all(record.end, f"fault:{kind}")
            soak.faulting.clear()

    injector_thread = threading.Thread(target=faults, daemon=True)
    injector_thread.start()
    supervising = threading.Event()

    def supervise() -> None:
        while not supervising.wait(1.0):
            for olm in olms:
                olm.supervise()

    threading.Thread(target=supervise, daemon=True).start()
    workers: list[threading.Thread] = []
    next_report = time.monotonic() + 60
    catalog_lock = threading.Lock()

    def update_catalog() -> None:
        if not catalog_lock.acquire(blocking=False):
            return
        try:
            soak.api_ok.wait()
            started = time.monotonic()
            catalog.restart()
            now = time.monotonic()
            with soak.lock:
                soak.heads.append((now, heads(catalog.generation)))
                soak.actions.append(
                    {
                        "at": round(started - soak.origin, 2),
                        "took": round(now - started, 2),
                        "namespace": "",
                        "action": CATALOG_UPDATE,
                        "ok": True,
                        "detail": f"generation {catalog.generation}",
                    }
                )
            soak.touch_all(now, f"action:{CATALOG_UPDATE}")
        finally:
            catalog_lock.release()

    while time.monotonic() < deadline:
        time.sleep(rng.expovariate(1.0 / action_interval))
        if time.monotonic() >= deadline:
            break
        workers = [w for w in workers if w.is_alive()]
        if time.monotonic() >= next_report:
            next_report = time.monotonic() + 60
            episodes, violations = judge(soak, observer, log, time.monotonic())
            elapsed = (time.monotonic() - soak.origin) / 60
            progress.say(f"[{elapsed:.1f} min] {report.line(soak, episodes, violations)}")
        if rng.random() < 0.04:
            workers.append(threading.Thread(target=update_catalog, daemon=True))
            workers[-1].start()
            continue
        with soak.lock:
            free = [n for n in soak.names if n not in soak.busy and choices(soak.desired[n])]
            if not free:
                continue
            namespace = rng.choice(free)
            name = rng.choice(choices(soak.desired[namespace]))
            soak.busy.add(namespace)
        worker = threading.Thread(
            target=act, args=(soak, actor, namespace, name, progress.say), daemon=True
        )
        worker.start()
        workers.append(worker)
    progress.say("time is up: no more actions or faults; waiting for them to finish")
    injector_thread.join()
    for worker in workers:
        worker.join(360)
    drain = time.monotonic() + converge.LIMIT + 30
    while time.monotonic() < drain:
        with soak.lock:
            desired, current = dict(soak.desired), soak.heads[-1][1]
        waiting = [
            n for n in soak.names if converge.missing(desired[n], objects(observer, n), current, n)
        ]
        if not waiting:
            break
        time.sleep(1.0)
    supervising.set()
    progress.say("judging")


def main(argv: list[str] | None = None) -> int:
    command = parser(
        "benchmarks.soak",
        __doc__,
        takes="--minutes plus a few minutes to start and judge (one local cluster; needs "
        "the built binaries); --quick: about 8 minutes",
        writes="soak.json and soak.svg to benchmarks/results/ (--quick: to a temporary "
        "directory, printed; --out: there)",
    )
    command.add_argument("--minutes", type=float, help="how long to soak (default 60; quick 5)")
    command.add_argument(
        "--namespaces", type=int, help="namespaces under churn (default 60; quick 20)"
    )
    command.add_argument("--quick", action="store_true", help="5 minutes, 20 namespaces")
    command.add_argument("--seed", type=int, help="random seed (default: the time)")
    command.add_argument(
        "--replicas", type=int, default=2, help="olm run replicas (2: with --leader-elect)"
    )
    command.add_argument(
        "--action-interval", type=float, default=4.0, help="mean seconds between actions"
    )
    command.add_argument(
        "--fault-interval",
        type=float,
        default=FAULT_INTERVAL,
        help="mean seconds from one fault's end to the next one's start",
    )
    command.add_argument("--out", type=Path, help="results directory")
    args = command.parse_args(argv)
    minutes = args.minutes or (5.0 if args.quick else 60.0)
    namespaces = args.namespaces or (20 if args.quick else 60)
    seed = args.seed if args.seed is not None else int(time.time())
    out = args.out or (Path(tempfile.mkdtemp(prefix="olm-soak-")) if args.quick else RESULTS)
    summary = run(
        out,
        minutes,
        namespaces,
        seed,
        args.replicas,
        args.action_interval,
        args.fault_interval if not args.quick or args.fault_interval != FAULT_INTERVAL else 30.0,
    )
    print(json.dumps({k: v for k, v in summary.items() if k not in report.BULKY}, indent=2))
    print(f"results in {out}")
    return 0
