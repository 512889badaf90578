"""The web console (docs/console.md), used in a real headless browser as a person would.

1. An administrator signs in with their token, finds the memcached operator in the catalog,
   installs 0.0.1 with Manual approval, reads the plan (RBAC it grants, marked), approves it,
   sees the CSV Succeeded, creates a Memcached from the form, approves the 0.0.2 upgrade
   from the page, and the Memcached is untouched (same UID).
2. A user allowed only to read namespace `a` sees nothing of namespace `b`'s operators and
   is offered no install; an install forced past the page is refused by Kubernetes as them;
   a POST with a forged or missing CSRF token is refused before anything happens.
3. A catalog whose description carries a <script> tag: the page shows it as text, and it
   never runs.

One console, one browser, one cluster for the module.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from olm.catalog.model import Bundle
from olm.catalog.registryv1 import bundle_properties
from olm.catalog.render import to_yaml
from olm.catalog.samples import build
from tests.support.catalog_server import Server, catalog_source
from tests.support.cluster import STEP_TIMEOUT, ControlPlane, fresh_namespace, wait_for
from tests.support.console import (
    ConsoleServer,
    bind,
    browser,
    reload_until,
    screenshot,
    service_account_token,
    sign_in,
)
from tests.support.olm_run import OlmOperator
from tests.support.stories import apply, minimal_csv, operator_group

pytestmark = pytest.mark.e2e

OLD, NEW = "memcached-operator.v0.0.1", "memcached-operator.v0.0.2"
SCRIPT = "<script>window.pwned = true</script>"


@pytest.fixture(scope="module")
def console(
    control_plane: ControlPlane,
    olm_operator: OlmOperator,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[ConsoleServer]:
    server = ConsoleServer(control_plane, tmp_path_factory.mktemp("console") / "console.log")
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    with browser() as launched:
        yield launched


@pytest.fixture
def page(chromium: Browser) -> Iterator[Page]:
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    yield opened
    context.close()


def admin_token(plane: ControlPlane, namespace: str) -> str:
    bind(plane, namespace, "admin", None)
    return service_account_token(plane, namespace, "admin")


def test_install_approve_create_and_upgrade_from_the_console(
    control_plane: ControlPlane,
    pod_network: None,
    console: ConsoleServer,
    page: Page,
    namespace: str,
) -> None:
    plane, url = control_plane, console.url
    sign_in(page, url, admin_token(plane, namespace), namespace)

    # Browse: search the catalog, open the package.
    page.fill("input[name=q]", "memcached")
    page.keyboard.press("Enter")
    card = page.locator("a[data-package=memcached-operator]")
    card.wait_for()
    screenshot(page, "catalog")
    card.click()
    assert page.locator("table.channels").inner_text().count("0.0.1") >= 1
    screenshot(page, "package")

    # Install 0.0.1 into this namespace, updates approved by hand.
    page.select_option("select[name=channel]", "alpha")
    page.select_option("select[name=starting_csv]", OLD)
    page.check("input[name=scope][value=namespace]")
    page.fill("input[name=namespace]", namespace)
    page.check("input[name=approval][value=Manual]")
    page.click("#install")
    page.wait_for_url(f"{url}/operators?namespace={namespace}")
    group = plane.get_json("operatorgroup", "-n", namespace)["items"]
    assert [g["spec"].get("targetNamespaces") for g in group] == [[namespace]]

    # The plan waits for approval: read it, then approve it.
    reload_until(page, "a[data-plan]", "the 0.0.1 plan waiting for approval")
    page.click("a[data-plan]")
    preview = page.locator("pre.preview").inner_text()
    assert f"{OLD}: a fresh install" in preview
    assert "widens RBAC" in page.locator(".flagged").inner_text()
    screenshot(page, "plan")
    page.click("#approve")
    reload_until(page, f"tr[data-csv='{OLD}'] .phase", f"{OLD} Succeeded", text="Succeeded")
    screenshot(page, "installed")

    # Create a Memcached from the form the operator's API prefills: its name in the YAML, its
    # size in the field generated from the CRD's schema.
    page.click(f"tr[data-csv='{OLD}'] a")
    page.click("a[data-create=Memcached]")
    text = page.locator("#yaml").input_value()
    assert "kind: Memcached" in text and "size: 0" in text
    page.fill("#yaml", text.replace("name: example-memcached", "name: cache"))
    page.fill("input[data-field=size]", "1")
    screenshot(page, "operand-form")
    page.click("#create")
    operand = page.locator("tr[data-operand=cache]")
    operand.wait_for()
    uid = operand.get_attribute("data-uid")
    created = plane.get_json("memcached", "cache", "-n", namespace)
    assert created["metadata"]["uid"] == uid and created["spec"] == {"size": 1}
    screenshot(page, "operator")

    # The upgrade to 0.0.2 waits for approval too: approve it from the page.
    reload_until(page, "a[data-plan]", "the 0.0.2 plan waiting for approval")
    page.click("a[data-plan]")
    preview = page.locator("pre.preview").inner_text()
    assert f"{NEW}: replaces {OLD}" in preview
    assert "memcached-operator:0.0.1 -> olm-py.local/memcached-operator:0.0.2" in preview
    page.click("#approve")
    reload_until(page, f"tr[data-csv='{NEW}'] .phase", f"{NEW} Succeeded", text="Succeeded")

    # The operand is the same object: same UID, shown on the new version's page.
    page.click(f"tr[data-csv='{NEW}'] a")
    assert page.locator("tr[data-operand=cache]").get_attribute("data-uid") == uid
    assert plane.get_json("memcached", "cache", "-n", namespace)["metadata"]["uid"] == uid

    # Uninstall says what goes and what stays (the CRD, and so the Memcached), then does it.
    page.goto(f"{url}/uninstall/{namespace}/memcached-operator")
    assert f"ClusterServiceVersion {namespace}/{NEW}" in page.locator("pre.goes").inner_text()
    assert (
        "CustomResourceDefinition memcacheds.cache.example.com"
        in page.locator("pre.stays").inner_text()
    )
    screenshot(page, "uninstall")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#uninstall")
    page.locator("text=Back to installed operators").wait_for()
    assert plane.get_json("subscription.operators.coreos.com", "-n", namespace)["items"] == []
    assert plane.get_json("memcached", "cache", "-n", namespace)["metadata"]["uid"] == uid


READER_RULES = {
    "rules": [
        {
            "apiGroups": ["operators.coreos.com"],
            "resources": ["*"],
            "verbs": ["get", "list", "watch"],
        },
        {
            "apiGroups": ["packages.operators.coreos.com"],
            "resources": ["*"],
            "verbs": ["get", "list", "watch"],
        },
        {"apiGroups": [""], "resources": ["events"], "verbs": ["get", "list", "watch"]},
    ]
}


def test_a_reader_of_one_namespace_sees_and_installs_nothing_else(
    control_plane: ControlPlane,
    pod_network: None,
    console: ConsoleServer,
    page: Page,
    namespace: str,
) -> None:
    plane, url, a = control_plane, console.url, namespace
    b_namespaces = fresh_namespace(plane)
    b = next(b_namespaces)
    try:
        operator_group(plane, b)
        apply(plane, b, minimal_csv("secret-operator.v1.0.0"))
        bind(plane, a, "reader", READER_RULES)
        sign_in(page, url, service_account_token(plane, a, "reader"), a)

        # The catalog is readable from `a`; installing is not offered.
        page.locator("a[data-package=memcached-operator]").click()
        assert page.locator("#install").count() == 0
        assert "You may not create Subscriptions in" in page.locator("aside").inner_text()

        # Namespace b's operators are not shown, nor are all namespaces'.
        for where in (f"?namespace={b}", ""):
            page.goto(f"{url}/operators{where}")
            assert "You may not list operators" in page.locator(".note").inner_text()
            assert page.locator("tr[data-csv]").count() == 0
        assert plane.get_json("csv", "secret-operator.v1.0.0", "-n", b)

        # An install forced past the page (a valid CSRF token) is refused by Kubernetes.
        csrf = page.locator("form.logout input[name=csrf]").input_value()
        form = {
            "package": "memcached-operator",
            "catalog": "samples",
            "catalog_namespace": "olm",
            "channel": "alpha",
            "scope": "namespace",
            "namespace": a,
            "approval": "Automatic",
        }
        forced = page.request.post(f"{url}/install", form={**form, "csrf": csrf})
        assert forced.status == 403 and "Kubernetes refused this as you" in forced.text()
        assert plane.get_json("subscription.operators.coreos.com", "-n", a)["items"] == []

        # A forged or missing CSRF token is refused before anything is read or written.
        forged = page.request.post(f"{url}/install", form={**form, "csrf": "forged"})
        missing = page.request.post(f"{url}/install", form=form)
        for response in (forged, missing):
            assert response.status == 403 and "CSRF" in response.text()
    finally:
        for _ in b_namespaces:
            pass


def write_scripted_catalog(directory: Path) -> None:
    """The samples catalog whose memcached-operator 0.0.2 describes itself with HTML."""
    catalog = build()
    package = catalog.packages["memcached-operator"]
    objects = copy.deepcopy(package.bundles[NEW].objects)
    csv = next(o for o in objects if o["kind"] == "ClusterServiceVersion")
    csv["spec"]["description"] = (
        f'**Fast** caches.\n\n{SCRIPT}\n\n<img src=x onerror="window.pwned = true">\n\n'
        "[docs](javascript:window.pwned=true)"
    )
    package.bundles[NEW] = Bundle(
        NEW, package.name, properties=bundle_properties(package.name, csv, objects, [])
    )
    (directory / "catalog.yaml").write_text(to_yaml(catalog))


def test_catalog_html_is_shown_as_text_and_never_runs(
    control_plane: ControlPlane,
    pod_network: None,
    console: ConsoleServer,
    page: Page,
    namespace: str,
    tmp_path: Path,
) -> None:
    plane, url = control_plane, console.url
    write_scripted_catalog(tmp_path)
    server = Server(tmp_path)
    server.start()
    try:
        catalog_source(plane, namespace, server.port)
        sign_in(page, url, admin_token(plane, namespace), namespace)

        def listed() -> bool:
            page.goto(f"{url}/catalog?catalog=updating")
            return page.locator("a[data-package=memcached-operator]").count() > 0

        wait_for(listed, timeout=STEP_TIMEOUT, what="the scripted catalog's package")
        page.goto(f"{url}/packages/{namespace}/updating/memcached-operator")
        description = page.locator("section.description")
        assert "<strong>Fast</strong>" in description.inner_html()
        assert SCRIPT in description.inner_text()  # shown as text
        assert description.locator("script, img, a[href^=javascript]").count() == 0
        assert page.evaluate("window.pwned") is None
        assert page.evaluate("document.scripts.length") == 1
    finally:
        server.stop()
