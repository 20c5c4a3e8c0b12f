"""The openai-chat tap: every chat and model list the client gets, judged by the openai-chat suite's
own judges (`checks.openai.judging`), and token fidelity across turns (`checks.tap.fidelity`).

A copy can decide the shape of each answer, its finish reasons, usage and headers, a stream's
format and usage chunk, logprobs where the request asked, the shape of every tool call made against
the tools the request offered, the body of every refusal, and the token fields a router may drop.
What needs requests of the checker's own making (invalid input, auth, determinism, concurrency,
limits, tools round trips) is `skip` "needs an active run".
"""

from __future__ import annotations

from typing import Any

from checks.decision import Decision
from checks.http_client import Reply, StreamReply, parse_sse
from checks.openai import judging, judging_tools
from checks.openai.clauses import CATALOGUE as CHAT_CATALOGUE
from checks.openai.options import PRESETS, Profile
from checks.openai.shapes import message_of
from checks.report import Catalogue
from checks.tap import fidelity
from checks.tap.exchanges import ExchangeWatcher, reply_of
from checks.tap.http1 import HttpMessage
from checks.tap.ledger import Ledger
from checks.tap.spec import TapSpec

FIDELITY_STATEMENTS = {
    fidelity.EXTEND: "Across the turns of one conversation, where the replies carry token ids, each turn's prompt "
    "token ids begin with the previous turn's prompt ids followed by its completion ids (MUST under miles-session).",
    fidelity.IDS_KEPT: "A reply to a request asking for token ids (return_token_ids or return_meta_info) carries "
    "prompt and completion token ids (MUST under miles-session).",
    fidelity.LOGPROBS_KEPT: "A reply to a request with logprobs true carries choice 0's logprobs (MUST under "
    "miles-session).",
    fidelity.PER_TOKEN: "Where a reply carries logprobs with completion token ids or usage, there is exactly one "
    "logprob per completion token (MUST under miles-session).",
}
REPLY_CLAUSES = (
    "openai.chat.shape",
    "openai.chat.finish-reason",
    "openai.usage.consistent",
    "openai.usage.within-max-tokens",
    "openai.http.hygiene",
    "openai.logprobs.content",
)
STREAM_CLAUSES = ("openai.stream.format", "openai.stream.usage-chunk")
REFUSAL_CLAUSES = ("openai.errors.shape",)
CALL_CLAUSES = ("openai.tools.call-shape",)
PASSIVE = frozenset(
    {*REPLY_CLAUSES, *STREAM_CLAUSES, *REFUSAL_CLAUSES, *CALL_CLAUSES, "openai.models.list", *fidelity.CLAUSES}
)


def offered_tools(sent: dict[str, Any]) -> list[dict[str, Any]]:
    """The function tools a request offered, each with its parameters schema (an object of anything when the
    request gave none, as the API allows)."""
    tools = sent.get("tools")
    offered: list[dict[str, Any]] = []
    if not isinstance(tools, list):
        return offered
    for tool in tools:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            parameters = function.get("parameters") if isinstance(function.get("parameters"), dict) else {}
            offered.append({"type": "function", "function": {"name": function["name"], "parameters": parameters}})
    return offered


def tap_catalogue() -> Catalogue:
    catalogue = Catalogue()
    for clause in CHAT_CATALOGUE:
        catalogue.add(clause.id, clause.level, clause.statement)
    for clause_id, statement in FIDELITY_STATEMENTS.items():
        catalogue.should(clause_id, statement)
    return catalogue


class OpenAIWatcher(ExchangeWatcher):
    def __init__(self, profile: Profile) -> None:
        super().__init__()
        self.profile = profile
        self.conversations = fidelity.Conversations()

    def exchange(self, connection: int, request: HttpMessage, response: HttpMessage, ledger: Ledger) -> None:
        method, path = request.head.method_path()
        reply = reply_of(request, response)
        if method == "GET" and path.split("?")[0].endswith("/models"):
            ledger.judge(connection, ("openai.models.list",), lambda: [judging.models_listed(reply)])
            return
        sent = reply.sent if isinstance(reply.sent, dict) else None
        if method != "POST" or not path.split("?")[0].endswith("/chat/completions") or sent is None:
            return
        if "text/event-stream" in reply.content_type:
            stream = StreamReply(reply.status, reply.content_type, reply.headers, parse_sse(reply.text))
            ledger.judge(connection, STREAM_CLAUSES, lambda: self._stream(sent, stream))
        elif reply.status == 200:
            ledger.judge(connection, REPLY_CLAUSES, lambda: self._reply(sent, reply))
            ledger.judge(connection, fidelity.CLAUSES, lambda: self._tokens(sent, reply))
            ledger.judge(connection, CALL_CLAUSES, lambda: self._calls(sent, reply))
        else:  # any refusal the client met, whatever it asked, holds the error body shape
            shape = self.profile.error_shape
            ledger.judge(connection, REFUSAL_CLAUSES, lambda: judging.refusal_shape(reply, "a refused chat", shape))

    def _stream(self, sent: dict[str, Any], stream: StreamReply) -> list[Decision]:
        options = sent.get("stream_options")
        asked = isinstance(options, dict) and options.get("include_usage") is True
        return [judging.stream_format(stream, "a streamed chat"), judging.usage_chunk(stream, asked=asked)]

    def _reply(self, sent: dict[str, Any], reply: Reply) -> list[Decision]:
        decisions = [judging.chat_shape(reply)]
        if not isinstance(reply.body, dict):
            return decisions
        limit = sent.get("max_completion_tokens", sent.get("max_tokens"))
        max_tokens = limit if type(limit) is int else None
        decisions += judging.reply_rules(reply, max_tokens=max_tokens, honours_max_tokens=self.profile.max_tokens)
        top = sent.get("top_logprobs")
        if sent.get("logprobs") is True and self.profile.logprobs and type(top) is int:
            decisions.append(judging.logprobs_content(reply, top))
        return decisions

    def _calls(self, sent: dict[str, Any], reply: Reply) -> list[Decision]:
        """The suite's call-shape judge on a reply that made calls to tools the request offered (a reply
        without calls exercised nothing: the model may answer in words)."""
        tools = offered_tools(sent)
        if not tools or not message_of(reply.body).get("tool_calls"):
            return []
        return [judging_tools.tool_call_shape(reply, tools)]

    def _tokens(self, sent: dict[str, Any], reply: Reply) -> list[Decision]:
        tokens = fidelity.read_tokens(sent, reply.body)
        decisions = fidelity.kept(sent, tokens) + fidelity.per_token(tokens)
        messages = sent.get("messages")
        if isinstance(messages, list):
            previous = self.conversations.previous(messages)
            if previous is not None:
                decisions += fidelity.extends(previous, tokens)
            self.conversations.remember(messages, message_of(reply.body), tokens)
        return decisions


def spec(preset: str = "strict-openai") -> TapSpec:
    catalogue = tap_catalogue()
    active = frozenset(clause.id for clause in catalogue if clause.id not in PASSIVE)
    raised = frozenset(fidelity.CLAUSES) if preset == "miles-session" else frozenset()
    profile = PRESETS[preset]
    return TapSpec(catalogue, active, raised, lambda: OpenAIWatcher(profile))
