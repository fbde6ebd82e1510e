"""Checks a stand-in's answers against an OpenAPI 3 description: the
operation exists, the query parameters the client sent are declared, and
the answer's body matches the schema of its status.  The schema check
covers what the descriptions use: $ref, type (with nullable), properties,
required, items, enum, allOf/anyOf/oneOf, additionalProperties."""

import json
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
GITHUB = os.path.join(REPO, "tests", "openapi", "node_modules", "@octokit",
                      "openapi", "generated", "api.github.com.json")

TYPES = {"object": dict, "array": list, "string": str, "boolean": bool,
         "integer": int, "number": (int, float)}


class Description:
    def __init__(self, path):
        with open(path) as f:
            self.d = json.load(f)

    def ref(self, node):
        while isinstance(node, dict) and "$ref" in node:
            cur = self.d
            for part in node["$ref"].lstrip("#/").split("/"):
                cur = cur[part]
            node = cur
        return node

    def operation(self, method, template):
        item = self.d["paths"].get(template)
        if item is None or method.lower() not in item:
            raise AssertionError("%s %s is not in the description" % (method, template))
        return item[method.lower()]

    def params(self, op):
        return {self.ref(p)["name"]: self.ref(p) for p in op.get("parameters", [])}

    def check(self, method, template, query, status, body):
        op = self.operation(method, template)
        declared = self.params(op)
        for k in query:
            if k not in declared or declared[k]["in"] != "query":
                raise AssertionError("%s %s: query parameter %r not declared"
                                     % (method, template, k))
        resp = op["responses"].get(str(status)) or op["responses"].get("default")
        if resp is None:
            raise AssertionError("%s %s: status %d not described" % (method, template, status))
        resp = self.ref(resp)
        content = (resp.get("content") or {}).get("application/json")
        if content is None:
            return
        errs = []
        self.validate(body, content["schema"], "$", errs)
        if errs:
            raise AssertionError("%s %s %d: %s" % (method, template, status, "; ".join(errs[:5])))

    def validate(self, v, schema, where, errs):
        schema = self.ref(schema)
        if v is None:
            if not schema.get("nullable") and schema.get("type") not in (None, "null"):
                errs.append("%s: null where %s" % (where, schema.get("type")))
            return
        for sub in schema.get("allOf", []):
            self.validate(v, sub, where, errs)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                if not any(not self._errs(v, s, where) for s in schema[key]):
                    errs.append("%s: matches no %s branch" % (where, key))
        t = schema.get("type")
        if t is not None:
            py = TYPES.get(t)
            if py is None or not isinstance(v, py) or (t in ("integer", "number")
                                                         and isinstance(v, bool)):
                errs.append("%s: %r is not %s" % (where, v, t))
                return
        if "enum" in schema and v not in schema["enum"]:
            errs.append("%s: %r not in %r" % (where, v, schema["enum"]))
        if isinstance(v, dict):
            props = schema.get("properties", {})
            for r in schema.get("required", []):
                if r not in v:
                    errs.append("%s: lacks required %r" % (where, r))
            for k, x in v.items():
                if k in props:
                    self.validate(x, props[k], "%s.%s" % (where, k), errs)
                elif isinstance(schema.get("additionalProperties"), dict):
                    self.validate(x, schema["additionalProperties"], "%s.%s" % (where, k),
                                  errs)
                elif schema.get("additionalProperties") is False:
                    errs.append("%s: unexpected %r" % (where, k))
        if isinstance(v, list) and "items" in schema:
            for i, x in enumerate(v):
                self.validate(x, schema["items"], "%s[%d]" % (where, i), errs)

    def _errs(self, v, s, where):
        e = []
        self.validate(v, s, where, e)
        return e
