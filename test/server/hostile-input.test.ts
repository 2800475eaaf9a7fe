/**
 * The front door against a hostile client, on raw sockets: whatever arrives,
 * the answer is a clear 4xx/5xx or a closed connection, and the process keeps
 * serving (each case ends with GET /livez answering 200).
 */
import { describe, expect, it } from "vitest";
import { SubscriptionService } from "../../gen/docflow/api/v1/subscriptions_pb";
import { useHarness } from "../support/harness";
import { exchange, statusOf } from "../support/raw-socket";

const h = useHarness();

const RPC_PATH = `/${SubscriptionService.typeName}/${SubscriptionService.method.getSubscriptions.name}`;

async function expectStillServing(): Promise<void> {
  const res = await fetch(`${h.baseUrl}/livez`);
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ status: "ok" });
}

describe("a request line of any HTTP version on the HTTP/1 parser is answered as HTTP/1, never taken for HTTP/2", () => {
  // What each version gets: 1.0 and 1.1 are served; Node's parser itself
  // refuses 1.2, 3.0 and 9.9 with 400; 0.9 and 2.0 pass its parser and are
  // refused by the listener with 505 (HTTP/2 starts with its preface).
  const expected: Record<string, number> = {
    "0.9": 505,
    "1.0": 200,
    "1.1": 200,
    "1.2": 400,
    "2.0": 505,
    "3.0": 400,
    "9.9": 400,
  };
  const kinds = [
    { name: "GET /livez", line: "GET /livez", headers: "", body: "", served: 200 },
    {
      name: "a gRPC POST",
      line: `POST ${RPC_PATH}`,
      headers: "content-type: application/grpc\r\nte: trailers\r\ncontent-length: 5\r\n",
      body: "\0\0\0\0\0",
      // gRPC needs HTTP/2: on HTTP/1.x it is not served, but answered.
      served: undefined,
    },
    {
      name: "a Connect POST",
      line: `POST ${RPC_PATH}`,
      headers: "content-type: application/proto\r\ncontent-length: 0\r\n",
      body: "",
      // No credentials: Connect's 401.
      served: 401,
    },
  ];
  for (const kind of kinds) {
    for (const [version, status] of Object.entries(expected)) {
      it(`HTTP/${version}, ${kind.name}: ${status === 200 ? "served" : status}`, async () => {
        const res = await exchange(h.port, [
          `${kind.line} HTTP/${version}\r\nhost: x\r\n${kind.headers}\r\n${kind.body}`,
        ]);
        const got = statusOf(res.text);
        if (status === 200) {
          if (kind.served !== undefined) expect(got).toBe(kind.served);
          else expect(got).toBeGreaterThanOrEqual(200);
        } else {
          expect(got).toBe(status);
          // A refused version ends the connection: nothing else is read from it.
          expect(res.closedByServer).toBe(true);
        }
        await expectStillServing();
      });
    }
  }
});

describe("malformed request lines are a 400 and a closed connection", () => {
  const lines = {
    "no target and no version": "GET\r\n\r\n",
    "a version with no number": "GET /livez HTTP/\r\n\r\n",
    "a version with one digit": "GET /livez HTTP/2\r\n\r\n",
    "a version with three parts": "GET /livez HTTP/1.1.1\r\n\r\n",
    "lower-case protocol name": "GET /livez http/1.1\r\n\r\n",
    "binary garbage": "\x00\x01\x02\x03\xff\xfe\r\n\r\n",
    "a method with a space in it": "G ET /livez HTTP/1.1\r\n\r\n",
    "a target with a raw space": "GET /li vez HTTP/1.1\r\nhost: x\r\n\r\n",
    "a line ending in a bare LF then CR": "GET /livez HTTP/1.1\n\rhost: x\r\n\r\n",
    "PRI, the h2 preface method, with HTTP/1.1": "PRI * HTTP/1.1\r\nhost: x\r\n\r\n",
  };
  for (const [name, line] of Object.entries(lines)) {
    it(name, async () => {
      const res = await exchange(h.port, [line]);
      expect(statusOf(res.text)).toBe(400);
      expect(res.text).not.toMatch(/at .*\.(ts|js):\d+/);
      expect(res.closedByServer).toBe(true);
      await expectStillServing();
    });
  }
});
