"""Drive an ORS server with a real ORS client, as a trainer would: python drive_clients.py ors|openreward URL.

Runs in the peer venv. Prints one JSON object of what the client saw: splits,
the task count and task 0, the prompt, three `step` calls (rewards and
finished), a 10 000-character `dump` (chunked on the wire), what a call after
finished and the raising `fail` tool raise.
"""

import json
import sys


def connect(which, url):
    if which == "ors":
        from ors.client import ORS

        client = ORS(base_url=url)
        return client, client.environments.get("counter")
    from openreward import OpenReward

    client = OpenReward(api_key="unused-on-a-local-server")
    return client, client.environments.get("counter", variant="counter", base_url=url)


def error_of(call):
    try:
        call()
    except Exception as exc:  # the client's own error type is what we record
        return type(exc).__name__
    return None


def main(which, url):
    client, env = connect(which, url)  # the client owns the event loop: it must outlive the calls
    seen = {"splits": [str(getattr(s, "name", s)) for s in env.list_splits()], "num_tasks": env.num_tasks("train")}
    task = env.get_task("train", 0)
    seen["task0"] = getattr(task, "task_spec", None)
    with env.session(split="train", index=0) as session:
        seen["prompt"] = [block.text for block in session.get_prompt()]
        seen["tools"] = sorted(tool.name for tool in session.list_tools())
        dump = session.call_tool("dump", {"size": 10_000})
        seen["dump_chars"] = len(dump.blocks[0].text)
        steps = [session.call_tool("step", {"note": str(i)}) for i in range(3)]
        seen["steps"] = [[out.reward, out.finished] for out in steps]
        seen["after_finished"] = error_of(lambda: session.call_tool("step", {"note": "late"}))
        seen["raising"] = error_of(lambda: session.call_tool("fail", {}))
    print(json.dumps(seen))
    client.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
