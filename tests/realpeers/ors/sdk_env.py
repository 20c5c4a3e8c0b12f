"""A small ORS env on ors-sdk's base class, served on loopback: python sdk_env.py PORT.

Runs in the peer venv (ors-sdk 0.1.0), not in rlconform's: `submit` ends the
episode with a reward, `dump` answers a text block of `size` characters (over
4 KB the server chunks it) and `boom` raises.
"""

import sys

from ors import Environment, Server, Split, TextBlock, ToolOutput, tool
from pydantic import BaseModel

TASKS = {"train": [{"q": "1+1", "a": "2"}, {"q": "2+3", "a": "5"}], "test": [{"q": "3*3", "a": "9"}]}


class SubmitParams(BaseModel):
    answer: str


class DumpParams(BaseModel):
    size: int


class EmptyParams(BaseModel):
    pass


class ProbeEnv(Environment):
    def __init__(self, task_spec=None, secrets=None):
        super().__init__(task_spec or {})
        self.task = dict(task_spec or {})

    @classmethod
    def list_splits(cls):
        return [Split(name="train", type="train"), Split(name="test", type="test")]

    @classmethod
    def list_tasks(cls, split):
        return TASKS[split]

    def get_prompt(self):
        return [TextBlock(type="text", text=f"What is {self.task['q']}?")]

    @tool
    async def submit(self, params: SubmitParams) -> ToolOutput:
        """Answer the question; ends the episode."""
        right = params.answer == self.task["a"]
        return ToolOutput(
            blocks=[TextBlock(type="text", text="right" if right else "wrong")], reward=float(right), finished=True
        )

    @tool
    async def dump(self, params: DumpParams) -> ToolOutput:
        """A text block of `size` characters."""
        return ToolOutput(blocks=[TextBlock(type="text", text="x" * params.size)], reward=None, finished=False)

    @tool
    async def boom(self, params: EmptyParams) -> ToolOutput:
        """Always raises."""
        raise RuntimeError("boom, as designed")


if __name__ == "__main__":
    Server([ProbeEnv]).run(host="127.0.0.1", port=int(sys.argv[1]))
