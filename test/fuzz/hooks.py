"""Schemathesis hooks for `npm run test:fuzz` (see run.sh).

What a JSON schema cannot say about this API, said here:

- afterIndexKey is a key the server issued for one box and group (base64url of a
  walk's TotalCount and a position, sealed with a checksum over the box and the
  group, src/domain/index-key.ts; version 2).
  The document states its shape; any other value of that shape is a 400 by design.
  So a generated key that is schema-valid is replaced by one minted for the very
  boxId and counteragentGroupId of the request, at a position derived from the
  generated value: positive cases stay positive and reach the paging code.
  Schema-invalid keys (negative cases) are left alone.
- Whether a box has a department is the box's business, not the document's: a
  counteragent group listing a department the box lacks is a 400. So every
  schema-valid department id in a request body (DepartmentIds) is replaced by
  one of the demo box's departments (src/fixtures/demo.ts), chosen from the
  generated value: positive cases stay positive and reach the group code.
  Schema-invalid ids are left alone.
- Every other case asks for legacy JSON (Accept: application/json), so that the
  JSON response schemas are checked; the rest get binary protobuf, as SDKs do.
- Stateful runs carry values from answers into requests (the default group's id
  from GetCounteragentGroup into DeleteCounteragentGroup, say) and count the
  result as schema-valid. A "schema-valid request rejected" finding whose
  request, as sent, breaks the document is dropped: its 400 is the right answer,
  and `invalid_input_is_400` below judges it.
- Rules the document states in words, for generators that cannot read them as
  schemas (docs/clients.md, "Clients generated from /openapi.json"), are
  applied here when a request is judged: an empty query parameter means absent
  (the description of each optional parameter); the legacy booleans, string
  enums "true"/"false", take JSON booleans too (their description: "the JSON
  booleans true and false are accepted too"); and AnyDepartment must agree
  with Departments (the description of CounteragentGroupDepartmentPatch). A
  "schema-violating request accepted" finding whose request, as sent, keeps
  the document's words is dropped likewise: the server is right to take it.
"""

import base64
import hashlib
import json
import re
import struct
from urllib.parse import parse_qs, unquote, urlsplit

import jsonschema_rs
import schemathesis
from schemathesis.core.parameters import ParameterLocation

KEY_SHAPE = re.compile(r"[A-Za-z0-9_-]{22,1400}")  # MAX_INDEX_KEY_LENGTH of src/domain/index-key.ts
# The demo box's departments (src/fixtures/demo.ts): the head department, Sales, Sales/North, Accounting.
DEMO_DEPARTMENTS = [
    "00000000-0000-0000-0000-000000000000",
    "dddddddd-0000-4000-8000-000000000001",
    "dddddddd-0000-4000-8000-000000000002",
    "dddddddd-0000-4000-8000-000000000003",
]
# Dates a JavaScript Date can hold (±8.64e15 ms): the range of positions the server issues.
MAX_DATE_MS = 8_640_000_000_000_000
_counter = 0


def mint_key(box_id: str, group_id: str, seed: str) -> str:
    """An afterIndexKey as src/domain/index-key.ts encodes it, for box_id and group_id."""
    digest = hashlib.sha256(seed.encode("utf-8")).digest()
    millis = int.from_bytes(digest[:8], "big") % (2 * MAX_DATE_MS + 1) - MAX_DATE_MS
    total = int.from_bytes(digest[8:12], "big") % 2**31  # the walk's TotalCount (version 2 keys)
    counteragent_box_id = seed[:100]
    payload = (
        bytes([2])
        + struct.pack(">I", total)
        + struct.pack(">q", millis)
        + counteragent_box_id.encode("utf-8")
    )
    check = hashlib.sha256(f"{box_id}\0{group_id}\0".encode("utf-8") + payload).digest()[:6]
    return base64.urlsafe_b64encode(payload + check).decode("ascii").rstrip("=")


def _key_fits(key: str, box_id: str, group_id: str) -> bool:
    """Whether a page key or token is sealed to this box and group (the check of mint_key)."""
    try:
        raw = base64.urlsafe_b64decode(key + "=" * (-len(key) % 4))
    except ValueError:
        return False
    if len(raw) < 1 + 4 + 8 + 1 + 6 or raw[0] != 2:
        return False
    payload, check = raw[:-6], raw[-6:]
    return hashlib.sha256(f"{box_id}\0{group_id}\0".encode("utf-8") + payload).digest()[:6] == check


def _sent_path_parameters(case, request) -> dict:
    """The path variables as the server reads them from the URL sent: each segment, percent-decoded
    (a stateful run holds them encoded already, the other phases raw)."""
    template = case.operation.path.strip("/").split("/")
    sent = urlsplit(request.url).path.strip("/").split("/")
    if len(template) != len(sent):
        return dict(case.path_parameters or {})
    out = {}
    for pattern, segment in zip(template, sent):
        m = re.fullmatch(r"\{([^}]+)\}(:\w+)?", pattern)
        if m:
            if m.group(2) and segment.endswith(m.group(2)):
                segment = segment[: -len(m.group(2))]
            out[m.group(1)] = unquote(segment)
    return out


def _scope_of(case, request=None) -> tuple:
    """The box and group a request's page key or token must be sealed to (the groups list: no group)."""
    query = case.query if isinstance(case.query, dict) else {}
    path = _sent_path_parameters(case, request) if request is not None else (case.path_parameters or {})
    box = query.get("boxId", path.get("box_id"))
    group = query.get("counteragentGroupId", path.get("counteragent_group_id"))
    if case.operation.path.endswith("/counteragentGroups"):
        group = ""
    return box, group


def _identifier_schema(raw: dict) -> dict:
    """The identifier rule as the document states it (the boxId parameter of any operation)."""
    for item in raw.get("paths", {}).values():
        for operation in item.values():
            for parameter in operation.get("parameters", []):
                if parameter.get("name") == "boxId":
                    return parameter["schema"]
    return {"type": "string"}


def _with_demo_departments(raw: dict, value):
    """`value` with every schema-valid DepartmentIds item replaced by a demo department."""
    if isinstance(value, list):
        return [_with_demo_departments(raw, item) for item in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        if key == "DepartmentIds" and isinstance(item, list):
            identifier = _validator(raw, "identifier", _identifier_schema(raw))
            out[key] = [
                DEMO_DEPARTMENTS[hashlib.sha256(d.encode("utf-8")).digest()[0] % 4]
                if isinstance(d, str) and identifier.is_valid(d)
                else d
                for d in item
            ]
        else:
            out[key] = _with_demo_departments(raw, item)
    return out


@schemathesis.hook
def map_case(context, case):
    global _counter
    _counter += 1
    data = case.meta.phase.data if case.meta is not None else None
    # Cases about a header (a missing Authorization, say) keep their headers as generated.
    about_a_header = getattr(data, "parameter_location", None) == ParameterLocation.HEADER
    if _counter % 2 == 0 and not about_a_header:
        case.headers = {**(case.headers or {}), "Accept": "application/json"}
    query = case.query
    if isinstance(query, dict):
        # The box and group come from the query (legacy paths) or the path (/v1/); the groups
        # list's page tokens are sealed to the box alone (src/domain/counteragent-groups.ts).
        box, group = _scope_of(case)
        for name in ("afterIndexKey", "pageToken"):
            key = query.get(name)
            if (
                isinstance(key, str)
                and KEY_SHAPE.fullmatch(key)
                and isinstance(box, str)
                and isinstance(group, str)
            ):
                query = {**query, name: mint_key(box, group, key)}
        case.query = query
    if isinstance(case.body, (dict, list)):
        case.body = _with_demo_departments(case.operation.schema.raw_schema, case.body)
        # Two cases in three keep AnyDepartment's rule, so that they reach the group code;
        # the third is judged as generated (a 400 when the rule is broken).
        if _counter % 3 != 0:
            case.body = _departments_agreeing(case.body)
    return case


def _departments_agreeing(value):
    """`value` with each AnyDepartment made to agree with its Departments (the rule in words)."""
    if isinstance(value, list):
        return [_departments_agreeing(item) for item in value]
    if not isinstance(value, dict):
        return value
    out = {key: _departments_agreeing(item) for key, item in value.items()}
    if "AnyDepartment" in out and _departments_disagree({k: out[k] for k in ("AnyDepartment", "Departments") if k in out}):
        if out["AnyDepartment"] in ("true", True):
            out["Departments"] = None
        else:
            out["Departments"] = {"DepartmentIds": [DEMO_DEPARTMENTS[1]]}
    return out


# Schema-invalid input is a 400 (docs/api.md §4: 405 → 401 → 400 → 403 → 402 → 404 → 409), never a
# 403/404/409 that would mean the server looked past it. Schemathesis' own
# negative_data_rejection counts 403/404 as rejections and (4.32.5) skips coverage-phase
# negative query cases as soon as another query parameter is valid, so this check
# judges every request as it was sent, against the document the server serves.
# 431: a URL (a query parameter) so long that the headers pass Node's 16 KiB, refused unread.
REJECTED = {400, 401, 413, 431}
_validators: dict = {}


def _validator(raw: dict, key: str, schema: dict):
    if key not in _validators:
        _validators[key] = jsonschema_rs.validator_for(
            {**schema, "components": raw.get("components", {})}
        )
    return _validators[key]


BOOLEANS_TOO = "the JSON booleans true and false are accepted too"


def _string_booleans(raw: dict) -> set[str]:
    """The properties whose description says a JSON boolean is taken for "true"/"false"."""
    names = set()
    for schema in raw.get("components", {}).get("schemas", {}).values():
        for name, prop in (schema.get("properties") or {}).items():
            if BOOLEANS_TOO in str(prop.get("description", "")):
                names.add(name)
    return names


def _as_written(value, names: set[str]):
    """`value` with JSON booleans at those properties written as the strings the schema names."""
    if isinstance(value, list):
        return [_as_written(item, names) for item in value]
    if not isinstance(value, dict):
        return value
    return {
        key: (("true" if item else "false") if key in names and isinstance(item, bool)
              else _as_written(item, names))
        for key, item in value.items()
    }


def _departments_disagree(value) -> bool:
    """AnyDepartment "true" with departments listed, or "false" without one (a 400 by the rule)."""
    if isinstance(value, list):
        return any(_departments_disagree(item) for item in value)
    if not isinstance(value, dict):
        return False
    if "AnyDepartment" in value:
        departments = value.get("Departments")
        ids = departments.get("DepartmentIds") if isinstance(departments, dict) else None
        listed = isinstance(ids, list) and len(ids) > 0
        if value["AnyDepartment"] in ("true", True) and listed:
            return True
        if value["AnyDepartment"] in ("false", False) and not listed:
            return True
    return any(_departments_disagree(item) for item in value.values())


def _integer_text_valid(text: str, schema: dict) -> bool:
    if not re.fullmatch(r"-?[0-9]+", text):
        return False
    return _validator({}, json.dumps(schema, sort_keys=True), schema).is_valid(int(text))


def _invalid_input(case, request) -> str | None:
    """Why the request as sent breaks the document, or None when it does not."""
    raw = case.operation.schema.raw_schema
    operation = raw["paths"][case.operation.path][case.operation.method.lower()]
    sent = parse_qs(urlsplit(request.url).query, keep_blank_values=True)
    by_name: dict[str, list[str]] = {}
    for name, values in sent.items():
        # The server matches parameter names case-insensitively.
        by_name.setdefault(name.lower(), []).extend(values)
    for parameter in operation.get("parameters", []):
        name, schema = parameter["name"], parameter.get("schema", {})
        if parameter.get("in") == "path":
            # Never absent; judged as the route decodes it (one segment, percent-decoded).
            value = _sent_path_parameters(case, request).get(name)
            if isinstance(value, str) and not _validator(raw, f"{case.operation.path} {name}", schema).is_valid(value):
                return f"path parameter {name}={value!r} does not match its schema"
            continue
        if parameter.get("in") == "header":
            value = request.headers.get(name)
            if value is not None and not _validator(raw, f"{case.operation.path} {name}", schema).is_valid(value):
                return f"header {name}={value!r} does not match its schema"
            continue
        if parameter.get("in") != "query":
            continue
        values = by_name.get(name.lower(), [])
        if len(values) > 1:
            return f"query parameter {name} given {len(values)} times"
        if not values or values[0] == "":
            if parameter.get("required"):
                return f"required query parameter {name} absent or empty"
            continue
        text = values[0]
        if schema.get("type") == "integer":
            if not _integer_text_valid(text, schema):
                return f"query parameter {name}={text!r} is not a valid integer here"
        elif not _validator(raw, f"{case.operation.path} {name}", schema).is_valid(text):
            return f"query parameter {name}={text!r} does not match its schema"
    # The paging words of the resource API (docs/api.md §3.1): pageToken "Not with
    # after_index_key" or page, pageSize (above 0) "Not with count" (nor page).
    def given(name):
        return [v for v in by_name.get(name.lower(), []) if v != ""]

    size = given("pageSize")
    sized = bool(size) and re.fullmatch(r"-?[0-9]+", size[0]) is not None and int(size[0]) != 0
    if given("pageToken") and (given("afterIndexKey") or given("page")):
        return "pageToken given with the legacy paging (afterIndexKey or page)"
    if sized and (given("count") or given("page")):
        return "pageSize given with count or page"
    # "exactly as the previous page of the same list (box, group) returned it": a token
    # carried from another list's answer (a stateful run) is a 400 by these words.
    token = given("pageToken")
    box, group = _scope_of(case, request)
    if token and isinstance(box, str) and isinstance(group, str) and not _key_fits(token[0], box, group):
        return "pageToken was not issued for this list"
    # A deprecated alias ("Another name for documentId, …; given with documentId, the two must
    # agree"): both given, not empty, and different is a 400 by the words of the document.
    for parameter in operation.get("parameters", []):
        alias = re.match(r"Another name for (\w+)", str(parameter.get("description", "")))
        if not alias:
            continue
        own = [v for v in by_name.get(alias.group(1).lower(), []) if v != ""]
        other = [v for v in by_name.get(parameter["name"].lower(), []) if v != ""]
        if own and other and own[0] != other[0]:
            return f"{alias.group(1)} and its alias {parameter['name']} differ"
    content_type = request.headers.get("Content-Type", "")
    json_body = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if json_body and re.match(r"application/json\s*(;|$)", content_type, re.I):
        body = request.body or b""
        try:
            value = json.loads(body)
        except ValueError:
            return "the body is not JSON"
        key = f"{case.operation.path} body"
        # The legacy booleans' words hold on the legacy paths; the resource API (errors as
        # google.rpc.Status: a "default" answer) is proto3 JSON, booleans as booleans.
        legacy = "default" not in operation.get("responses", {})
        written = _as_written(value, _string_booleans(raw)) if legacy else value
        if not _validator(raw, key, json_body["schema"]).is_valid(written):
            return "the JSON body does not match its schema"
        if _departments_disagree(written):
            return "AnyDepartment and Departments disagree (CounteragentGroupDepartmentPatch)"
    # The update mask's words: a named Name the body leaves out cannot be cleared (a 400).
    mask = [p.lower() for v in by_name.get("updatemask", []) for p in v.split(",")]
    if "name" in mask or "*" in mask:
        try:
            body = json.loads(request.body or b"null")
        except ValueError:
            body = None
        if not (isinstance(body, dict) and isinstance(body.get("Name"), str)):
            return "updateMask names Name, which the body leaves out (a Name cannot be cleared)"
    return None


@schemathesis.check
def invalid_input_is_400(ctx, response, case):
    """Schema-invalid input (as sent) gets a 400, or a 401 before it, never a later status."""
    request = response.request
    if request.method.upper() != case.operation.method.upper():
        return None  # another verb: 405
    reason = _invalid_input(case, request)
    if reason is not None and response.status_code not in REJECTED:
        raise AssertionError(
            f"{reason}, yet the answer is {response.status_code} (expected 400, or 401)"
        )
    return None


@schemathesis.hook
def filter_failure(context, failure, case, response):
    """Keeps every finding but a rejection of a request that, as sent, breaks the
    document (ST202), and an acceptance of one that, as sent, keeps the document's
    words (ST201)."""
    code = getattr(failure, "code", None)
    if code not in ("ST201", "ST202"):
        return True
    request = response.request
    if request.method.upper() != case.operation.method.upper():
        return True
    invalid = _invalid_input(case, request) is not None
    return not invalid if code == "ST202" else invalid
