#!/usr/bin/env python3
"""An event-dense transcript as issue 28 describes it: N short `Read` tool uses, each answered by
its result on the next line, every message and tool id unique. The record shapes are those
Claude Code writes (see the real fixtures). Usage: bench/dense-tools.py OUT N (150000: 106 MB)."""
import json, sys
n = int(sys.argv[2]); out = open(sys.argv[1], "w")
for i in range(n):
    ts = "2026-02-11T10:%02d:%02d.%03dZ" % ((i // 60000) % 60, (i // 1000) % 60, i % 1000)
    use = {"type":"assistant","uuid":"a%d" % i,"parentUuid":"r%d" % (i-1),"sessionId":"s1","timestamp":ts,"cwd":"/w","message":{"id":"msg_%d" % i,"role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"toolu_%d" % i,"name":"Read","input":{"file_path":"/w/src/file_%d.rs" % i}}],"usage":{"input_tokens":10,"output_tokens":5,"cache_read_input_tokens":1000}}}
    res = {"type":"user","uuid":"r%d" % i,"parentUuid":"a%d" % i,"sessionId":"s1","timestamp":ts,"cwd":"/w","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d" % i,"content":"fn main() { println!(\"%d\"); }" % i}]}}
    out.write(json.dumps(use) + "\n"); out.write(json.dumps(res) + "\n")
