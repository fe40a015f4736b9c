"""Test results as text for a CI log, and as JUnit XML for CI systems."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any


def _value(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def failure_lines(result: dict[str, Any]) -> list[str]:
    """What differs in a failed test, expected and actual side by side, one line per checked key."""
    if result.get("error"):
        return [result["error"]]
    f = result["failure"]
    lines = [f"step {f['step'] + 1} ({f['shown']}): {', '.join(f['differs'])} differ"]
    for key in f["differs"]:
        lines.append(f"  {key}: expected {_value(f['expected'].get(key))}")
        lines.append(f"  {' ' * len(key)}  actual   {_value(f['actual'].get(key))}")
    if f.get("reason"):
        lines.append(f"  engine: {f['reason']}")
    return lines


def text(suites: list[dict[str, Any]]) -> str:
    """One line per test, the differences under a failed one, and a summary line."""
    out: list[str] = []
    passed = failed = 0
    for suite in suites:
        for r in suite["results"]:
            if r["passed"]:
                passed += 1
                out.append(f"{suite['file']}: ok     {r['name']}")
                continue
            failed += 1
            out.append(f"{suite['file']}: FAILED {r['name']}")
            out.extend(f"    {line}" for line in failure_lines(r))
        cov = suite.get("coverage")
        if cov:
            out.append(f"{suite['file']}: transitions covered {len(cov['covered'])}/{cov['total']} "
                       f"({cov['percent']}%)")
            points = cov.get("points")
            if points:
                out.append(f"{suite['file']}: points covered {points['covered']}/{points['total']} "
                           f"({points['percent']}%)")
                out.extend(f"    not covered: {m['key']}" for m in points["missing"])
    out.append(f"{passed} passed, {failed} failed")
    return "\n".join(out) + "\n"


def junit(suites: list[dict[str, Any]], flow_id: str) -> str:
    """JUnit XML: one testsuite per tests file, one testcase per test, a failure element per failed one."""
    root = ET.Element("testsuites", name=f"botflow {flow_id}")
    total = failures = errors = 0
    for suite in suites:
        results = suite["results"]
        failed = sum(1 for r in results if not r["passed"] and not r.get("error"))
        errored = sum(1 for r in results if r.get("error"))
        node = ET.SubElement(root, "testsuite", name=suite["file"], tests=str(len(results)),
                             failures=str(failed), errors=str(errored))
        for r in results:
            case = ET.SubElement(node, "testcase", classname=flow_id, name=r["name"])
            if r["passed"]:
                continue
            lines = failure_lines(r)
            tag = "error" if r.get("error") else "failure"
            ET.SubElement(case, tag, message=lines[0]).text = "\n".join(lines)
        total += len(results)
        failures += failed
        errors += errored
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", str(errors))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
