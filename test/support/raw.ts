/**
 * Requests that protobuf-es refuses to encode: a Subscription without its
 * required IsSubscribed, as an old or careless client could send it.
 */
import { create, fromBinary } from "@bufbuild/protobuf";
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import {
  SubscriptionSchema,
  SubscriptionsToUpdateSchema,
} from "../../gen/docflow/legacy/subscriptions_pb";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb";
import { BOX, USERS } from "./fixture";
import { legacy, type Served, server } from "./harness";
import { call, type Outcome, type Protocol } from "./protocols";

const method = SubscriptionService.method.updateSubscriptions;

/** Sets ChatMessages=false and News with no IsSubscribed, for the clerk. */
export async function callWithoutIsSubscribed(
  h: Served,
  protocol: Protocol,
  authorization: string,
): Promise<Outcome<unknown>> {
  const jsonBody = {
    Subscriptions: [{ Id: "ChatMessages", IsSubscribed: "false" }, { Id: "News" }],
  };
  if (protocol === "connect-json") {
    const res = await fetch(
      `${server(h, protocol).baseUrl}/${method.parent.typeName}/${method.name}`,
      {
        method: "POST",
        headers: { "content-type": "application/json", authorization },
        // Connect JSON is canonical proto JSON: bools are JSON booleans there.
        body: JSON.stringify({
          boxId: BOX,
          userId: USERS.clerk.userId,
          subscriptions: {
            Subscriptions: [{ Id: "ChatMessages", IsSubscribed: false }, { Id: "News" }],
          },
        }),
      },
    );
    const body = (await res.json()) as {
      message: string;
      details?: { type: string; value: string }[];
    };
    const info = body.details?.find((d) => d.type === "google.rpc.ErrorInfo");
    const errorCode = info
      ? fromBinary(ErrorInfoSchema, Buffer.from(info.value, "base64")).metadata.errorCode
      : undefined;
    return { ok: false, status: res.status, errorCode, message: body.message };
  }
  if (protocol === "legacy-json") {
    const res = await legacy(server(h, protocol), {
      method: "POST",
      path: `/UpdateSubscriptions?boxId=${BOX}&userId=${USERS.clerk.userId}`,
      headers: { authorization, accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify(jsonBody),
    });
    const errorCode = res.headers["x-service-errorcode"] as string | undefined;
    const detail = (JSON.parse(res.text) as { detail: string }).detail;
    return res.status === 200
      ? { ok: true, message: res.text }
      : { ok: false, status: res.status, errorCode, message: detail };
  }
  // Binary protocols: the incomplete Subscription travels as an unknown field of
  // SubscriptionsToUpdate, which protobuf-es writes as it is.
  const incomplete = new BinaryWriter().tag(1, WireType.LengthDelimited).string("News").finish();
  const subscriptions = create(SubscriptionsToUpdateSchema, {
    Subscriptions: [create(SubscriptionSchema, { Id: "ChatMessages", IsSubscribed: false })],
  });
  subscriptions.$unknown = [
    {
      no: 1,
      wireType: WireType.LengthDelimited,
      data: new BinaryWriter().bytes(incomplete).finish(),
    },
  ];
  const request = create(method.input, { boxId: BOX, userId: USERS.clerk.userId, subscriptions });
  return call(h, protocol, method, request, authorization);
}
