"""The client in step with Protocol/schema: every operation has its method taking exactly the operation's
fields, and every error code its exception class. A code or an operation added to the schemas fails here,
naming what the client lacks (or has in excess)."""

from __future__ import annotations

import inspect
import json
import unittest

import entitled
from entitled import Client, Watch
from entitled.wire import wire_name

from .support import REPO_ROOT

SCHEMA = REPO_ROOT / "Protocol" / "schema"
# What every typed method takes besides the operation's fields, and the one operation whose method is not
# named after it: unwatch is sent by Watch.close().
CALL_OPTIONS = {"id", "timeout"}
METHOD_OF = {"unwatch": (Watch, "close")}


def request_operations() -> dict[str, set[str]]:
    schema = json.loads((SCHEMA / "request.schema.json").read_text(encoding="utf-8"))
    return {op: set(branch["propertyNames"]["enum"]) - {"op", "id"} for op, branch in schema["$defs"]["operations"].items()}


def error_codes() -> list[str]:
    schema = json.loads((SCHEMA / "response.schema.json").read_text(encoding="utf-8"))
    return schema["$defs"]["errorCode"]["enum"]


class InStepWithTheSchemas(unittest.TestCase):
    def test_every_operation_has_a_method_taking_exactly_its_fields(self) -> None:
        operations = request_operations()
        missing = [op for op in operations if not hasattr(*METHOD_OF.get(op, (Client, op)))]
        self.assertEqual(missing, [], f"operations of request.schema.json without a method: {missing}")
        wrong = {}
        for op, fields in operations.items():
            if op in METHOD_OF:
                continue
            parameters = inspect.signature(getattr(Client, op)).parameters
            taken = {wire_name(name) for name, p in parameters.items()
                     if name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)}
            if taken != fields:
                wrong[op] = {"lacks": sorted(fields - taken), "extra": sorted(taken - fields)}
        self.assertEqual(wrong, {}, "methods whose parameters differ from the operation's fields")

    def test_the_read_operations_are_the_schemas_operations_that_change_nothing(self) -> None:
        writes = {"grant", "claim", "revoke", "extend", "define", "undefine", "event", "erase", "snapshot", "reload",
                  "auth", "watch", "unwatch"}
        self.assertEqual(set(entitled.READ_OPERATIONS), set(request_operations()) - writes)

    def test_every_error_code_has_its_class(self) -> None:
        codes = error_codes()
        self.assertEqual(sorted(set(codes) - set(entitled.ERROR_CLASSES)), [], "codes without a class")
        self.assertEqual(sorted(set(entitled.ERROR_CLASSES) - set(codes)), [], "classes of codes the schema lacks")
        for code in codes:
            answer = {"ok": False, "id": 1, "error": {"code": code, "message": f"a {code}"}}
            error = entitled.error_from_answer(answer, "grant")
            self.assertIs(type(error), entitled.ERROR_CLASSES[code])
            self.assertIsInstance(error, entitled.EntitledError)  # old code catching it still does
            self.assertEqual((error.code, error.message, error.op, error.answer), (code, f"a {code}", "grant", answer))
            self.assertEqual(error.may_have_been_applied, code in ("outcome_unknown", "internal"), code)
            self.assertTrue(hasattr(entitled, type(error).__name__), f"{type(error).__name__} is not exported")

    def test_an_unknown_code_is_its_own_class_and_keeps_the_code(self) -> None:
        error = entitled.error_from_answer({"ok": False, "error": {"code": "rate_limited", "message": "slow down"}})
        self.assertIsInstance(error, entitled.UnknownCodeError)
        self.assertEqual(error.code, "rate_limited")
        self.assertTrue(error.may_have_been_applied)
        loading = entitled.error_from_answer({"ok": False, "error": {"code": "loading", "message": "", "loaded": 3, "total": 9}})
        self.assertEqual((loading.loaded, loading.total), (3, 9))


if __name__ == "__main__":
    unittest.main()
