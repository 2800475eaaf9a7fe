/** The Connect router: every service, behind one chain of interceptors. */
import { type ConnectRouter, createConnectRouter } from "@connectrpc/connect";
import type { App } from "../app";
import { CounteragentService, counteragentService } from "./counteragent-service";
import { DocumentService, documentService } from "./document-service";
import { Health, healthService } from "./health-service";
import {
  createAppInterceptor,
  createAuthInterceptor,
  createErrorInterceptor,
  requiredFieldsInterceptor,
} from "./interceptors";
import { SubscriptionService, subscriptionService } from "./subscription-service";

/** Largest request message accepted, on every protocol. */
export const MAX_REQUEST_BYTES = 1024 * 1024;

/** Every service and its handlers: the one list the router, the bridge and the OpenAPI document read. */
export const SERVICES = [
  [SubscriptionService, subscriptionService],
  [DocumentService, documentService],
  [CounteragentService, counteragentService],
  [Health, healthService],
] as const;

export function createRouter(app: App): ConnectRouter {
  const router = createConnectRouter({
    interceptors: [
      createErrorInterceptor(app),
      createAppInterceptor(app),
      createAuthInterceptor(app),
      requiredFieldsInterceptor,
    ],
    readMaxBytes: MAX_REQUEST_BYTES,
  });
  for (const [service, impl] of SERVICES) {
    router.service(service, impl as never);
  }
  return router;
}
