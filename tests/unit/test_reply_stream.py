"""A streamed reply and a memory feed stop when their client goes, whenever the server learns it.

Under load the server may learn of a hang-up at the very moment a word (or an announcement) arrives. On
Python 3.11, `asyncio.wait_for` then loses the cancellation: the reply ran on to its end and stored its
turn, and a feed kept its place until its lifetime was out. These tests make that moment happen on
purpose, in the event loop's own order of work, with no timing."""

import asyncio
import contextlib
import threading

from memory_engine.interfaces.api.memory_feed import _wait
from memory_engine.interfaces.api.reply_stream import ReplyStream

PATIENCE = 60.0  # only a failing run waits this long


def _failure(exc: Exception) -> tuple[int, dict]:
    return 500, {"detail": str(exc)}


def test_a_client_hanging_up_as_a_word_arrives_stops_the_reply_at_its_next_word():
    loop_held, word_and_hang_up_queued = threading.Event(), threading.Event()
    response_closed, work_done = threading.Event(), threading.Event()
    later_words_refused: list[bool] = []
    shared: dict = {}

    def work(on_text):
        on_text("Hello")
        loop_held.wait(PATIENCE)
        on_text("Hello there")  # the word is queued for the response ...
        shared["loop"].call_soon_threadsafe(shared["response"].cancel)  # ... and the hang-up right behind it
        word_and_hang_up_queued.set()
        response_closed.wait(PATIENCE)
        later_words_refused.append(on_text("Hello there, and more"))
        work_done.set()
        return {"text": "Hello there, and more"}

    async def scenario() -> list[bytes]:
        items = ReplyStream(work, _failure).asynchronous()
        read: list[bytes] = []
        first = asyncio.Event()

        async def respond():
            async for item in items:
                read.append(item)
                first.set()

        shared["loop"], shared["response"] = asyncio.get_running_loop(), asyncio.create_task(respond())
        await first.wait()  # the response is waiting for the next word
        # The loop is held while the word and the hang-up are queued, so that it meets both in one turn.
        loop_held.set()
        word_and_hang_up_queued.wait(PATIENCE)
        with contextlib.suppress(asyncio.CancelledError):
            await shared["response"]
        response_closed.set()
        return read

    read = asyncio.run(scenario())
    work_done.wait(PATIENCE)
    assert read and b"Hello" in read[0]
    assert later_words_refused == [True], "the reply went on after its client had gone"


def test_a_reply_stops_at_its_next_word_once_the_server_knows_its_client_has_gone():
    """However the response fares, the disconnect the server heard stops the reply (`gone`)."""
    gone = threading.Event()
    answers: list[bool] = []

    def work(on_text):
        answers.append(on_text("Hello"))
        gone.set()
        answers.append(on_text("Hello there"))
        return {"text": "Hello there"}

    async def scenario() -> list[bytes]:
        return [item async for item in ReplyStream(work, _failure, gone=gone.is_set).asynchronous()]

    asyncio.run(scenario())
    assert answers == [False, True]


def test_a_feed_whose_client_hangs_up_as_a_change_is_announced_ends():
    async def scenario() -> asyncio.Task:
        wake = asyncio.Event()
        waiting = asyncio.create_task(_wait(wake, PATIENCE))
        await asyncio.sleep(0)  # the feed is waiting for an announcement
        wake.set()  # one arrives ...
        waiting.cancel()  # ... as the client hangs up
        with contextlib.suppress(asyncio.CancelledError):
            await waiting
        return waiting

    assert asyncio.run(scenario()).cancelled(), "the feed went on after its client had gone"
