"""The Python client that openapi-generator makes from the service's own /openapi.json.

run.sh generates the package docflow_openapi (`generate -g python`) from the
document of the running service at DOCFLOW_URL, installs it in a virtualenv and
runs this file. Every one of the eleven legacy operations is called through the
generated API classes with nothing set by hand but the host and the
credentials (the document's ServiceAuth scheme, through the generated
Configuration's api_key / api_key_prefix):

- what the client sends: Accept and Content-Type come from the document's
  content types (application/json answers, problem+json errors), recorded at
  the client's transport (RESTClientObject.request);
- answers are the generated models, with the types the document gives
  (counts are ints, never bools; index keys are strings; IsSubscribed is the
  string "true" or "false", as legacy JSON writes it);
- both listings are walked to the end: GetCounteragentsFromGroup by passing
  AfterIndexKey back until the empty page, GetCounteragentGroups page by page;
  TotalCount equals the number of items walked;
- 400, 401, 403, 404 and 409 raise the generator's exception classes with the
  status, the X-Service-ErrorCode header, and the problem+json body read into
  the generated Problem model (typed attributes, not a string).

The tests leave the demo data as they found it (the TypeScript client runs
against the same service next): what they restore they delete again, what
they create they delete, subscriptions are set back.
"""
import json
import os
import urllib.request
import uuid
from dataclasses import dataclass

import docflow_openapi as api
import pytest
from docflow_openapi import exceptions

BASE = os.environ["DOCFLOW_URL"]
API_KEY = "demo-api-key"
BOX = "11111111-1111-4111-8111-111111111111"
OTHER_BOX = "22222222-2222-4222-8222-222222222222"  # no such box: a 403, as for a box of others
ADMIN = ("aaaaaaaa-0000-4000-8000-000000000001", "demo-admin-token")
CLERK = ("aaaaaaaa-0000-4000-8000-000000000002", "demo-clerk-token")
NO_EMPLOYEE = "aaaaaaaa-0000-4000-8000-000000000099"
SALES = "dddddddd-0000-4000-8000-000000000001"
DEFAULT_GROUP = "00000000-0000-0000-0000-000000000000"
PARTNERS = "99999999-0000-4000-8000-000000000001"  # 8 members, 6 of them IsMyCounteragent
EMPTY_GROUP = "99999999-0000-4000-8000-000000000002"  # "New suppliers": no members, Sales only
NO_GROUP = "99999999-0000-4000-8000-000000000099"
DELETED_MESSAGE = "eeeeeeee-0000-4000-8000-000000000001"
DELETED_TEMPLATE = "eeeeeeee-0000-4000-8000-000000000002"  # its document lies in Accounting
LIVE_MESSAGE = "eeeeeeee-0000-4000-8000-000000000003"
ACCOUNTING_DOCUMENT = "ffffffff-0000-4000-8000-000000000032"  # of LIVE_MESSAGE
NO_MESSAGE = "eeeeeeee-0000-4000-8000-000000000099"
# IsMyCounteragent in the default group; the TypeScript test moves …11.
MOVABLE = "cccccccc-0000-4000-8000-000000000010"
INVITES_ME = "cccccccc-0000-4000-8000-000000000004"  # status InvitesMe: cannot be moved (409)
NO_COUNTERAGENT = "cccccccc-0000-4000-8000-000000000099"
BLANK = " "  # passes the generated client's checks (a non-empty string), a 400 at the server
# The shape of an AfterIndexKey, never issued by the server: a 400.
FORGED_KEY = "A" * 24
CATALOG = [
    "CounteragentInvitation", "CounteragentInvitationResponses", "NewIncomingDocuments",
    "CounteragentSignatures", "CounteragentSignatureDenials", "ResolutionRequests",
    "ResolutionResults", "EmployeeRequests", "News", "ChatMessages",
]


@dataclass
class Sent:
    method: str
    url: str
    headers: dict
    body: object


class Client:
    """The generated API classes on one ApiClient, and what it sent."""

    def __init__(self, token: str | None = ADMIN[1]):
        config = api.Configuration(host=BASE)
        if token is not None:
            # The document's ServiceAuth scheme: apiKey in the Authorization header.
            config.api_key["ServiceAuth"] = f"svcauth_api_client_id={API_KEY}, svcauth_token={token}"
            config.api_key_prefix["ServiceAuth"] = "ServiceAuth"
        self.api_client = api.ApiClient(config)
        self.sent: list[Sent] = []
        transport = self.api_client.rest_client.request

        def request(method, url, headers=None, body=None, post_params=None, _request_timeout=None):
            self.sent.append(Sent(method, url, dict(headers or {}), body))
            return transport(method, url, headers=headers, body=body, post_params=post_params,
                             _request_timeout=_request_timeout)

        self.api_client.rest_client.request = request
        self.subscriptions = api.SubscriptionServiceApi(self.api_client)
        self.documents = api.DocumentServiceApi(self.api_client)
        self.counteragents = api.CounteragentServiceApi(self.api_client)

    @property
    def last(self) -> Sent:
        return self.sent[-1]


@pytest.fixture
def admin():
    return Client(ADMIN[1])


@pytest.fixture
def clerk():
    return Client(CLERK[1])


def expect_error(call, status: int, error_code: str):
    """The call raises the generator's exception class for `status`, carrying status, header and a typed Problem."""
    cls = {
        400: exceptions.BadRequestException,
        401: exceptions.UnauthorizedException,
        403: exceptions.ForbiddenException,
        404: exceptions.NotFoundException,
        409: exceptions.ConflictException,
    }[status]
    with pytest.raises(exceptions.ApiException) as caught:
        call()
    err = caught.value
    assert type(err) is cls, f"{type(err).__name__} raised for {status}, expected {cls.__name__}: {err}"
    assert err.status == status
    assert err.headers["X-Service-ErrorCode"] == error_code
    assert err.headers["Content-Type"] == "application/problem+json"
    problem = err.data
    assert isinstance(problem, api.Problem), f"the body was not read as Problem: {problem!r} (body {err.body!r})"
    assert type(problem.status) is int and problem.status == status
    assert problem.error_code == error_code
    assert problem.type == "about:blank"
    assert isinstance(problem.title, str) and problem.title
    assert isinstance(problem.detail, str) and problem.detail
    if status == 401:
        assert err.headers["WWW-Authenticate"].startswith("ServiceAuth ")
    return problem


# ------------------------------------------------------------------ what the client sends


def test_the_document_names_the_service_as_its_server():
    assert api.Configuration().host == BASE  # servers[0].url: the URL the document was fetched from


def test_sends_json_accept_and_content_type_by_itself(admin):
    res = admin.subscriptions.get_subscriptions_with_http_info(box_id=BOX, user_id=CLERK[0])
    assert res.status_code == 200
    headers = {name.lower(): value for name, value in res.headers.items()}  # a plain dict here
    assert headers["content-type"] == "application/json; charset=utf-8"  # not protobuf
    assert isinstance(res.data, api.DocflowLegacyEmployeeSubscriptions)
    sent = admin.last
    assert sent.method == "GET"
    assert sent.headers["Accept"] == "application/json"
    assert "Content-Type" not in sent.headers
    assert sent.headers["Authorization"] == (
        f"ServiceAuth svcauth_api_client_id={API_KEY}, svcauth_token={ADMIN[1]}"
    )

    admin.subscriptions.update_subscriptions(
        box_id=BOX, user_id=CLERK[0], docflow_legacy_subscriptions_to_update=api.DocflowLegacySubscriptionsToUpdate()
    )
    sent = admin.last
    assert sent.headers["Accept"] == "application/json"
    assert sent.headers["Content-Type"] == "application/json"
    assert sent.body == {}  # the empty message: nothing changes

    # No 200 body: the only JSON type left is problem+json, for the errors.
    with pytest.raises(exceptions.ConflictException):
        admin.documents.restore(box_id=BOX, message_id=LIVE_MESSAGE)
    sent = admin.last
    assert sent.method == "POST"
    assert sent.headers["Accept"] == "application/problem+json"
    assert "Content-Type" not in sent.headers and sent.body is None


@pytest.mark.parametrize(
    ("model", "fields"),
    [
        ("DocflowLegacyEmployeeSubscriptions", ["subscriptions"]),
        ("DocflowLegacySubscription", ["id", "is_subscribed"]),
        ("DocflowLegacyCounteragentFromGroupResponse", ["counteragent_box_id", "total_count"]),
        ("DocflowLegacyCounteragentGroup", ["counteragent_group_id", "name"]),
        ("DocflowLegacyDepartmentsInGroup", ["department_ids"]),
        ("DocflowLegacyCounteragentGroupsList", ["groups", "total_count"]),
        ("Problem", ["type", "title", "status", "detail", "error_code"]),
    ],
)
def test_fields_always_written_are_required(model, fields):
    required = {name for name, field in getattr(api, model).model_fields.items() if field.is_required()}
    assert required == set(fields)


# ------------------------------------------------------------------ subscriptions


def test_get_subscriptions(admin):
    res = admin.subscriptions.get_subscriptions(box_id=BOX, user_id=CLERK[0])
    assert isinstance(res, api.DocflowLegacyEmployeeSubscriptions)
    assert [s.id for s in res.subscriptions] == CATALOG
    for s in res.subscriptions:
        assert isinstance(s, api.DocflowLegacySubscription)
        assert type(s.is_subscribed) is str and s.is_subscribed in ("true", "false")
    flags = {s.id: s.is_subscribed == "true" for s in res.subscriptions}
    assert flags["News"] is False and flags["ChatMessages"] is False and flags["EmployeeRequests"] is True


def test_update_subscriptions_and_back(clerk):
    def update(**flags):
        body = api.DocflowLegacySubscriptionsToUpdate(
            Subscriptions=[api.DocflowLegacySubscriptionInput(Id=k, IsSubscribed=v) for k, v in flags.items()]
        )
        return clerk.subscriptions.update_subscriptions(
            box_id=BOX, user_id=CLERK[0], docflow_legacy_subscriptions_to_update=body
        )

    res = update(News="true", ResolutionRequests="false")
    assert isinstance(res, api.DocflowLegacyEmployeeSubscriptions)
    assert clerk.last.body == {
        "Subscriptions": [{"Id": "News", "IsSubscribed": "true"}, {"Id": "ResolutionRequests", "IsSubscribed": "false"}]
    }
    flags = {s.id: s.is_subscribed for s in res.subscriptions}
    assert (flags["News"], flags["ResolutionRequests"], flags["ChatMessages"]) == ("true", "false", "false")
    res = update(News="false", ResolutionRequests="true")
    flags = {s.id: s.is_subscribed for s in res.subscriptions}
    assert (flags["News"], flags["ResolutionRequests"]) == ("false", "true")


# ------------------------------------------------------------------ documents


def test_restore_and_delete_a_message(admin):
    assert admin.documents.restore(box_id=BOX, message_id=DELETED_MESSAGE) is None
    expect_error(lambda: admin.documents.restore(box_id=BOX, message_id=DELETED_MESSAGE), 409, "Restore.AlreadyRestored")
    assert admin.documents.delete(box_id=BOX, message_id=DELETED_MESSAGE) is None
    expect_error(lambda: admin.documents.delete(box_id=BOX, message_id=DELETED_MESSAGE), 409, "Delete.AlreadyDeleted")


# ------------------------------------------------------------------ counteragents


def walk(client: Client, group: str, count: int):
    """Every page of GetCounteragentsFromGroup, AfterIndexKey passed back until the empty page."""
    pages, key = [], None
    while True:
        page = client.counteragents.get_counteragents_from_group(
            box_id=BOX, counteragent_group_id=group, count=count, after_index_key=key
        )
        assert isinstance(page, api.DocflowLegacyCounteragentFromGroupResponse)
        assert type(page.total_count) is int
        assert isinstance(page.counteragent_box_id, list)
        assert all(type(box) is str for box in page.counteragent_box_id)
        assert len(page.counteragent_box_id) <= count
        pages.append(page)
        if not page.counteragent_box_id:
            assert page.after_index_key is None, "an empty page has no AfterIndexKey"
            return pages
        assert type(page.after_index_key) is str and len(page.after_index_key) >= 22
        assert len(pages) <= 50, "the walk does not end"
        key = page.after_index_key


@pytest.mark.parametrize(("group", "count", "total"), [(PARTNERS, 4, 6), (PARTNERS, 1, 6), (EMPTY_GROUP, 10, 0)])
def test_get_counteragents_from_group_walks_to_the_end(admin, group, count, total):
    pages = walk(admin, group, count)
    boxes = [box for page in pages for box in page.counteragent_box_id]
    assert {page.total_count for page in pages} == {total}
    assert len(boxes) == total == len(set(boxes))
    assert len(pages) == -(-total // count) + 1  # full pages, then the empty one
    # The query carries the key exactly as the page gave it.
    if total > count:
        assert f"afterIndexKey={pages[0].after_index_key}" in admin.sent[1].url


def test_get_counteragents_from_the_default_group(admin):
    boxes = [box for page in walk(admin, DEFAULT_GROUP, 2) for box in page.counteragent_box_id]
    assert MOVABLE in boxes and "cccccccc-0000-4000-8000-000000000012" not in boxes  # IsInvitedByMe


def test_counteragent_group_lifecycle(admin):
    name = f"OpenAPI Python {uuid.uuid4().hex[:8]}"
    created = admin.counteragents.create_counteragent_group(
        box_id=BOX,
        docflow_legacy_counteragent_group_to_create=api.DocflowLegacyCounteragentGroupToCreate(
            Name=f"  {name} ", Departments=api.DocflowLegacyDepartmentsInGroupInput(DepartmentIds=[SALES, SALES])
        ),
    )
    assert admin.last.headers["Content-Type"] == "application/json"
    assert isinstance(created, api.DocflowLegacyCounteragentGroup)
    group = created.counteragent_group_id
    assert type(group) is str and uuid.UUID(group).version == 4
    assert created.name == name
    assert created.departments.department_ids == [SALES]

    got = admin.counteragents.get_counteragent_group(box_id=BOX, counteragent_group_id=group)
    assert (got.counteragent_group_id, got.name, got.departments.department_ids) == (group, name, [SALES])

    assert admin.counteragents.add_counteragent_to_group(
        box_id=BOX, counteragent_box_id=MOVABLE, counteragent_group_id=group
    ) is None
    pages = walk(admin, group, 10)
    assert pages[0].counteragent_box_id == [MOVABLE] and pages[0].total_count == 1

    updated = admin.counteragents.update_counteragent_group(
        box_id=BOX,
        counteragent_group_id=group,
        docflow_legacy_counteragent_group_to_update=api.DocflowLegacyCounteragentGroupToUpdate(
            Name=f"{name} renamed",
            GroupDepartments=api.DocflowLegacyCounteragentGroupDepartmentPatch(AnyDepartment="true"),
        ),
    )
    assert admin.last.body == {"Name": f"{name} renamed", "GroupDepartments": {"AnyDepartment": "true"}}
    assert isinstance(updated, api.DocflowLegacyCounteragentGroup)
    assert updated.name == f"{name} renamed" and updated.departments is None  # any department

    updated = admin.counteragents.update_counteragent_group(
        box_id=BOX,
        counteragent_group_id=group,
        docflow_legacy_counteragent_group_to_update=api.DocflowLegacyCounteragentGroupToUpdate(
            GroupDepartments=api.DocflowLegacyCounteragentGroupDepartmentPatch(
                AnyDepartment="false", Departments=api.DocflowLegacyDepartmentsInGroupInput(DepartmentIds=[SALES])
            ),
        ),
    )
    assert updated.name == f"{name} renamed" and updated.departments.department_ids == [SALES]

    # GetCounteragentGroups, one group a page, to the empty page past the end.
    walked, page_no = [], 1
    while True:
        listed = admin.counteragents.get_counteragent_groups(box_id=BOX, page=page_no, count=1)
        assert isinstance(listed, api.DocflowLegacyCounteragentGroupsList)
        assert type(listed.total_count) is int
        if not listed.groups:
            break
        assert len(listed.groups) == 1 and isinstance(listed.groups[0], api.DocflowLegacyCounteragentGroup)
        walked.append(listed.groups[0].counteragent_group_id)
        page_no += 1
        assert page_no <= 100, "the walk does not end"
    assert listed.total_count == len(walked) == len(set(walked))
    assert {PARTNERS, EMPTY_GROUP, group} <= set(walked)
    everything = admin.counteragents.get_counteragent_groups(box_id=BOX)
    assert [g.counteragent_group_id for g in everything.groups] == walked

    assert admin.counteragents.delete_counteragent_group(box_id=BOX, counteragent_group_id=group) is None
    expect_error(
        lambda: admin.counteragents.get_counteragent_group(box_id=BOX, counteragent_group_id=group),
        404, "CounteragentGroup.NotFound",
    )
    # Its member went back to the default group, last in line.
    boxes = [box for page in walk(admin, DEFAULT_GROUP, 10) for box in page.counteragent_box_id]
    assert boxes[-1] == MOVABLE


# ------------------------------------------------------------------ errors of every operation

def calls(c: Client):
    """Each operation by name, as a function of the arguments that vary."""
    s, d, g = c.subscriptions, c.documents, c.counteragents
    return {
        "GetSubscriptions": lambda box=BOX, user=CLERK[0]: s.get_subscriptions(box_id=box, user_id=user),
        "UpdateSubscriptions": lambda box=BOX, user=CLERK[0], subs=(): s.update_subscriptions(
            box_id=box, user_id=user,
            docflow_legacy_subscriptions_to_update=api.DocflowLegacySubscriptionsToUpdate(
                Subscriptions=[api.DocflowLegacySubscriptionInput(Id=i, IsSubscribed=v) for i, v in subs]
            ),
        ),
        "Restore": lambda box=BOX, message=DELETED_TEMPLATE, doc=None: d.restore(
            box_id=box, message_id=message, document_id=doc
        ),
        "Delete": lambda box=BOX, message=LIVE_MESSAGE, doc=ACCOUNTING_DOCUMENT: d.delete(
            box_id=box, message_id=message, document_id=doc
        ),
        "GetCounteragentsFromGroup": lambda box=BOX, group=PARTNERS, key=None: g.get_counteragents_from_group(
            box_id=box, counteragent_group_id=group, after_index_key=key
        ),
        "CreateCounteragentGroup": lambda box=BOX, name="OpenAPI never created", deps=None: g.create_counteragent_group(
            box_id=box,
            docflow_legacy_counteragent_group_to_create=api.DocflowLegacyCounteragentGroupToCreate(
                Name=name, Departments=None if deps is None else api.DocflowLegacyDepartmentsInGroupInput(DepartmentIds=deps)
            ),
        ),
        "UpdateCounteragentGroup": lambda box=BOX, group=EMPTY_GROUP, name="New suppliers": g.update_counteragent_group(
            box_id=box, counteragent_group_id=group,
            docflow_legacy_counteragent_group_to_update=api.DocflowLegacyCounteragentGroupToUpdate(Name=name),
        ),
        "DeleteCounteragentGroup": lambda box=BOX, group=NO_GROUP: g.delete_counteragent_group(
            box_id=box, counteragent_group_id=group
        ),
        "GetCounteragentGroup": lambda box=BOX, group=PARTNERS: g.get_counteragent_group(
            box_id=box, counteragent_group_id=group
        ),
        "GetCounteragentGroups": lambda box=BOX: g.get_counteragent_groups(box_id=box),
        "AddCounteragentToGroup": lambda box=BOX, who=INVITES_ME, group=EMPTY_GROUP: g.add_counteragent_to_group(
            box_id=box, counteragent_box_id=who, counteragent_group_id=group
        ),
    }


OPERATIONS = [
    "GetSubscriptions", "UpdateSubscriptions", "Restore", "Delete", "GetCounteragentsFromGroup",
    "CreateCounteragentGroup", "UpdateCounteragentGroup", "DeleteCounteragentGroup", "GetCounteragentGroup",
    "GetCounteragentGroups", "AddCounteragentToGroup",
]

# (operation, who calls, arguments, status, X-Service-ErrorCode): every operation's 400, 401 and 403,
# and its 404 and 409 where it has them.
ERRORS = [
    ("GetSubscriptions", "admin", dict(user=BLANK), 400, "Http.BadRequest"),
    ("UpdateSubscriptions", "admin", dict(subs=[("News", "true"), ("News", "false")]), 400, "Subscriptions.DuplicateId"),
    ("Restore", "admin", dict(message=BLANK), 400, "Http.BadRequest"),
    ("Delete", "admin", dict(message=BLANK, doc=None), 400, "Http.BadRequest"),
    ("GetCounteragentsFromGroup", "admin", dict(key=FORGED_KEY), 400, "Http.BadRequest"),
    ("CreateCounteragentGroup", "admin", dict(deps=["no-such-department"]), 400, "CounteragentGroup.UnknownDepartment"),
    ("UpdateCounteragentGroup", "admin", dict(group=DEFAULT_GROUP, name="Default renamed"), 400, "CounteragentGroup.DefaultGroup"),
    ("DeleteCounteragentGroup", "admin", dict(group=DEFAULT_GROUP), 400, "CounteragentGroup.DefaultGroup"),
    ("GetCounteragentGroup", "admin", dict(group=BLANK), 400, "Http.BadRequest"),
    ("GetCounteragentGroups", "admin", dict(box=BLANK), 400, "Http.BadRequest"),
    ("AddCounteragentToGroup", "admin", dict(who=BLANK), 400, "Http.BadRequest"),
    *[(op, "nobody", {}, 401, "Http.Unauthorized") for op in OPERATIONS],
    *[(op, "admin", dict(box=OTHER_BOX), 403, "Http.Forbidden") for op in OPERATIONS],
    ("GetSubscriptions", "clerk", dict(user=ADMIN[0]), 403, "Http.Forbidden"),
    ("UpdateSubscriptions", "clerk", dict(user=ADMIN[0]), 403, "Http.Forbidden"),
    ("Restore", "clerk", {}, 403, "Document.AccessDenied"),
    ("Delete", "clerk", {}, 403, "Document.AccessDenied"),
    *[(op, "clerk", {}, 403, "Http.Forbidden") for op in OPERATIONS[4:]],
    ("GetSubscriptions", "admin", dict(user=NO_EMPLOYEE), 404, "Employee.NotFound"),
    ("UpdateSubscriptions", "admin", dict(user=NO_EMPLOYEE), 404, "Employee.NotFound"),
    ("Restore", "admin", dict(message=NO_MESSAGE), 404, "Message.NotFound"),
    ("Delete", "admin", dict(message=NO_MESSAGE, doc=None), 404, "Message.NotFound"),
    ("GetCounteragentsFromGroup", "admin", dict(group=NO_GROUP), 404, "CounteragentGroup.NotFound"),
    ("UpdateCounteragentGroup", "admin", dict(group=NO_GROUP), 404, "CounteragentGroup.NotFound"),
    ("DeleteCounteragentGroup", "admin", {}, 404, "CounteragentGroup.NotFound"),
    ("GetCounteragentGroup", "admin", dict(group=NO_GROUP), 404, "CounteragentGroup.NotFound"),
    ("AddCounteragentToGroup", "admin", dict(who=NO_COUNTERAGENT), 404, "Counteragent.NotFound"),
    ("Restore", "admin", dict(message=LIVE_MESSAGE), 409, "Restore.AlreadyRestored"),
    ("Delete", "admin", dict(message=DELETED_MESSAGE, doc=None), 409, "Delete.AlreadyDeleted"),
    ("CreateCounteragentGroup", "admin", dict(name="PARTNERS"), 409, "CounteragentGroup.DuplicateName"),
    ("UpdateCounteragentGroup", "admin", dict(name="partners"), 409, "CounteragentGroup.DuplicateName"),
    ("AddCounteragentToGroup", "admin", {}, 409, "Counteragent.NotMyCounteragent"),
]


@pytest.mark.parametrize(
    ("operation", "who", "args", "status", "error_code"),
    ERRORS,
    ids=[f"{e[3]}-{e[0]}-{e[1]}" for e in ERRORS],
)
def test_error(operation, who, args, status, error_code):
    client = Client({"admin": ADMIN[1], "clerk": CLERK[1], "nobody": None}[who])
    expect_error(lambda: calls(client)[operation](**args), status, error_code)


def test_every_operation_is_covered():
    with urllib.request.urlopen(f"{BASE}/openapi.json") as res:
        paths = json.load(res)["paths"]
    # The legacy operations here; the resource API (/v1/) by test_resource_api_scenario.
    assert sorted(p.lstrip("/") for p in paths if not p.startswith("/v1/")) == sorted(OPERATIONS)
    assert sorted(calls(Client())) == sorted(OPERATIONS)
    for op in OPERATIONS:
        statuses = {e[3] for e in ERRORS if e[0] == op}
        declared = {int(s) for s in next(iter(paths[f"/{op}"].values()))["responses"] if s in ("400", "401", "403", "404", "409")}
        assert statuses == declared, f"{op}: the document declares {sorted(declared)}, the tests cover {sorted(statuses)}"


# ------------------------------------------------------------------ the resource API (/v1/, docs/api.md §3.1)


def rpc_status(err: exceptions.ApiException) -> dict:
    """The google.rpc.Status of a resource API error (AIP-193): {"error": {...}}."""
    assert err.headers["Content-Type"].startswith("application/json")
    return json.loads(err.body)["error"]


def test_resource_api_scenario(admin):
    """Create a group (and retry it), page through counteragents, update with a mask and an ETag, lose a race on a stale one, restore a message."""
    v1 = api.CounteragentServiceV1Api(admin.api_client)
    documents = api.DocumentServiceV1Api(admin.api_client)

    # Create with a request id (AIP-155): 201, Location names the group, its ETag.
    name = f"Resource API {uuid.uuid4().hex[:8]}"
    request_id = str(uuid.uuid4())
    create = lambda: v1.create_counteragent_group_v1_with_http_info(  # noqa: E731
        box_id=BOX,
        request_id=request_id,
        docflow_legacy_counteragent_group_to_create_json=api.DocflowLegacyCounteragentGroupToCreateJson(Name=name),
    )
    created = create()
    assert created.status_code == 201
    group = created.data.counteragent_group_id
    headers = {k.lower(): v for k, v in created.headers.items()}
    assert headers["location"] == f"/v1/boxes/{BOX}/counteragentGroups/{group}"
    first_tag = headers["etag"]
    # A retry (the answer lost on the way): the same group, not a second one.
    retried = create()
    assert retried.status_code == 201 and retried.data.counteragent_group_id == group
    assert [g.name for g in v1.get_counteragent_groups_v1(box_id=BOX).groups].count(name) == 1

    # Page through a group's counteragents (AIP-158): each next_page_token passed back, to an empty one.
    boxes, token = [], None
    for _ in range(10):
        page = v1.get_counteragents_from_group_v1(
            box_id=BOX, counteragent_group_id=PARTNERS, page_size=4, page_token=token
        )
        boxes += page.counteragent_box_id or []
        token = page.next_page_token
        if not token:
            break
    assert token is None  # the last page has none (proto3 JSON leaves "" out)
    assert len(boxes) == len(set(boxes)) == page.total_count == 6

    # Move a counteragent in (:add), and see it on the new group's page.
    v1.add_counteragent_to_group_v1(box_id=BOX, counteragent_group_id=group, counteragent_box_id=MOVABLE)
    assert v1.get_counteragents_from_group_v1(box_id=BOX, counteragent_group_id=group).counteragent_box_id == [MOVABLE]

    # Update with the ETag: 200, the new ETag, the one a GET then gives.
    got = v1.get_counteragent_group_v1_with_http_info(box_id=BOX, counteragent_group_id=group)
    tag = {k.lower(): v for k, v in got.headers.items()}["etag"]
    assert tag == first_tag
    # The mask (AIP-134) names Name only: the departments in the body are not written.
    renamed = v1.update_counteragent_group_v1_with_http_info(
        box_id=BOX,
        counteragent_group_id=group,
        if_match=tag,
        update_mask="name",
        docflow_legacy_counteragent_group_to_update_json=api.DocflowLegacyCounteragentGroupToUpdateJson(
            Name=f"{name} 2",
            GroupDepartments=api.DocflowLegacyCounteragentGroupDepartmentPatchJson(
                AnyDepartment=False,
                Departments=api.DocflowLegacyDepartmentsInGroupInputJson(DepartmentIds=[SALES]),
            ),
        ),
    )
    assert renamed.status_code == 200 and renamed.data.name == f"{name} 2"
    assert renamed.data.departments is None
    new_tag = {k.lower(): v for k, v in renamed.headers.items()}["etag"]
    assert new_tag != tag

    # A writer still holding the old ETag loses: 412, FAILED_PRECONDITION, nothing written.
    with pytest.raises(exceptions.ApiException) as caught:
        v1.update_counteragent_group_v1(
            box_id=BOX,
            counteragent_group_id=group,
            if_match=tag,
            docflow_legacy_counteragent_group_to_update_json=api.DocflowLegacyCounteragentGroupToUpdateJson(Name=f"{name} 3"),
        )
    assert caught.value.status == 412
    status = rpc_status(caught.value)
    assert status["status"] == "FAILED_PRECONDITION"
    assert status["details"][0]["reason"] == "ETAG_MISMATCH"
    assert status["details"][0]["metadata"]["errorCode"] == "CounteragentGroup.EtagMismatch"
    assert v1.get_counteragent_group_v1(box_id=BOX, counteragent_group_id=group).name == f"{name} 2"

    # Delete with a stale ETag: 412; with the current one: gone, its member back in the default group.
    with pytest.raises(exceptions.ApiException) as caught:
        v1.delete_counteragent_group_v1(box_id=BOX, counteragent_group_id=group, if_match=tag)
    assert caught.value.status == 412
    v1.delete_counteragent_group_v1(box_id=BOX, counteragent_group_id=group, if_match=new_tag)
    with pytest.raises(exceptions.NotFoundException) as caught:
        v1.get_counteragent_group_v1(box_id=BOX, counteragent_group_id=group)
    assert rpc_status(caught.value)["details"][0]["metadata"]["errorCode"] == "CounteragentGroup.NotFound"
    default = [b for page in walk(admin, DEFAULT_GROUP, 50) for b in page.counteragent_box_id]
    assert MOVABLE in default

    # Restore a deleted message, and delete it again (the demo data as it was).
    documents.restore_message_v1(box_id=BOX, message_id=DELETED_MESSAGE)
    with pytest.raises(exceptions.ConflictException) as caught:
        documents.restore_message_v1(box_id=BOX, message_id=DELETED_MESSAGE)
    assert rpc_status(caught.value)["details"][0]["metadata"]["errorCode"] == "Restore.AlreadyRestored"
    documents.delete_message_v1(box_id=BOX, message_id=DELETED_MESSAGE)
