"""A straightforward Python baseline for bench/throughput.sh: the same counts `familiar stats`
makes at its simplest (records by type, tool calls by name, tool errors, prompts), one
json.loads per line. Usage: python3 bench/py_counts.py FILE"""
import collections
import json
import sys

records = collections.Counter()
tools = collections.Counter()
errors = 0
prompts = 0
with open(sys.argv[1], "rb") as transcript:
    for line in transcript:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        kind = record.get("type")
        records[kind] += 1
        message = record.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if kind == "user" and isinstance(content, str) and not record.get("isMeta"):
            prompts += 1
        if isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_use":
                    tools[block.get("name")] += 1
                elif block.get("type") == "tool_result" and block.get("is_error"):
                    errors += 1
print(json.dumps({"records": records, "tools": tools, "errors": errors, "prompts": prompts}))
