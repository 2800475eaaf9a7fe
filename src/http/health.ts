/**
 * HTTP health for orchestrators and load balancers (docs/api.md §9): /livez says the
 * process is up and never touches MongoDB, so a database blip restarts
 * nothing; /readyz (and its alias /healthz) says whether to send traffic:
 * MongoDB answers (a call's database work succeeded within the last
 * HEALTH_TIMEOUT_MS, or else a ping answers within it: src/deps.ts) and the
 * service is not draining.
 */
import type { NodeRequest, NodeResponse } from "../wire/http";
import { sendJson, sendMethodNotAllowed } from "../wire/plain";

export const HEALTH_PATHS: ReadonlySet<string> = new Set(["/livez", "/readyz", "/healthz"]);

export interface HealthEndpoints {
  /** From now on /readyz answers 503 "stopping". */
  startDraining(): void;
  /** What /readyz answers: true for 200 (not draining, MongoDB answers). */
  ready(): Promise<boolean>;
  handle(req: NodeRequest, res: NodeResponse, path: string): Promise<void>;
}

export function createHealthEndpoints(databaseAnswers: () => Promise<boolean>): HealthEndpoints {
  let draining = false;
  const ready = async () => !draining && (await databaseAnswers());
  return {
    startDraining() {
      draining = true;
    },
    ready,
    async handle(req, res, path) {
      req.resume();
      if (req.method !== "GET" && req.method !== "HEAD") {
        sendMethodNotAllowed(req, res, ["GET", "HEAD"], path);
        return;
      }
      if (path === "/livez") {
        sendJson(res, 200, { status: "ok" });
        return;
      }
      const answer = await ready();
      sendJson(res, answer ? 200 : 503, {
        status: answer ? "ok" : draining ? "stopping" : "database unavailable",
      });
    },
  };
}
