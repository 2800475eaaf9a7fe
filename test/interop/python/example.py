"""A small docflow-api client in Python: GetSubscriptions over gRPC (h2c),
GetCounteragentsFromGroup over the legacy HTTP path (binary protobuf, as the
existing SDKs call it), and the google.rpc.ErrorInfo of a failed call.

Generate the client code first (docs/clients.md, "Python"), start the service
(npm start), then:

    PYTHONPATH=<generated dir> python example.py http://127.0.0.1:8080
"""
import sys
import urllib.request
from urllib.parse import urlencode

import grpc
from docflow.api.v1 import subscriptions_pb2, subscriptions_pb2_grpc
from docflow.legacy import counteragents_pb2
from google.rpc import error_details_pb2  # googleapis-common-protos
from grpc_status import rpc_status  # grpcio-status

# The demo data of `npm start` (docs/configuration.md, "Demo data and credentials").
API_KEY = "demo-api-key"
ADMIN_TOKEN = "demo-admin-token"
BOX = "11111111-1111-4111-8111-111111111111"
EXPIRED_BOX = "33333333-3333-4333-8333-333333333333"
ADMIN = "aaaaaaaa-0000-4000-8000-000000000001"
CLERK = "aaaaaaaa-0000-4000-8000-000000000002"
PARTNERS = "99999999-0000-4000-8000-000000000001"


def authorization(token: str) -> str:
    return f"ServiceAuth svcauth_api_client_id={API_KEY}, svcauth_token={token}"


def main(base: str) -> None:
    # gRPC over cleartext HTTP/2 to host:port; the header travels as the metadata "authorization".
    metadata = [("authorization", authorization(ADMIN_TOKEN))]
    with grpc.insecure_channel(base.removeprefix("http://")) as channel:
        stub = subscriptions_pb2_grpc.SubscriptionServiceStub(channel)
        got = stub.GetSubscriptions(
            subscriptions_pb2.GetSubscriptionsRequest(box_id=BOX, user_id=CLERK), metadata=metadata, timeout=30
        )
        print(f"gRPC GetSubscriptions: {len(got.Subscriptions)} subscriptions")
        for s in got.Subscriptions:
            print(f"  {s.Id} subscribed={s.IsSubscribed}")

        # The legacy path: GET with query parameters, no Accept header, binary protobuf back.
        # FromString raises if a required field is missing.
        query = urlencode({"boxId": BOX, "counteragentGroupId": PARTNERS, "count": 4})
        req = urllib.request.Request(
            f"{base}/GetCounteragentsFromGroup?{query}", headers={"Authorization": authorization(ADMIN_TOKEN)}
        )
        with urllib.request.urlopen(req, timeout=30) as res:
            page = counteragents_pb2.CounteragentFromGroupResponse.FromString(res.read())
        print(
            f"legacy GetCounteragentsFromGroup: {len(page.CounteragentBoxId)} of {page.TotalCount},"
            f' next afterIndexKey "{page.AfterIndexKey}"'
        )

        # A failed call: the box's API subscription has ended. The status carries a google.rpc.ErrorInfo.
        try:
            stub.GetSubscriptions(
                subscriptions_pb2.GetSubscriptionsRequest(box_id=EXPIRED_BOX, user_id=ADMIN),
                metadata=metadata,
                timeout=30,
            )
            raise SystemExit("GetSubscriptions on the expired box: no error")
        except grpc.RpcError as err:
            print(f"gRPC error: {err.code().name}: {err.details()}")
            status = rpc_status.from_call(err)
            for detail in status.details if status else []:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    print(
                        f"  ErrorInfo reason={info.reason} domain={info.domain}"
                        f" errorCode={info.metadata['errorCode']}"
                    )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080")
