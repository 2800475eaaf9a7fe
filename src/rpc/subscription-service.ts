/** SubscriptionService handlers: decode → domain → encode. */
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import {
  type EmployeeSubscriptions,
  EmployeeSubscriptionsSchema,
  SubscriptionSchema,
} from "../../gen/docflow/legacy/subscriptions_pb";
import {
  getSubscriptions,
  type SubscriptionState,
  updateSubscriptions,
} from "../domain/subscriptions";
import { callerOf, depsOf } from "./context";

export const subscriptionService: ServiceImpl<typeof SubscriptionService> = {
  async getSubscriptions(req, ctx) {
    const states = await getSubscriptions(depsOf(ctx), callerOf(ctx), {
      boxId: req.boxId,
      userId: req.userId,
    });
    return toEmployeeSubscriptions(states);
  },
  async updateSubscriptions(req, ctx) {
    const states = await updateSubscriptions(depsOf(ctx), callerOf(ctx), {
      boxId: req.boxId,
      userId: req.userId,
      changes: (req.subscriptions?.Subscriptions ?? []).map((s) => ({
        id: s.Id,
        isSubscribed: s.IsSubscribed,
      })),
    });
    return toEmployeeSubscriptions(states);
  },
};

export { SubscriptionService };

function toEmployeeSubscriptions(states: readonly SubscriptionState[]): EmployeeSubscriptions {
  return create(EmployeeSubscriptionsSchema, {
    Subscriptions: states.map((s) =>
      create(SubscriptionSchema, { Id: s.id, IsSubscribed: s.isSubscribed }),
    ),
  });
}
