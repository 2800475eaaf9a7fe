/** Legacy request decoding: query and body into the request message, for every kind of http rule body. */
import { Readable } from "node:stream";
import type { Message } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { DomainError } from "../../src/domain/errors";
import { decodeRequest } from "../../src/legacy/decode";
import { legacyRoutesOf } from "../../src/legacy/http-rules";
import type { NodeRequest } from "../../src/wire/http";
import { methodWith } from "../support/echo-service";

function request(body: string, headers: Record<string, string> = {}): NodeRequest {
  return Object.assign(Readable.from([Buffer.from(body)]), {
    headers,
    complete: true,
  }) as unknown as NodeRequest;
}

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
