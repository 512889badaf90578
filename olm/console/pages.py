"""The console's pages: catalog, package and install, installed operators, InstallPlans,
operands, uninstall. Each handler reads with the user's gateway, asks the pure modules what to
show or create, and answers a page (olm.console.views) or a redirect after a write.

Invariants: an action is offered only when a SelfSubjectAccessReview as the user allows it;
every write is one the pure decision made from the submitted form; a refused read is said on
the page, never worked around.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from aiohttp import web

from olm.api.kinds import Kind
from olm.console import catalog, install, operands, operators, read
from olm.console.context import call, console_of, refusal, respond, session_of
from olm.kube.errors import GatewayError, NotFound
from olm.planshow.run import PlanShowError
from olm.preview.render import FLAG_WORDS
from olm.preview.render import lines as preview_lines
from olm.uninstall.run import UninstallError

# ----- catalog ------------------------------------------------------------------------------


async def catalog_page(request: web.Request) -> web.Response:
    session = session_of(request)
    gateway = console_of(request).gateway(session)
    manifests = session.recall(("packagemanifests", session.namespace), time.monotonic())
    if manifests is None:
        manifests = await call(read.package_manifests, gateway, session.namespace)
        session.remember(("packagemanifests", session.namespace), manifests, time.monotonic())
    filters = catalog.Filters.from_query(request.query)
    cards, facets = catalog.browse(manifests, filters)
    return respond(
        request,
        "catalog.html",
        page=catalog.page_of(cards, request.query.get("page")),
        facets=facets,
        filters=filters,
        query=filters.as_query(),
        total=len(manifests),
    )


async def package_page(request: web.Request) -> web.Response:
    console, session = console_of(request), session_of(request)
    gateway = console.gateway(session)
    info = request.match_info
    manifest = await call(
        read.package_manifest,
        gateway,
        session.namespace,
        info["catalog_ns"],
        info["catalog"],
        info["name"],
    )
    if manifest is None:
        return respond(
            request,
            "error.html",
            404,
            title="No such package",
            error=f"No package {info['name']} in catalog {info['catalog_ns']}/{info['catalog']}.",
        )
    can_install = await call(
        read.allowed,
        gateway,
        session,
        "create",
        "operators.coreos.com",
        "subscriptions",
        session.namespace,
    )
    return respond(
        request,
        "package.html",
        card=catalog.card(manifest),
        selected=request.query.get("channel"),
        can_install=can_install,
        namespace=session.namespace,
    )


async def icon(request: web.Request) -> web.Response:
    session = session_of(request)
    gateway = console_of(request).gateway(session)
    try:
        content_type, data = await call(
            read.icon, gateway, session.namespace, request.match_info["name"]
        )
    except NotFound:
        raise web.HTTPNotFound() from None
    if not content_type.startswith("image/"):
        content_type = "application/octet-stream"
    # A catalog's SVG opened as a page of its own must not run: sandboxed, no script at all.
    policy = "default-src 'none'; style-src 'unsafe-inline'; sandbox"
    return web.Response(
        body=data, content_type=content_type.split(";")[0], headers={"X-Icon-Policy": policy}
    )


async def install_post(request: web.Request) -> web.Response:
    console, session = console_of(request), session_of(request)
    gateway = console.gateway(session)
    form = install.InstallForm.from_post({k: str(v) for k, v in (await request.post()).items()})
    manifest = await call(
        read.package_manifest,
        gateway,
        session.namespace,
        form.catalog_namespace,
        form.catalog,
        form.package,
    )
    if manifest is None:
        return respond(
            request,
            "error.html",
            404,
            title="No such package",
            error=f"No package {form.package} in catalog {form.catalog_namespace}/{form.catalog}.",
        )
    card = catalog.card(manifest)
    groups = await call(read.listed, gateway, Kind.OPERATOR_GROUP, form.target)
    subs = await call(read.listed, gateway, Kind.SUBSCRIPTION, form.target)
    decision = install.decide(form, card, groups, subs)
    if decision.problems:
        can = await call(
            read.allowed,
            gateway,
            session,
            "create",
            "operators.coreos.com",
            "subscriptions",
            session.namespace,
        )
        return respond(
            request,
            "package.html",
            400,
            card=card,
            selected=form.channel,
            can_install=can,
            namespace=session.namespace,
            error=" ".join(decision.problems),
        )
    await call(read.create_all, gateway, decision.creates)
    raise web.HTTPSeeOther(f"/operators?namespace={decision.namespace}")


# ----- installed operators ------------------------------------------------------------------


async def operators_page(request: web.Request) -> web.Response:
    console, session = console_of(request), session_of(request)
    gateway = console.gateway(session)
    namespace = request.query.get("namespace", "").strip()
    notes: list[str] = []
    try:
        csvs = await call(read.listed, gateway, Kind.CLUSTER_SERVICE_VERSION, namespace)
        subs = await call(read.listed, gateway, Kind.SUBSCRIPTION, namespace)
        plans = await call(read.listed, gateway, Kind.INSTALL_PLAN, namespace)
    except GatewayError as exc:
        if exc.status != 403:
            raise
        where = f"namespace {namespace}" if namespace else "all namespaces"
        notes.append(f"You may not list operators in {where}: {exc}")
        csvs, subs, plans = [], [], []
    waiting = [p for p in operators.plans(plans) if p.waiting]
    return respond(
        request,
        "operators.html",
        rows=operators.installed(csvs, subs),
        plans=waiting,
        namespace=namespace,
        notes=notes,
    )


async def operator_page(request: web.Request) -> web.Response:
    console, session = console_of(request), session_of(request)
    gateway = console.gateway(session)
    namespace, name = request.match_info["namespace"], request.match_info["name"]
    csv = await call(read.get, gateway, Kind.CLUSTER_SERVICE_VERSION, namespace, name)
    subs = await call(read.listed, gateway, Kind.SUBSCRIPTION, namespace)
    plans = await call(read.listed, gateway, Kind.INSTALL_PLAN, namespace)
    rows = operators.installed([csv], subs)
    if not rows:
        raise web.HTTPSeeOther(
            f"/operators/{csv['metadata']['annotations'].get('olm.operatorNamespace', namespace)}/{name}"
        )
    try:
        events = operators.events_about(
            await call(read.events, gateway, namespace), "ClusterServiceVersion", name
        )
    except GatewayError:
        events = []
    row = rows[0]
    explanation = [] if row.succeeded else await call(read.explanation, gateway, namespace, name)
    found: list[tuple[operands.OwnedApi, list[tuple[dict[str, Any], list[str]]]]] = []
    can_create: dict[str, bool] = {}
    for api in operands.owned_apis(csv):
        try:
            items = await call(read.operands, gateway, api.api_version, api.plural, namespace)
        except GatewayError:
            items = []
        found.append(
            (api, [(i, [operands.field_at(i, p) for p, _ in api.status_fields]) for i in items])
        )
        can_create[api.kind] = await call(
            read.allowed, gateway, session, "create", api.group, api.plural, namespace
        )
    can_uninstall = await call(
        read.allowed, gateway, session, "delete", "operators.coreos.com", "subscriptions", namespace
    )
    waiting = [p for p in operators.plans(plans) if p.waiting]
    return respond(
        request,
        "operator.html",
        row=row,
        explanation=explanation,
        operands=found,
        can_create=can_create,
        can_uninstall=can_uninstall,
        events=events,
        plans=waiting,
    )


# ----- InstallPlans -------------------------------------------------------------------------


async def plan_page(request: web.Request) -> web.Response:
    console, session = console_of(request), session_of(request)
    gateway = console.gateway(session)
    namespace, name = request.match_info["namespace"], request.match_info["name"]
    try:
        result, plan = await call(read.plan_preview, gateway, namespace, name)
    except PlanShowError as exc:
        return respond(request, "error.html", 404, title="No such InstallPlan", error=str(exc))
    steps = [
        (
            str((s.get("resource") or {}).get("kind") or ""),
            str((s.get("resource") or {}).get("name") or ""),
            str(s.get("status") or ""),
        )
        for s in (plan.get("status") or {}).get("plan") or []
        if isinstance(s, dict)
    ]
    waiting = operators.plans([plan])[0].waiting
    can_approve = waiting and await call(
        read.allowed, gateway, session, "patch", "operators.coreos.com", "installplans", namespace
    )
    return respond(
        request,
        "plan.html",
        namespace=namespace,
        name=name,
        preview=result,
        flags=[FLAG_WORDS[f] for f in result.flags],
        lines=preview_lines(result),
        steps=steps,
        waiting=waiting,
        can_approve=can_approve,
    )


async def approve_post(request: web.Request) -> web.Response:
    console, session = console_of(request), session_of(request)
    namespace, name = request.match_info["namespace"], request.match_info["name"]
    await call(read.approve, console.gateway(session), namespace, name)
    raise web.HTTPSeeOther(f"/operators?namespace={namespace}")


# ----- operands -----------------------------------------------------------------------------


async def _owned(request: web.Request) -> tuple[Any, dict[str, Any], operands.OwnedApi, str, str]:
    console, session = console_of(request), session_of(request)
    gateway = console.gateway(session)
    namespace, name, kind = (request.match_info[k] for k in ("namespace", "name", "kind"))
    csv = await call(read.get, gateway, Kind.CLUSTER_SERVICE_VERSION, namespace, name)
    api = next((a for a in operands.owned_apis(csv) if a.kind == kind), None)
    if api is None:
        raise web.HTTPNotFound(text=f"{name} owns no API of kind {kind}")
    return gateway, csv, api, namespace, name


async def operand_form(request: web.Request) -> web.Response:
    gateway, csv, api, namespace, name = await _owned(request)
    definition = await call(read.crd, gateway, api.crd)
    start = operands.starting_object(api, csv, definition, namespace)
    return respond(
        request,
        "operand_new.html",
        api=api,
        csv=name,
        namespace=namespace,
        text=operands.as_yaml(start),
        fields=operands.form_fields(api, definition, start),
        shown={},
        from_example=bool(operands.examples(csv)),
    )


async def operand_post(request: web.Request) -> web.Response:
    gateway, csv, api, namespace, name = await _owned(request)
    form = {k: str(v) for k, v in (await request.post()).items()}
    text = form.get("yaml", "")
    definition = await call(read.crd, gateway, api.crd)
    fields = operands.form_fields(api, definition, {})
    submitted = {k.removeprefix("field:"): v for k, v in form.items() if k.startswith("field:")}
    shown = {k.removeprefix("shown:"): v for k, v in form.items() if k.startswith("shown:")}
    obj, problem = operands.parse_operand(text, operands.owned_apis(csv), namespace)
    if obj is not None:
        problem = operands.apply_fields(obj, fields, submitted, shown)
    if obj is not None and not problem:
        try:
            await call(read.create_all, gateway, [obj])
        except GatewayError as exc:
            problem = refusal(exc)
        else:
            raise web.HTTPSeeOther(f"/operators/{namespace}/{name}")
    again = [replace(f, value=submitted.get(f.path, f.value)) for f in fields]
    return respond(
        request,
        "operand_new.html",
        400,
        api=api,
        csv=name,
        namespace=namespace,
        text=text,
        fields=again,
        shown=shown,
        from_example=False,
        error=problem,
    )


# ----- uninstall ----------------------------------------------------------------------------


async def uninstall_page(request: web.Request) -> web.Response:
    console, session = console_of(request), session_of(request)
    namespace, package = request.match_info["namespace"], request.match_info["package"]
    found, lines = await call(read.uninstall_preview, console.gateway(session), package, namespace)
    return respond(
        request,
        "uninstall.html",
        namespace=namespace,
        package=package,
        report=operators.uninstall_view(lines),
        found=found,
        done=False,
    )


async def uninstall_post(request: web.Request) -> web.Response:
    console, session = console_of(request), session_of(request)
    namespace, package = request.match_info["namespace"], request.match_info["package"]
    try:
        lines = await call(read.run_uninstall, console.gateway(session), package, namespace)
    except UninstallError as exc:
        return respond(
            request,
            "uninstall.html",
            502,
            namespace=namespace,
            package=package,
            report=operators.uninstall_view([]),
            found=True,
            done=False,
            error=str(exc),
        )
    return respond(
        request,
        "uninstall.html",
        namespace=namespace,
        package=package,
        report=operators.uninstall_view(lines),
        found=False,
        done=True,
    )
