/** Legacy request decoding: query and body into the request message, for every kind of http rule body. */
import { Readable } from "node:stream";
import { brotliCompressSync, gzipSync } from "node:zlib";
import type { Message } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { DomainError, ErrorKind } from "../../src/domain/errors";
import { exchangeOf } from "../../src/http/transcoding";
import { decodeRequest } from "../../src/legacy/decode";
import { legacyRoutesOf } from "../../src/legacy/http-rules";
import type { Exchange } from "../../src/transcoder/exchange";
import { MAX_REQUEST_BYTES } from "../../src/wire/body";
import type { NodeRequest, NodeResponse } from "../../src/wire/http";
import { methodWith } from "../support/echo-service";

/** The legacy profile reads a request through the transcoder's Exchange: the front door's, with its 1 MiB limit. */
const exchange = (req: NodeRequest) => exchangeOf(req, {} as NodeResponse, MAX_REQUEST_BYTES);

function request(body: string | Buffer, headers: Record<string, string> = {}): Exchange {
  return exchange(
    Object.assign(Readable.from([typeof body === "string" ? Buffer.from(body) : body]), {
      headers,
      complete: true,
    }) as unknown as NodeRequest,
  );
}

/** What decodeRequest threw (or the message it returned). */
const outcome = (promise: Promise<unknown>) => promise.catch((e: unknown) => e);

const routeFor = (body: string) => {
  const [route] = legacyRoutesOf([methodWith({ pattern: { case: "post", value: "/Echo" }, body })]);
  if (!route) throw new Error("no route");
  return route;
};
const json = { "content-type": "application/json" };
const plain = (m: Message) =>
  JSON.parse(JSON.stringify(m, (k, v) => (k === "$typeName" ? undefined : v)));

describe("legacy decoding", () => {
  it('body "*": the JSON body is the whole request; query parameters are ignored', async () => {
    const message = await decodeRequest(
      routeFor("*"),
      request('{"box_id":"b1","inner":{"text":"hi"}}', json),
      "boxId=ignored",
    );
    expect(plain(message)).toEqual({ boxId: "b1", inner: { text: "hi" } });
  });

  it("a body field: the body fills it, the query fills the rest", async () => {
    const message = await decodeRequest(
      routeFor("inner"),
      request('{"text":"hi"}', json),
      "boxId=b2",
    );
    expect(plain(message)).toEqual({ boxId: "b2", inner: { text: "hi" } });
  });

  it("no body: only the query, and a body sent anyway is ignored", async () => {
    const message = await decodeRequest(routeFor(""), request("junk"), "boxId=b3&other&count");
    expect(plain(message)).toEqual({ boxId: "b3" });
  });

  it("no Content-Type: the body is binary protobuf", async () => {
    // Inner { text = "hi" }: field 1, length 2.
    const message = await decodeRequest(routeFor("inner"), request("\x0a\x02hi"), "");
    expect(plain(message)).toEqual({ boxId: "", inner: { text: "hi" } });
  });

  it.each([
    ["a parameter given twice", "inner", "{}", "boxId=a&boxid=b", /given more than once/],
    ["bad JSON", "inner", "{", "", /not valid JSON/],
    ["bad protobuf", "inner", "\x0a\x05", "", /not a valid protobuf Inner/],
  ])("%s is invalid_argument", async (_name, body, text, query, message) => {
    const headers = text.startsWith("{") ? json : {};
    const error = await decodeRequest(routeFor(body), request(text, headers), query).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DomainError);
    expect(String((error as Error).message)).toMatch(message);
  });
});

describe("legacy decoding: the body's type, encoding and size", () => {
  const inner = routeFor("inner");

  it.each([
    "application/json",
    "application/json; charset=utf-8",
    "APPLICATION/JSON",
    "application/json ;charset=utf-8",
  ])("Content-Type %s: JSON", async (type) => {
    const message = await decodeRequest(
      inner,
      request('{"text":"hi"}', { "content-type": type }),
      "",
    );
    expect(plain(message)).toEqual({ boxId: "", inner: { text: "hi" } });
  });

  it.each([
    "application/jsonx",
    "application/json-patch+json",
    "text/json",
    "x-application/json",
    "application/x-protobuf",
  ])("Content-Type %s: not JSON, so binary protobuf", async (type) => {
    const message = await decodeRequest(inner, request("\x0a\x02hi", { "content-type": type }), "");
    expect(plain(message)).toEqual({ boxId: "", inner: { text: "hi" } });
  });

  it("a JSON body that is not UTF-8: invalid_argument, saying so", async () => {
    const error = await outcome(
      decodeRequest(inner, request(Buffer.from([0x7b, 0xff, 0x7d]), json), ""),
    );
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).kind).toBe(ErrorKind.InvalidArgument);
    expect((error as Error).message).toBe("the request body is not valid UTF-8");
  });

  it.each([
    ["gzip", gzipSync],
    ["br", brotliCompressSync],
    ["GZIP", gzipSync],
  ] as const)("Content-Encoding %s: decoded first", async (coding, compress) => {
    const body = compress(Buffer.from('{"text":"zipped"}'));
    const message = await decodeRequest(
      inner,
      request(body, { ...json, "content-encoding": coding }),
      "boxId=z",
    );
    expect(plain(message)).toEqual({ boxId: "z", inner: { text: "zipped" } });
  });

  it("Content-Encoding identity: as it is", async () => {
    const message = await decodeRequest(
      inner,
      request('{"text":"same"}', { ...json, "content-encoding": "identity" }),
      "",
    );
    expect(plain(message)).toEqual({ boxId: "", inner: { text: "same" } });
  });

  it("an encoding the service does not take: 415's kind, naming it", async () => {
    const error = await outcome(
      decodeRequest(inner, request("x", { ...json, "content-encoding": "zstd" }), ""),
    );
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).kind).toBe(ErrorKind.UnsupportedMediaType);
    expect((error as Error).message).toContain('"zstd"');
  });

  it("a body that is not the gzip it claims: invalid_argument", async () => {
    const error = await outcome(
      decodeRequest(inner, request("not gzip", { ...json, "content-encoding": "gzip" }), ""),
    );
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).kind).toBe(ErrorKind.InvalidArgument);
    expect((error as Error).message).toBe("the request body is not valid gzip");
  });

  it("a Content-Length over 1 MiB: resource_exhausted before anything is read", async () => {
    const error = await outcome(
      decodeRequest(inner, request("{}", { ...json, "content-length": String(2 ** 20 + 1) }), ""),
    );
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.ResourceExhausted);
    expect((error as ConnectError).rawMessage).toBe(
      `the request body is larger than ${2 ** 20} bytes`,
    );
  });

  it("a body of exactly 1 MiB is read; one byte more is resource_exhausted", async () => {
    const fits = Buffer.alloc(2 ** 20, 0x20);
    fits.write('{"text":"x"}');
    const message = await decodeRequest(inner, request(fits, json), "");
    expect(plain(message)).toEqual({ boxId: "", inner: { text: "x" } });
    const over = await outcome(
      decodeRequest(inner, request(Buffer.concat([fits, Buffer.from(" ")]), json), ""),
    );
    expect((over as ConnectError).code).toBe(Code.ResourceExhausted);
  });

  it("a small gzip body that decodes past 1 MiB: resource_exhausted, about the decoded size", async () => {
    const bomb = gzipSync(Buffer.alloc(2 ** 20 + 1, 0x20));
    expect(bomb.length).toBeLessThan(4_096);
    const error = await outcome(
      decodeRequest(inner, request(bomb, { ...json, "content-encoding": "gzip" }), ""),
    );
    expect((error as ConnectError).code).toBe(Code.ResourceExhausted);
    expect((error as ConnectError).rawMessage).toBe(
      `the decoded request body is larger than ${2 ** 20} bytes`,
    );
  });

  it("a client that goes away mid-body: canceled, nothing decoded", async () => {
    const req = Object.assign(
      new Readable({
        read() {
          this.push(Buffer.from('{"te'));
          this.destroy();
        },
      }),
      { headers: json, complete: false },
    ) as unknown as NodeRequest;
    const error = await outcome(decodeRequest(inner, exchange(req), ""));
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.Canceled);
  });

  it("a query that is not the route's grammar: invalid_argument from the query reader", async () => {
    const error = await outcome(decodeRequest(routeFor(""), request(""), "boxId=a&boxId=b"));
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).kind).toBe(ErrorKind.InvalidArgument);
  });
});
