"""How a model is asked to generate: temperature, penalties, seed, stop sequences, token cap.

Chat replies use `chat_sampling()` (from the MEMORYOS_CHAT_* settings): greedy decoding with repetition
penalties, a limit of a few sentences and a token cap sized for a chat reply, so the same conversation
gets the same replies from one run to the next and a small model does not loop to the limit.
`Sampling.stronger()` is the one retry the degeneration guard allows: harsher penalties, a little
temperature and another fixed seed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from memory_engine.config import memory_settings

# Lines a model writes when it starts speaking as the other side of the chat. Generation stops there.
# (OpenAI accepts at most four stop sequences.)
CHAT_STOP = ("\nUser:", "\nUSER:", "<|im_start|>", "<start_of_turn>")


@dataclass(frozen=True)
class Sampling:
    """Decoding settings for one request. `repeat_penalty` is llama.cpp's (1.0 = off); it is not part
    of the OpenAI API, so the OpenAI-compatible provider leaves it out. A `temperature` of 0 is greedy."""

    max_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    repeat_penalty: float = 1.0
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    seed: int | None = None
    stop: tuple[str, ...] = ()
    max_sentences: int | None = None  # a chat reply stops once it has said this many sentences

    def stronger(self) -> Sampling:
        """The settings for a retry after a degenerate answer: steeper penalties against repeating,
        some temperature to leave the rut, and a different (still fixed) seed. Pure."""
        return replace(
            self,
            temperature=max(self.temperature, 0.6),
            top_p=min(self.top_p, 0.9),
            repeat_penalty=max(self.repeat_penalty, 1.0) + 0.15,
            frequency_penalty=min(self.frequency_penalty + 0.5, 2.0),
            presence_penalty=min(self.presence_penalty + 0.3, 2.0),
            seed=(self.seed or 0) + 1,
        )


def chat_sampling() -> Sampling:
    """The sampling for chat replies from the MEMORYOS_CHAT_* settings."""
    conf = memory_settings()
    return Sampling(
        max_tokens=int(conf.chat_max_tokens),
        temperature=float(conf.chat_temperature),
        top_p=float(conf.chat_top_p),
        repeat_penalty=float(conf.chat_repeat_penalty),
        frequency_penalty=float(conf.chat_frequency_penalty),
        presence_penalty=float(conf.chat_presence_penalty),
        seed=int(conf.chat_seed),
        stop=CHAT_STOP,
        max_sentences=int(conf.chat_max_sentences) or None,
    )
