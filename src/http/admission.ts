/**
 * Admission at the front door (docs/api.md §4.1, docs/operations.md
 * "Overload"): after the route table matched a request and before anything
 * of it is read or decoded, src/admission says whether it runs now, waits,
 * or is refused. The route writes a refusal in its protocol's words (legacy
 * 503/429 with Retry-After, gRPC's and Connect's unavailable or
 * resource_exhausted with grpc-retry-pushback-ms); health and /metrics never
 * come here. Who a call comes from is what its Authorization value proved
 * the last time it was seen (src/admission/clients.ts).
 */
import { Code, ConnectError } from "@connectrpc/connect";
import {
  Admission,
  type AdmissionConfig,
  type AdmissionObserver,
  Refusal,
  Ticket,
} from "../admission/admission";
import { ClientDirectory } from "../admission/clients";
import { callWorkKey } from "../call/context";
import { clientOverShare, overloaded } from "../domain/errors";
import type { Logger } from "../log";
import { callerKey } from "../rpc/context";
import { answerHeadersOf, connectToLegacyError, domainToConnectError } from "../wire/errors";
import type { NodeRequest, NodeResponse } from "../wire/http";
import { type PreparedError, prepareError } from "../wire/plain";
import type { FrontRequest } from "./front";

/** The errors each refusal is answered with, made once: a refusal costs no stack trace. */
function refusalErrors(retryAfterS: number): Record<Refusal, ConnectError> {
  return {
    [Refusal.Overloaded]: domainToConnectError(overloaded(retryAfterS)),
    [Refusal.ClientShare]: domainToConnectError(clientOverShare(retryAfterS)),
    [Refusal.Deadline]: new ConnectError(
      "the call's deadline passed before it could run",
      Code.DeadlineExceeded,
    ),
  };
}

/** Refusals' plain answers, by their (constant) error. */
const prepared = new WeakMap<ConnectError, PreparedError>();

/** The legacy answer of an error, made once per error object (admission's are constants). */
function preparedOf(error: ConnectError): PreparedError {
  let answer = prepared.get(error);
  if (!answer) {
    answer = prepareError(connectToLegacyError(error), answerHeadersOf(error));
    prepared.set(error, answer);
  }
  return answer;
}

/** A route of the front that runs under admission: how it serves a request, and refuses one. */
export interface GatedRoute {
  serve(req: NodeRequest, res: NodeResponse, front: FrontRequest): Promise<void> | void;
  refuse(
    req: NodeRequest,
    res: NodeResponse,
    front: FrontRequest,
    error: ConnectError,
  ): Promise<void> | void;
  /** When the client stops waiting (its protocol's timeout header), in ms from now. */
  clientTimeoutMs?(req: NodeRequest, front: FrontRequest): number | undefined;
}

export interface AdmissionGate {
  readonly admission: Admission | undefined;
  /** A refusal's answer on a plain HTTP route (legacy paths, docs), made once per reason. */
  plainRefusal(error: ConnectError): PreparedError;
  /** Serves the request with `route` now, once admitted, or refuses it. */
  pass(
    front: FrontRequest,
    req: NodeRequest,
    res: NodeResponse,
    route: GatedRoute,
  ): Promise<void> | void;
  stop(): void;
}

/** Refusals are logged as one summary line per this many ms while they last, not one each. */
const SUMMARY_MS = 10_000;

export function createAdmissionGate(
  config: AdmissionConfig,
  log: Logger,
  observer?: AdmissionObserver,
): AdmissionGate {
  if (!config.enabled) {
    return {
      admission: undefined,
      plainRefusal: preparedOf,
      pass: (front, req, res, route) => route.serve(req, res, front),
      stop() {},
    };
  }
  const errors = refusalErrors(config.retryAfterS);
  const directory = new ClientDirectory();
  // The summary line: refusals by reason since the last one.
  let counted: Record<Refusal, number> = { overloaded: 0, client_share: 0, deadline: 0 };
  let summaryAt = 0;
  const summarize = (reason: Refusal) => {
    counted[reason]++;
    const now = Date.now();
    if (now - summaryAt < SUMMARY_MS) return;
    summaryAt = now;
    const { limit, latencyMs, throughput } = admission.limiter;
    log.warn("admission refused calls", {
      ...counted,
      limit: Math.floor(limit),
      latencyMs: Math.round(latencyMs * 10) / 10,
      throughput: Math.round(throughput),
      loopDelayMs: Math.round(admission.loopDelayMs),
    });
    counted = { overloaded: 0, client_share: 0, deadline: 0 };
  };
  const admission = new Admission(config, observer);
  admission.start();

  const release = (front: FrontRequest, ticket: Ticket, authorization: string | undefined) => {
    if (ticket.left) return;
    ticket.left = true;
    admission.leave(ticket);
    // What the call proved of its client, for the next call with the same credentials.
    const caller = front.values?.get(callerKey);
    if (authorization !== undefined && caller?.client !== undefined) {
      directory.learn(authorization, caller.client);
    }
  };
  const run = (
    front: FrontRequest,
    req: NodeRequest,
    res: NodeResponse,
    route: GatedRoute,
    ticket: Ticket,
  ) => {
    const authorization = req.headers.authorization;
    // The room is given back once the call's work has ended and its answer is handed to
    // Node, not when the client has read it: a client that never reads (an HTTP/2 window
    // left at 0) must not hold room (docs/security.md). A call whose client left keeps
    // its room until its work ends.
    const done = () => {
      const work = front.values?.get(callWorkKey);
      if (work) void work.then(() => release(front, ticket, authorization));
      else release(front, ticket, authorization);
    };
    front.finally = done;
    let served: Promise<void> | void;
    try {
      served = route.serve(req, res, front);
    } catch (error) {
      done();
      throw error;
    }
    if (!served) {
      done();
      return served;
    }
    return served.finally(done);
  };
  const refuse = (
    front: FrontRequest,
    req: NodeRequest,
    res: NodeResponse,
    route: GatedRoute,
    reason: Refusal,
  ) => {
    summarize(reason);
    front.refused = true;
    return route.refuse(req, res, front, errors[reason]);
  };

  return {
    admission,
    plainRefusal: preparedOf,
    pass(front, req, res, route) {
      const client = directory.clientOf(req.headers.authorization);
      const timeoutMs = admission.free ? undefined : route.clientTimeoutMs?.(req, front);
      const entered = admission.enter(
        client,
        timeoutMs === undefined ? undefined : performance.now() + timeoutMs,
      );
      if (entered instanceof Ticket) return run(front, req, res, route, entered);
      if (typeof entered === "string") return refuse(front, req, res, route, entered);
      const waiter = entered;
      front.finally = () => admission.cancel(waiter);
      return new Promise<void>((resolve, reject) => {
        waiter.settle = (outcome) => {
          try {
            if (outcome instanceof Ticket) {
              front.waitedMs = performance.now() - waiter.arrivedAt;
              resolve(run(front, req, res, route, outcome));
            } else {
              front.finally = undefined;
              resolve(refuse(front, req, res, route, outcome));
            }
          } catch (error) {
            reject(error);
          }
        };
      });
    },
    stop: () => admission.stop(),
  };
}
