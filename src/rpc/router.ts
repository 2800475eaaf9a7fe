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
  router.service(SubscriptionService, subscriptionService);
  router.service(DocumentService, documentService);
  router.service(CounteragentService, counteragentService);
  router.service(Health, healthService);
  return router;
}
