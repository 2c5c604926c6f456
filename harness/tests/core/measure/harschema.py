"""HAR 1.2 as a JSON Schema, written from the specification (W3C Web Performance WG
draft, "HTTP Archive (HAR) format", version 1.2): every object's required fields and their
types, timings -1 or more (send, wait and receive never -1), dates as ISO 8601. Custom
fields start with an underscore and are allowed anywhere, as the format says."""

from __future__ import annotations

from typing import Any

ISO = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$"


def _object(required: dict[str, Any], optional: dict[str, Any] | None = None) -> dict[str, Any]:
    properties = {**required, **(optional or {}), "comment": {"type": "string"}}
    return {"type": "object", "required": list(required), "properties": properties,
            "patternProperties": {"^_": {}}, "additionalProperties": False}


STRING = {"type": "string"}
INTEGER = {"type": "integer"}
NAME_VALUE = {"type": "array", "items": _object({"name": STRING, "value": STRING})}
COOKIES = {"type": "array", "items": _object({"name": STRING, "value": STRING}, {
    "path": STRING, "domain": STRING, "expires": STRING, "httpOnly": {"type": "boolean"},
    "secure": {"type": "boolean"}})}
TIME = {"type": "number", "minimum": -1}
PHASE = {"type": "number", "minimum": 0}

SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    **_object({"log": _object(
        {
            "version": {"const": "1.2"},
            "creator": _object({"name": STRING, "version": STRING}),
            "entries": {"type": "array", "items": _object(
                {
                    "startedDateTime": {"type": "string", "pattern": ISO},
                    "time": {"type": "number", "minimum": 0},
                    "request": _object({
                        "method": STRING, "url": {"type": "string", "pattern": "^[a-z]+://"}, "httpVersion": STRING,
                        "cookies": COOKIES, "headers": NAME_VALUE, "queryString": NAME_VALUE,
                        "headersSize": INTEGER, "bodySize": INTEGER}, {"postData": {"type": "object"}}),
                    "response": _object({
                        "status": INTEGER, "statusText": STRING, "httpVersion": STRING, "cookies": COOKIES,
                        "headers": NAME_VALUE,
                        "content": _object({"size": INTEGER, "mimeType": STRING},
                                           {"compression": INTEGER, "text": STRING, "encoding": STRING}),
                        "redirectURL": STRING, "headersSize": INTEGER, "bodySize": INTEGER}),
                    "cache": _object({}, {"beforeRequest": {"type": ["object", "null"]},
                                          "afterRequest": {"type": ["object", "null"]}}),
                    "timings": _object({"send": PHASE, "wait": PHASE, "receive": PHASE},
                                       {"blocked": TIME, "dns": TIME, "connect": TIME, "ssl": TIME}),
                },
                {"pageref": STRING, "serverIPAddress": STRING, "connection": STRING})},
        },
        {
            "browser": _object({"name": STRING, "version": STRING}),
            "pages": {"type": "array", "items": _object({
                "startedDateTime": {"type": "string", "pattern": ISO}, "id": STRING, "title": STRING,
                "pageTimings": _object({}, {"onContentLoad": TIME, "onLoad": TIME})})},
        })}),
}
