"""A Python client generated from proto/ with protoc 3.21 talks to the service.

The code is generated with the Python recipe of docs/clients.md: our own files only
(proto/docflow), proto/third_party on the import path; google.rpc comes from
googleapis-common-protos (through grpcio-status) and grpc.health.v1 from
grpcio-health-checking, never from our copies.

Python's protobuf runtime (4.21, upb) refuses to serialize a proto2 message
that lacks a required field, but parses one and says so only through
IsInitialized(): every answer below is checked with it, which proves that
required fields (IsSubscribed, TotalCount) are on the wire, false or 0
included.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import uuid
import urllib.error
import urllib.request
from pathlib import Path

import grpc
import pytest

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
API_KEY = "demo-api-key"
BOX = "11111111-1111-4111-8111-111111111111"
EXPIRED_BOX = "33333333-3333-4333-8333-333333333333"
ADMIN = ("aaaaaaaa-0000-4000-8000-000000000001", "demo-admin-token")
CLERK = ("aaaaaaaa-0000-4000-8000-000000000002", "demo-clerk-token")
SALES = "dddddddd-0000-4000-8000-000000000001"
DEFAULT_GROUP = "00000000-0000-0000-0000-000000000000"
# IsMyCounteragent members of the demo box, one per test that moves one.
COUNTERAGENTS = ["cccccccc-0000-4000-8000-000000000010", "cccccccc-0000-4000-8000-000000000011"]


def auth(token: str) -> str:
    return f"ServiceAuth svcauth_api_client_id={API_KEY}, svcauth_token={token}"


def generate(out: str) -> int:
    """The Python recipe: python -m grpc_tools.protoc -I proto -I proto/third_party ... proto/docflow/**.proto"""
    from grpc_tools import protoc

    ours = [str(p.relative_to(ROOT / "proto")) for p in sorted((ROOT / "proto" / "docflow").rglob("*.proto"))]
    include = Path(protoc.__file__).parent / "_proto"  # google/protobuf/*.proto, as python -m grpc_tools.protoc adds it
    return protoc.main([
        "protoc", f"-I{ROOT / 'proto'}", f"-I{ROOT / 'proto' / 'third_party'}", f"-I{include}",
        f"--python_out={out}", f"--pyi_out={out}", f"--grpc_python_out={out}", *ours,
    ])


@pytest.fixture(scope="session")
def generated():
    out = tempfile.mkdtemp(prefix="docflow-py-")
    assert generate(out) == 0, "protoc 3.21 could not compile proto/docflow"
    assert not (Path(out) / "google").exists() and not (Path(out) / "grpc").exists(), "upstream files were generated"
    return out


@pytest.fixture(scope="session")
def pb(generated):
    sys.path.insert(0, generated)
    from docflow.api.v1 import counteragents_pb2, counteragents_pb2_grpc
    from docflow.api.v1 import subscriptions_pb2, subscriptions_pb2_grpc
    from docflow.legacy import counteragent_groups_pb2
    from docflow.legacy import subscriptions_pb2 as legacy_pb2
    from google.rpc import error_details_pb2

    return {
        "api": subscriptions_pb2,
        "stub": subscriptions_pb2_grpc,
        "legacy": legacy_pb2,
        "details": error_details_pb2,
        "counteragents": counteragents_pb2,
        "counteragents_stub": counteragents_pb2_grpc,
        "groups": counteragent_groups_pb2,
    }


@pytest.fixture(scope="session")
def server():
    # The embedded database and the demo data, whatever the caller's environment says.
    env = {k: v for k, v in os.environ.items() if k not in ("MONGODB_URI", "MONGODB_DB", "SEED_FILE")}
    env.update({"HOST": "127.0.0.1", "PORT": "0", "LOG_LEVEL": "warn"})
    proc = subprocess.Popen(
        ["node", "--import", "tsx", "src/main.ts"], cwd=ROOT, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    base = None
    deadline = time.time() + 30
    while time.time() < deadline and base is None:
        line = proc.stderr.readline()
        match = re.search(r"listening on (http://\S+)", line)
        if match:
            base = match.group(1)
    assert base, "the service did not start"
    yield base
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0


def stub(pb, base):
    channel = grpc.insecure_channel(base.removeprefix("http://"))
    return pb["stub"].SubscriptionServiceStub(channel)


def test_grpc_get_subscriptions(pb, server):
    res = stub(pb, server).GetSubscriptions(
        pb["api"].GetSubscriptionsRequest(box_id=BOX, user_id=CLERK[0]),
        metadata=[("authorization", auth(ADMIN[1]))],
    )
    assert res.IsInitialized()
    assert len(res.Subscriptions) == 10
    assert {s.Id: s.IsSubscribed for s in res.Subscriptions}["News"] is False
    assert all(s.HasField("IsSubscribed") for s in res.Subscriptions)


def test_grpc_update_subscriptions(pb, server):
    changes = pb["legacy"].SubscriptionsToUpdate(
        Subscriptions=[pb["legacy"].Subscription(Id="ResolutionRequests", IsSubscribed=False)]
    )
    res = stub(pb, server).UpdateSubscriptions(
        pb["api"].UpdateSubscriptionsRequest(box_id=BOX, user_id=CLERK[0], subscriptions=changes),
        metadata=[("authorization", auth(CLERK[1]))],
    )
    assert res.IsInitialized()
    assert {s.Id: s.IsSubscribed for s in res.Subscriptions}["ResolutionRequests"] is False


def test_legacy_protobuf_is_a_valid_proto2_message(pb, server):
    # What an existing SDK does: no Accept, no Content-Type, protobuf back.
    req = urllib.request.Request(
        f"{server}/GetSubscriptions?boxId={BOX}&userId={CLERK[0]}",
        headers={"Authorization": auth(ADMIN[1])},
    )
    with urllib.request.urlopen(req) as res:
        assert res.status == 200
        assert res.headers["Content-Type"] == "application/x-protobuf"
        body = res.read()
    msg = pb["legacy"].EmployeeSubscriptions.FromString(body)
    assert msg.IsInitialized()  # every required field is there
    assert [s.Id for s in msg.Subscriptions][0] == "CounteragentInvitation"


def test_legacy_protobuf_request_body(pb, server):
    body = pb["legacy"].SubscriptionsToUpdate(
        Subscriptions=[pb["legacy"].Subscription(Id="EmployeeRequests", IsSubscribed=False)]
    ).SerializeToString()
    req = urllib.request.Request(
        f"{server}/UpdateSubscriptions?boxId={BOX}&userId={CLERK[0]}",
        data=body, method="POST", headers={"Authorization": auth(CLERK[1])},
    )
    with urllib.request.urlopen(req) as res:
        msg = pb["legacy"].EmployeeSubscriptions.FromString(res.read())
    assert msg.IsInitialized()
    assert {s.Id: s.IsSubscribed for s in msg.Subscriptions}["EmployeeRequests"] is False


def test_grpc_subscription_ended_carries_error_info(pb, server):
    from grpc_status import rpc_status

    with pytest.raises(grpc.RpcError) as caught:
        stub(pb, server).GetSubscriptions(
            pb["api"].GetSubscriptionsRequest(box_id=EXPIRED_BOX, user_id=ADMIN[0]),
            metadata=[("authorization", auth(ADMIN[1]))],
        )
    err = caught.value
    assert err.code() == grpc.StatusCode.FAILED_PRECONDITION
    status = rpc_status.from_call(err)  # google.rpc.Status from grpc-status-details-bin
    info = pb["details"].ErrorInfo()
    assert status.details[0].Unpack(info)
    assert info.reason == "API_SUBSCRIPTION_ENDED"
    assert info.metadata["errorCode"] == "Http.PaymentRequired"


def test_health_with_upstream_types(server):
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    channel = grpc.insecure_channel(server.removeprefix("http://"))
    res = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""))
    assert res.status == health_pb2.HealthCheckResponse.SERVING


def test_required_fields_are_checked_before_sending(pb, server):
    from google.protobuf.message import EncodeError

    incomplete = pb["legacy"].Subscription(Id="News")
    assert not incomplete.IsInitialized()
    with pytest.raises(EncodeError, match="IsSubscribed"):
        incomplete.SerializeToString()
    with pytest.raises(EncodeError, match="IsSubscribed"):  # upb copies a message given to a constructor
        pb["legacy"].SubscriptionsToUpdate(Subscriptions=[incomplete])
    req = pb["api"].UpdateSubscriptionsRequest(box_id=BOX, user_id=CLERK[0])
    req.subscriptions.Subscriptions.add(Id="News")
    with pytest.raises(grpc.RpcError) as caught:  # nothing leaves: grpcio cannot serialize it
        stub(pb, server).UpdateSubscriptions(req, metadata=[("authorization", auth(CLERK[1]))])
    assert caught.value.code() == grpc.StatusCode.INTERNAL
    assert caught.value.details() == "Exception serializing request!"
    # Parsing does not check: only IsInitialized() tells.
    parsed = pb["legacy"].Subscription.FromString(incomplete.SerializePartialToString())
    assert not parsed.IsInitialized()


def test_example(generated, server):
    env = dict(os.environ, PYTHONPATH=generated)
    out = subprocess.run(
        [sys.executable, str(HERE / "example.py"), server], env=env, capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "gRPC GetSubscriptions: 10 subscriptions" in out.stdout
    assert "legacy GetCounteragentsFromGroup: 4 of 6" in out.stdout
    assert "ErrorInfo reason=API_SUBSCRIPTION_ENDED domain=docflow-api errorCode=Http.PaymentRequired" in out.stdout


def test_legacy_error_is_text_with_error_code(server):
    req = urllib.request.Request(f"{server}/GetSubscriptions?boxId={BOX}&userId={ADMIN[0]}")
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(req)
    assert caught.value.code == 401
    assert caught.value.headers["X-Service-ErrorCode"] == "Http.Unauthorized"
    assert caught.value.read().decode() == "the Authorization header is missing"


# ------------------------------------------------------------- counteragent groups (docs/api.md §6.4)


def groups_stub(pb, base):
    channel = grpc.insecure_channel(base.removeprefix("http://"))
    return pb["counteragents_stub"].CounteragentServiceStub(channel)


def test_grpc_counteragent_group_lifecycle(pb, server):
    api, groups, md = pb["counteragents"], pb["groups"], [("authorization", auth(ADMIN[1]))]
    rpc = groups_stub(pb, server)
    name = f"Python {uuid.uuid4().hex[:8]}"
    created = rpc.CreateCounteragentGroup(
        api.CreateCounteragentGroupRequest(
            box_id=BOX,
            group=groups.CounteragentGroupToCreate(
                Name=f"  {name} ", Departments=groups.DepartmentsInGroup(DepartmentIds=[SALES, SALES])
            ),
        ),
        metadata=md,
    )
    group_id = created.CounteragentGroupId
    assert uuid.UUID(group_id).version == 4
    assert created.Name == name
    assert list(created.Departments.DepartmentIds) == [SALES]

    with pytest.raises(grpc.RpcError) as caught:
        rpc.CreateCounteragentGroup(
            api.CreateCounteragentGroupRequest(
                box_id=BOX, group=groups.CounteragentGroupToCreate(Name=name.upper())
            ),
            metadata=md,
        )
    assert caught.value.code() == grpc.StatusCode.ALREADY_EXISTS

    rpc.AddCounteragentToGroup(
        api.AddCounteragentToGroupRequest(
            box_id=BOX, counteragent_box_id=COUNTERAGENTS[0], counteragent_group_id=group_id
        ),
        metadata=md,
    )
    page = rpc.GetCounteragentsFromGroup(
        api.GetCounteragentsFromGroupRequest(box_id=BOX, counteragent_group_id=group_id),
        metadata=md,
    )
    assert list(page.CounteragentBoxId) == [COUNTERAGENTS[0]] and page.TotalCount == 1

    updated = rpc.UpdateCounteragentGroup(
        api.UpdateCounteragentGroupRequest(
            box_id=BOX,
            counteragent_group_id=group_id,
            changes=groups.CounteragentGroupToUpdate(
                GroupDepartments=groups.CounteragentGroupDepartmentPatch(AnyDepartment=True)
            ),
        ),
        metadata=md,
    )
    assert updated.Name == name and not updated.HasField("Departments")

    listed = rpc.GetCounteragentGroups(api.GetCounteragentGroupsRequest(box_id=BOX), metadata=md)
    assert group_id in [g.CounteragentGroupId for g in listed.Groups]
    assert listed.TotalCount == len(listed.Groups)

    rpc.DeleteCounteragentGroup(
        api.DeleteCounteragentGroupRequest(box_id=BOX, counteragent_group_id=group_id), metadata=md
    )
    with pytest.raises(grpc.RpcError) as caught:
        rpc.GetCounteragentGroup(
            api.GetCounteragentGroupRequest(box_id=BOX, counteragent_group_id=group_id), metadata=md
        )
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    default = rpc.GetCounteragentsFromGroup(
        api.GetCounteragentsFromGroupRequest(box_id=BOX, counteragent_group_id=DEFAULT_GROUP),
        metadata=md,
    )
    assert list(default.CounteragentBoxId)[-1] == COUNTERAGENTS[0]


def legacy_call(server, path, body=None, method="GET"):
    """As an existing SDK calls: binary protobuf body (or none), no Content-Type, no Accept."""
    req = urllib.request.Request(
        f"{server}{path}", data=body, method=method, headers={"Authorization": auth(ADMIN[1])}
    )
    with urllib.request.urlopen(req) as res:
        assert res.status == 200
        return res.headers, res.read()


def test_legacy_protobuf_counteragent_groups(pb, server):
    groups = pb["groups"]
    name = f"Legacy {uuid.uuid4().hex[:8]}"
    headers, body = legacy_call(
        server,
        f"/CreateCounteragentGroup?boxId={BOX}",
        groups.CounteragentGroupToCreate(Name=name).SerializeToString(),
        "POST",
    )
    assert headers["Content-Type"] == "application/x-protobuf"
    created = groups.CounteragentGroup.FromString(body)  # raises if a required field is missing
    assert created.IsInitialized() and created.Name == name
    assert not created.HasField("Departments")  # any department: no Departments at all

    _, body = legacy_call(
        server,
        f"/GetCounteragentGroup?boxId={BOX}&counteragentGroupId={DEFAULT_GROUP}",
    )
    default = groups.CounteragentGroup.FromString(body)
    assert (default.CounteragentGroupId, default.Name) == (DEFAULT_GROUP, "Default")

    # A page past the end: no groups, and TotalCount still on the wire.
    _, body = legacy_call(server, f"/GetCounteragentGroups?boxId={BOX}&page=1000&count=100")
    past = groups.CounteragentGroupsList.FromString(body)
    assert len(past.Groups) == 0 and past.HasField("TotalCount") and past.TotalCount >= 3

    group_id = created.CounteragentGroupId
    for path in (
        f"/AddCounteragentToGroup?boxId={BOX}&counteragentBoxId={COUNTERAGENTS[1]}&counteragentGroupId={group_id}",
        f"/DeleteCounteragentGroup?boxId={BOX}&counteragentGroupId={group_id}",
    ):
        headers, body = legacy_call(server, path, b"", "POST")
        assert body == b"" and headers["Content-Length"] == "0"

    req = urllib.request.Request(
        f"{server}/GetCounteragentGroup?boxId={BOX}&counteragentGroupId={group_id}",
        headers={"Authorization": auth(ADMIN[1])},
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(req)
    assert caught.value.code == 404
    assert caught.value.headers["X-Service-ErrorCode"] == "CounteragentGroup.NotFound"
