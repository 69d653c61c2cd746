"""The production stack as its users meet it: every process started by the entrypoint (`scripts/serve`) with
DEBUG off, gunicorn serving the pages, a Celery worker and beat on a Redis of the test's own, the test
database (SQLite or PostgreSQL), and an OpenAI-compatible LLM server (the scripted fake) configured by the
environment. A headless Chromium signs up, chats, watches the worker's consolidation reach the page and
loads the admin and the API docs; every process then gets SIGTERM, and after a restart nothing stored is
missing and the memory still answers."""

import re
import threading
from concurrent.futures import ThreadPoolExecutor

import httpx2
import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import connection

from bench.fake_llm_server import held, reply
from memory_engine.models import ConsolidationRun, MemorySpace, Page
from memory_engine.services.conversation import turn_add
from memory_engine.services.spaces import assistant_create, space_get, space_parameters_set, user_create
from memory_engine.services.tokens import token_create
from tests.forwarding_proxy import ForwardingProxy
from tests.memory_helpers import extraction
from tests.processes import client_at, free_port, healthy, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "pw-sam-4815162342"


@pytest.fixture
def llm_env(fake_llm) -> dict:
    """The stack's LLM: the fake server, as an operator would configure a hosted endpoint."""

    def answer(request):
        if "response_format" in request:  # the worker's extraction from a promoted session
            return extraction(profile=[("occupation", "nurse", 1)])
        said = request["messages"][-1]["content"]
        answers = {"nurse": "Nice to meet you, Sam.", "hospital": "Have a good shift!", "job": "You work as a nurse."}
        return reply(next(answer for word, answer in answers.items() if word in said))

    fake_llm.responder = answer
    return {
        "MEMORYOS_LLM_PROVIDER": "openai",
        "MEMORYOS_LLM_BASE_URL": fake_llm.base_url,
        "MEMORYOS_LLM_MODEL": "fake-model",
        "MEMORYOS_LLM_API_KEY": "test-key",
        # One environment for every role, as an operator may share it: the worker must not warm up in a
        # thread before it forks its pool (its first consolidation hung, seen in bench_tenants).
        "MEMORYOS_WARM_UP": "true",
    }


def wait_serving(web, base: str) -> None:
    wait_until(lambda: healthy(f"{base}/healthz") or not web.running(), timeout=300, what="the web server")
    assert web.running(), web.output()[-3000:]


def migrated_web(start, **env: str) -> tuple[object, str]:
    """Migrate, then a web server on a free loopback port with `env`; the role and its URL, once healthy."""
    assert start("migrate").process.wait(300) == 0
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    web = start("web", BIND=f"127.0.0.1:{port}", **env)
    wait_serving(web, base)
    return web, base


def wait_ready(worker) -> None:
    """Until the worker takes tasks, its embedding model loaded (a minute or more on a busy machine)."""
    wait_until(lambda: " ready." in worker.output() or not worker.running(), timeout=600, what="the worker")
    assert worker.running(), worker.output()[-3000:]


def start_stack(start, llm_env: dict) -> tuple[str, list]:
    """web, worker and beat, as compose starts them once migrate has finished; the site's URL and the roles,
    once the site is healthy and the worker takes tasks."""
    port = free_port()
    web = start("web", BIND=f"127.0.0.1:{port}", **llm_env)
    worker = start("worker", WORKER_NAME=f"prod-{port}", **llm_env)
    beat = start("beat", **llm_env)
    base = f"http://127.0.0.1:{port}"
    wait_serving(web, base)
    wait_ready(worker)
    assert beat.running(), beat.output()[-3000:]
    return base, [web, worker, beat]


class Loads:
    """Every response and failed request of a browser page, to check what each page links."""

    def __init__(self, page) -> None:
        self.responses: list[tuple[str, int, str]] = []
        self.failed: list[tuple[str, str, str, str]] = []  # url, method, resource type, failure
        self.refused: list[str] = []  # what the Content-Security-Policy kept from running or loading
        page.on("response", lambda r: self.responses.append((r.url, r.status, r.request.resource_type)))
        page.on("console", lambda m: self.refused.append(m.text) if "Content Security Policy" in m.text else None)
        page.on("requestfailed", lambda r: self.failed.append((r.url, r.method, r.resource_type, r.failure or "")))

    def assets(self) -> dict[str, int]:
        """Each stylesheet, script, image and font the pages loaded, with the status of its first load."""
        first: dict[str, int] = {}
        for url, status, kind in self.responses:
            if kind in ("stylesheet", "script", "image", "font"):
                first.setdefault(url, status)
        return first

    def errors(self) -> list[str]:
        """Error responses, and failed requests but two kinds, by design: the memory feed's (its stream is
        cut when the page leaves or the server restarts, and fails to reconnect while the server is down),
        and a read the page's script had in flight when the page left for another (the browser aborts it:
        seen once, the chat page refreshing its space as the worker announced a change, at the click to
        the lab)."""
        failed = [
            f"{url} {failure}"
            for url, method, kind, failure in self.failed
            if "/events/" not in url and not (method == "GET" and kind in ("fetch", "xhr") and "ERR_ABORTED" in failure)
        ]
        return [f"{url} {status}" for url, status, _ in self.responses if status >= 400] + failed + self.refused


def styled(page) -> bool:
    """The page has stylesheets and each of them loaded its rules."""
    return page.evaluate(
        """() => document.styleSheets.length > 0 && Array.from(document.styleSheets).every((sheet) => {
            try { return sheet.cssRules.length > 0; } catch (error) { return false; }  // not loaded as CSS
        })"""
    )


def stored_rows() -> dict[str, int]:
    models = [*apps.get_app_config("memory_engine").get_models(), get_user_model()]
    return {model.__name__: model.objects.count() for model in models}


def counts_in_page(page) -> dict[str, str]:
    names = page.locator("#counts dt").all_inner_texts()
    return dict(zip(names, page.locator("#counts dd").all_inner_texts(), strict=True))


def test_sign_up_chat_consolidate_and_restart_with_nothing_lost(start, llm_env, browser, screenshots):
    migrate = start("migrate")
    assert migrate.process.wait(300) == 0, migrate.output()
    base, roles = start_stack(start, llm_env)
    loads = Loads(browser)

    # A visitor signs up and starts a memory space of their own.
    browser.goto(f"{base}/accounts/signup/")
    assert styled(browser)
    browser.fill("#id_username", "sam")
    browser.fill("#id_password1", PASSWORD)
    browser.fill("#id_password2", PASSWORD)
    browser.click("button[type=submit]")
    browser.wait_for_url(f"{base}/")
    # the start every id of theirs has ("sam:") on the field's line, before it, not above it
    prefix, field = (
        browser.locator(".prefixed .muted").bounding_box(),
        browser.locator("input[name=user_id]").bounding_box(),
    )
    assert (
        prefix["x"] + prefix["width"] <= field["x"]
        and field["y"] <= prefix["y"] + prefix["height"] / 2 <= field["y"] + field["height"]
    )
    browser.fill("input[name=user_id]", "me")
    browser.fill("input[name=display_name]", "Sam")
    browser.click("form[action='/spaces/new/'] button[type=submit]")
    browser.wait_for_url(re.compile(r".*/chat/sam:me/helper/$"))
    assert styled(browser)

    # Small tiers, so that the second turn pushes the first to mid-term and the session is promoted.
    browser.wait_for_function("document.querySelector('input[name=stm_capacity]').value === '7'")  # page ready
    browser.click("#parameters-panel summary")
    browser.fill("input[name=stm_capacity]", "1")
    browser.fill("input[name=heat_threshold]", "0.1")
    browser.click("#parameters button[type=submit]")
    browser.wait_for_selector("#parameters-status >> text=saved")
    # What was stored is what was typed, whatever the memory panel redrew meanwhile (a feed event between
    # the two fields must not put the stored 7 back).
    saved = MemorySpace.objects.get(user__external_id="sam:me", assistant__external_id="helper")
    assert (saved.stm_capacity, saved.heat_threshold) == (1, 0.1)
    for number, said in enumerate(("Hi, I'm Sam and I work as a nurse.", "I'm off to the hospital now."), start=1):
        browser.fill("#query", said)
        browser.click("#send")
        browser.wait_for_function(
            f"document.querySelectorAll('.bubble.assistant:not(.pending)').length === {number}", timeout=120_000
        )
    replies = browser.locator(".bubble.assistant .text").all_inner_texts()
    assert replies == ["Nice to meet you, Sam.", "Have a good shift!"]

    # The worker moves the first turn to mid-term, promotes the session and extracts the profile; the page's
    # memory feed (server-sent events from the web process, woken by the worker's announcements through
    # Redis) brings the result, unasked.
    browser.locator("#feed.live").wait_for()
    browser.wait_for_selector("#profile dd .value >> text=nurse", timeout=600_000)
    browser.wait_for_function("document.querySelector('#consolidation').textContent === 'idle'", timeout=600_000)
    assert counts_in_page(browser)["mid-term"] == "1"
    browser.screenshot(path=str(screenshots / "production-chat.png"), full_page=True)

    # The admin (another person, in a browser of their own), styled, shows the entry the worker made; the
    # API docs draw the schema.
    get_user_model().objects.create_superuser("ops", password=PASSWORD)
    admin = browser.context.browser.new_context().new_page()
    admin_loads = Loads(admin)
    admin.goto(f"{base}/admin/login/?next=/admin/memory_engine/longtermentry/")
    assert styled(admin)
    admin.fill("#id_username", "ops")
    admin.fill("#id_password", PASSWORD)
    admin.click("input[type=submit]")
    admin.wait_for_selector("#result_list >> text=nurse")
    header = admin.evaluate("getComputedStyle(document.querySelector('#header')).backgroundColor")
    assert header not in ("rgba(0, 0, 0, 0)", "transparent"), header
    docs = admin.goto(f"{base}/api/docs/")
    admin.wait_for_selector(".swagger-ui .info .title >> text=MemoryOS Playground API")
    assert styled(admin)
    assert "script-src 'self'" in docs.headers["content-security-policy"]  # and nothing it refused: errors()

    # The pages as a browser enforcing their Content-Security-Policy sees them (the test's own page
    # bypasses it, to evaluate its waits): nothing refused on the chat page, the admin or the API docs.
    strict = browser.context.browser.new_context()
    strict.add_cookies(browser.context.cookies())
    enforced = strict.new_page()
    enforced_loads = Loads(enforced)
    enforced.goto(f"{base}/chat/sam:me/helper/")
    enforced.wait_for_selector("#profile dd .value >> text=nurse")
    enforced.wait_for_selector(".bubble.assistant .text >> text=Have a good shift!")
    assert enforced_loads.refused == [] and admin_loads.refused == []
    strict.close()

    assets = loads.assets() | admin_loads.assets()
    assert any(url.endswith("/static/js/chat/main.js") for url in assets)
    assert any("/static/admin/css/" in url for url in assets)
    assert any("swagger-ui" in url for url in assets)
    assert all(status == 200 for status in assets.values()), assets
    assert loads.errors() + admin_loads.errors() == []
    assert admin.evaluate("fetch('/favicon.ico').then(r => [r.status, r.headers.get('content-type')])") == [
        200,
        "image/svg+xml",
    ]

    # Every process stops on SIGTERM within its grace period; then the stack starts again on the same data.
    for role in roles:
        assert role.stop() in (0, -15), role.output()[-3000:]
    before = stored_rows()
    assert before["Page"] == 2 and before["LongTermEntry"] == 1, before
    base, roles = start_stack(start, llm_env)
    assert stored_rows() == before

    browser.goto(f"{base}/chat/sam:me/helper/")  # the session survived the restart: no sign-in
    browser.wait_for_selector("#profile dd .value >> text=nurse")
    assert browser.locator(".bubble.user").count() == 2
    browser.fill("#query", "What is my job?")
    browser.click("#send")
    browser.wait_for_selector(".bubble.assistant:not(.pending) >> text=You work as a nurse.")
    used = browser.locator(".bubble.assistant details.used").last
    used.locator("summary").click()
    assert "nurse" in used.inner_text()  # the restarted web process retrieved the worker's entry

    # The memory lab, as served in production: the inspector, the heat chart drawn by the vendored uPlot,
    # and an experiment replayed by the worker and compared.
    used.locator("button.inspect-link").click()
    browser.wait_for_selector("#inspection tr.inspected.in")
    browser.click("#heat-panel summary")
    browser.wait_for_selector("#heat-chart .uplot canvas")
    browser.click("#lab-link")
    # The form is on the page before its script has run: wait for the page's load, when it has.
    browser.wait_for_url("**/lab/**")
    browser.wait_for_load_state("load")
    browser.fill("#fork input[name=name]", "bigger short-term")
    browser.fill("#fork input[name=stm_capacity]", "5")
    browser.click("#fork button[type=submit]")
    browser.click("#experiments a.experiment-name >> text=bigger short-term")
    browser.wait_for_selector("#replay-status >> text=succeeded", timeout=600_000)
    browser.fill("#probe textarea[name=questions]", "What is my job?")
    browser.click("#probe button[type=submit]")
    browser.wait_for_selector("#probes > li.probe-result")
    assert "stm_capacity" in browser.locator("#changed").inner_text()
    assert any(url.endswith("uPlot.iife.min.js") for url in loads.assets())
    assert all(status == 200 for status in loads.assets().values()), loads.assets()
    assert loads.errors() == []
    for role in roles:
        assert role.stop() in (0, -15), role.output()[-3000:]


def test_two_web_processes_and_two_workers_share_one_database(start, llm_env, tmp_path):
    """Each process with its own index folder, as separate containers have: a turn stored through one web
    process is found through the other on the very next request, before and after the workers move it to
    mid-term; an entry deleted through one is never returned by the other."""
    user = user_create(user_id="demo")
    assistant_create(assistant_id="helper")
    space = space_get(user_id="demo", assistant_id="helper")
    space_parameters_set(space, {"stm_capacity": 2, "heat_threshold": 1000.0})
    _, secret = token_create(memory_user=user, name="two processes")
    assert start("migrate").process.wait(300) == 0
    webs = []
    for name in ("a", "b"):
        port = free_port()
        role = start("web", BIND=f"127.0.0.1:{port}", MEMORYOS_INDEX_DIR=str(tmp_path / f"web-{name}"), **llm_env)
        base = f"http://127.0.0.1:{port}"
        client = httpx2.Client(
            base_url=f"{base}/api/v1/users/demo/spaces/helper/",
            headers={"Authorization": f"Bearer {secret}"},
            timeout=120,
        )
        webs.append((role, base, client))
    workers = [
        start("worker", WORKER_NAME=name, MEMORYOS_INDEX_DIR=str(tmp_path / name), **llm_env) for name in ("w1", "w2")
    ]
    for role, base, _ in webs:
        wait_serving(role, base)
    for worker in workers:
        wait_ready(worker)

    def found(client, query: str) -> list[str]:
        answer = client.post("retrieve/", json={"query": query, "count_hits": False})
        assert answer.status_code == 200, answer.text
        data = answer.json()
        return [item["text"] for tier in ("short_term", "pages", "user_knowledge") for item in data[tier]]

    topics = ["sailing", "violin", "orchids", "marathons", "pottery", "chess"]
    for number, topic in enumerate(topics):
        writer, reader = webs[number % 2][2], webs[(number + 1) % 2][2]
        said = f"My new hobby is {topic}."
        assert writer.post("turns/", json={"user_input": said, "agent_response": "How nice!"}).status_code == 201
        assert any(said in text for text in found(reader, f"hobby {topic}")), (topic, number)

    # The workers move the older turns to mid-term (and index them there); both web processes still find
    # every turn, each from its own index folder.
    a, b = (client for _, _, client in webs)
    wait_until(
        lambda: not a.get("").json()["counts"]["consolidation_pending"], timeout=600, what="the workers' consolidation"
    )
    assert a.get("").json()["counts"]["mid_term_pages"] == len(topics) - 2
    for topic in topics:
        for client in (a, b):
            assert any(f"hobby is {topic}" in text for text in found(client, f"hobby {topic}")), topic

    fact = a.post("knowledge/", json={"value": "The user keeps a parrot named Kiwi"})
    assert fact.status_code == 201, fact.text
    assert any("Kiwi" in text for text in found(b, "parrot Kiwi"))
    assert a.delete(f"knowledge/{fact.json()['id']}/").status_code == 200
    assert not any("Kiwi" in text for text in found(b, "parrot Kiwi"))
    assert not any("Kiwi" in text for text in found(a, "parrot Kiwi"))


def sessions_begun() -> int:
    """How many sessions PostgreSQL has begun on the test database so far (pg_stat_database)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL counts the sessions begun on it")
def test_the_worker_keeps_its_database_connection_from_one_task_to_the_next(start, settings):
    """A production worker (prefork) runs each consolidation on the connection its pool already holds:
    Celery's Django fix-up used to close the pool around every task, so each one began a new PostgreSQL
    session (a backend forked, its catalogue cache cold)."""
    settings.MEMORYOS = {**settings.MEMORYOS, "CONSOLIDATION": "celery"}
    user_create(user_id="demo")
    assistant_create(assistant_id="helper")
    space = space_get(user_id="demo", assistant_id="helper")
    space_parameters_set(space, {"stm_capacity": 1, "heat_threshold": 1000.0})
    worker = start("worker", WORKER_NAME="connections")
    wait_ready(worker)

    def store_and_consolidate(number: int) -> None:
        turn_add(space=space, user_input=f"Turn {number} is about kites.", agent_response="Nice.")
        wait_until(
            lambda: ConsolidationRun.objects.filter(status="succeeded").count() == number - 1 or not worker.running(),
            timeout=600,
            what=f"the worker's consolidation of turn {number - 1}",
        )
        assert worker.running(), worker.output()[-3000:]

    store_and_consolidate(1)
    store_and_consolidate(2)  # the worker's connection is open from here on
    before = sessions_begun()
    for number in range(3, 9):
        store_and_consolidate(number)
    begun = sessions_begun() - before
    assert Page.objects.filter(space=space, tier="mid").count() == 7
    # At most the worker's own session, should its start not have reached the statistics before.
    assert begun <= 1, f"{begun} sessions begun for 6 tasks"


def test_a_web_process_works_on_its_limit_of_requests_and_a_reply_awaited_from_the_llm_holds_no_place(
    start, llm_env, fake_llm
):
    """WEB_REQUESTS_AT_ONCE=1: requests sent at once are worked on one at a time, the others waiting their
    turn; a chat waiting on the LLM gives its place up meanwhile, so turns and retrievals go on."""
    gate = threading.Event()
    fake_llm.responder = lambda request: held(gate, reply("Hello, Sam."))
    user = user_create(user_id="demo")
    assistant_create(assistant_id="helper")
    _, secret = token_create(memory_user=user, name="admission")
    get_user_model().objects.create_user("ops", password=PASSWORD, is_staff=True)
    # A request that waited this long for a place would fail the test: none should wait that long here.
    web, base = migrated_web(start, WEB_REQUESTS_AT_ONCE="1", WEB_QUEUE_TIMEOUT_SECONDS="60", **llm_env)
    api = httpx2.Client(
        base_url=f"{base}/api/v1/users/demo/spaces/helper/", headers={"Authorization": f"Bearer {secret}"}, timeout=300
    )

    with ThreadPoolExecutor(max_workers=8) as pool:
        chat = pool.submit(api.post, "chat/", json={"query": "Hello, I am Sam."})
        wait_until(lambda: len(fake_llm.requests) == 1 or chat.done(), timeout=300, what="the chat to reach the LLM")
        # The chat holds its call open: the one place is free for everyone else.
        for number in range(3):
            stored = api.post("turns/", json={"user_input": f"I sail on Sundays ({number}).", "agent_response": "Fun!"})
            assert stored.status_code == 201, stored.text
        assert not chat.done()
        found = list(pool.map(lambda _: api.post("retrieve/", json={"query": "sailing"}), range(12)))
        assert [answer.status_code for answer in found] == [200] * 12
        assert all("sail" in answer.json()["short_term"][0]["text"] for answer in found)
        gate.set()
        assert chat.result().status_code == 200, chat.result().text
        assert chat.result().json()["response"] == "Hello, Sam."

    with httpx2.Client(base_url=base, timeout=60) as ops:
        login = ops.get("/accounts/login/")
        token = login.text.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
        ops.post("/accounts/login/", data={"username": "ops", "password": PASSWORD, "csrfmiddlewaretoken": token})
        admission = ops.get("/ops/process/").json()["admission"]
    assert admission["limit"] == 1
    assert admission["most_working"] == 1  # twelve retrievals sent at once were worked on one by one
    assert admission["admitted"] >= 1 + 3 + 12 and admission["turned_away"] == 0
    assert admission["gave_way"] == 1 and admission["working"] == 1  # the chat's wait; this request


def test_memory_feeds_hold_no_database_connection_and_an_account_may_open_only_a_few(start):
    """Eight feeds open on a process whose pool has three connections (PostgreSQL; SQLite has no pool):
    another account is served meanwhile, an account's feed beyond its limit is refused 429, and once the
    feeds close their places are free again."""
    assistant_create(assistant_id="helper")
    secrets_of = {}
    for name in ("ann", "ben", "cat"):
        user = user_create(user_id=name)
        space_get(user_id=name, assistant_id="helper")
        secrets_of[name] = token_create(memory_user=user, name="feeds")[1]
    web, base = migrated_web(
        start, DATABASE_POOL_SIZE="3", MEMORYOS_EVENTS_MAX_STREAMS_PER_ACCOUNT="4", MEMORYOS_EVENTS_STREAM_SECONDS="600"
    )
    client = httpx2.Client(base_url=base, timeout=120)

    def feed(name: str) -> httpx2.Response:
        url = f"/api/v1/users/{name}/spaces/helper/events/"
        response = client.send(
            client.build_request("GET", url, headers={"Authorization": f"Bearer {secrets_of[name]}"}), stream=True
        )
        if response.status_code == 200:
            lines = response.iter_lines()  # kept: a line iterator closes its response when dropped
            next(line for line in lines if line.startswith("event: memory"))  # the feed waits now
            kept.append(lines)
        return response

    kept = []

    feeds = [feed(name) for name in ("ann", "ben") for _ in range(4)]
    assert [response.status_code for response in feeds] == [200] * 8
    for _ in range(5):  # each would wait for a connection that eight waiting feeds held
        answer = client.get("/api/v1/users/cat/", headers={"Authorization": f"Bearer {secrets_of['cat']}"})
        assert answer.status_code == 200, answer.text
    refused = feed("ann")
    assert refused.status_code == 429 and "too many memory feeds" in refused.read().decode()
    for response in feeds:
        response.close()
    wait_until(lambda: feed("ann").status_code == 200, timeout=120, what="ann's feeds to be given back")
    assert client.get("/accounts/signup/").status_code == 200
    assert web.running()


def _sign_in(client: httpx2.Client, username: str, password: str, **headers: str) -> httpx2.Response:
    form = client.get("/accounts/login/", headers=headers)
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
    return client.post(
        "/accounts/login/",
        data={"csrfmiddlewaretoken": token, "username": username, "password": password},
        headers=headers,
    )


def test_behind_a_trusted_proxy_a_guesser_slows_only_itself_and_a_direct_client_cannot_pretend(start):
    """Production behind a reverse proxy (FORWARDED_ALLOW_IPS: the proxy's address, 127.0.0.1): the web
    server takes each client's address from the proxy's X-Forwarded-For, so a guesser's failures slow the
    guesser and not the victim behind the same proxy; a client that connects directly and sends its own
    X-Forwarded-For is not believed."""
    get_user_model().objects.create_user("vic", password="pw-vic-right-1")
    web, base = migrated_web(
        start,
        FORWARDED_ALLOW_IPS="127.0.0.1",
        MEMORYOS_SIGNIN_FREE_FAILURES="2",
        MEMORYOS_SIGNIN_FIRST_DELAY_SECONDS="600",  # no wait ends while the test runs, however slow
    )
    with ForwardingProxy(base) as proxy:
        guesser, victim = client_at("127.0.0.2", proxy.url), client_at("127.0.0.3", proxy.url)
        for _ in range(3):
            assert "_auth_user_id" not in _sign_in(guesser, "vic", "guess").text
        refused = _sign_in(guesser, "vic", "pw-vic-right-1")
        assert refused.status_code == 200 and "Too many failed sign-ins" in refused.text
        signed_in = _sign_in(victim, "vic", "pw-vic-right-1")
        assert signed_in.status_code == 302 and "sessionid" in signed_in.cookies, signed_in.text[:500]

        # The guesser, straight to the server, claiming to be someone else: it is what it connects from.
        direct = client_at("127.0.0.2", base)
        for _ in range(3):
            _sign_in(direct, "vic", "guess", **{"X-Forwarded-For": "198.51.100.7"})
        pretending = _sign_in(direct, "vic", "pw-vic-right-1", **{"X-Forwarded-For": "198.51.100.8"})
        assert "Too many failed sign-ins" in pretending.text
