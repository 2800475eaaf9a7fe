/** http rules → legacy routes: resolved once, unsupported features refused at start-up, `body: "*"` served. */
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { HttpRuleSchema } from "../../gen/google/api/http_pb";
import { legacyRoutesOf } from "../../src/legacy/http-rules";
import { isLegacy } from "../../src/legacy/profile";
import { servedMethods } from "../../src/rpc/pipeline";
import { methodWith } from "../support/echo-service";

describe("legacy routes from http rules", () => {
  it("our own services: one route per legacy path, fields resolved", () => {
    // Derived from the methods: each legacy method's rule is one route (a REST binding
    // added beside it, as docs/transcoding.md says, changes nothing here).
    const legacyMethods = servedMethods().filter(isLegacy);
    const routes = legacyRoutesOf(legacyMethods);
    expect(routes.map((r) => r.method)).toEqual(legacyMethods);
    expect(routes.map((r) => `${r.verb} ${r.path}`).sort()).toEqual([
      "GET /GetCounteragentGroup",
      "GET /GetCounteragentGroups",
      "GET /GetCounteragentsFromGroup",
      "GET /GetSubscriptions",
      "POST /AddCounteragentToGroup",
      "POST /CreateCounteragentGroup",
      "POST /Delete",
      "POST /DeleteCounteragentGroup",
      "POST /Restore",
      "POST /UpdateCounteragentGroup",
      "POST /UpdateSubscriptions",
    ]);
    const update = routes.find((r) => r.path === "/UpdateSubscriptions");
    expect(update?.bodyField?.message.typeName).toBe("docflow.legacy.SubscriptionsToUpdate");
    expect(update?.queryFields.map((f) => f.jsonName)).toEqual(["boxId", "userId"]);
    const createGroup = routes.find((r) => r.path === "/CreateCounteragentGroup");
    expect(createGroup?.bodyField?.message.typeName).toBe(
      "docflow.legacy.CounteragentGroupToCreate",
    );
    expect(createGroup?.queryFields.map((f) => f.jsonName)).toEqual(["boxId"]);
    const updateGroup = routes.find((r) => r.path === "/UpdateCounteragentGroup");
    expect(updateGroup?.bodyField?.message.typeName).toBe(
      "docflow.legacy.CounteragentGroupToUpdate",
    );
    expect(updateGroup?.queryFields.map((f) => f.jsonName)).toEqual([
      "boxId",
      "counteragentGroupId",
    ]);
    // AIP-158's fields are not on the legacy paths ((docflow.legacy.not_on_legacy_paths)).
    const lists = ["/GetCounteragentGroups", "/GetCounteragentsFromGroup"].map((path) =>
      routes.find((r) => r.path === path)?.queryFields.map((f) => f.jsonName),
    );
    expect(lists).toEqual([
      ["boxId", "page", "count"],
      ["boxId", "counteragentGroupId", "afterIndexKey", "count"],
    ]);
    const add = routes.find((r) => r.path === "/AddCounteragentToGroup");
    expect(add).toMatchObject({ verb: "POST", body: "", bodyField: undefined });
    expect(add?.queryFields.map((f) => f.jsonName)).toEqual([
      "boxId",
      "counteragentBoxId",
      "counteragentGroupId",
    ]);
  });

  it("additional bindings are not legacy paths: the rule's own path is the one route", () => {
    const routes = legacyRoutesOf([
      methodWith({
        pattern: { case: "get", value: "/Echo" },
        additionalBindings: [
          create(HttpRuleSchema, { pattern: { case: "get", value: "/v1/echoes/{box_id}" } }),
        ],
      }),
    ]);
    expect(routes.map((r) => `${r.verb} ${r.path}`)).toEqual(["GET /Echo"]);
  });

  it('body "*": the whole request is the body, nothing comes from the query', () => {
    const [route] = legacyRoutesOf([
      methodWith({ pattern: { case: "post", value: "/Echo" }, body: "*" }),
    ]);
    expect(route).toMatchObject({ verb: "POST", path: "/Echo", body: "*", bodyField: undefined });
    expect(route?.queryFields).toEqual([]);
  });

  it("a body field: query fields are the other scalars", () => {
    const [route] = legacyRoutesOf([
      methodWith({ pattern: { case: "post", value: "/Echo" }, body: "inner" }),
    ]);
    expect(route?.bodyField?.name).toBe("inner");
    expect(route?.queryFields.map((f) => f.name)).toEqual(["box_id"]);
  });

  it.each([
    [
      "response_body",
      { pattern: { case: "get", value: "/Echo" }, responseBody: "inner" },
      "test.echo.v1.EchoService.Echo: response_body is not supported",
    ],
    [
      "a path variable",
      { pattern: { case: "get", value: "/Echo/{box_id}" } },
      "test.echo.v1.EchoService.Echo: path variables are not supported (/Echo/{box_id})",
    ],
    ["no pattern", {}, "test.echo.v1.EchoService.Echo: unsupported http rule pattern (none)"],
    [
      "a custom verb",
      { pattern: { case: "custom", value: { kind: "HEAD", path: "/Echo" } } },
      "test.echo.v1.EchoService.Echo: unsupported http rule pattern (custom)",
    ],
    [
      "a body field that is not a message",
      { pattern: { case: "post", value: "/Echo" }, body: "box_id" },
      /not a message field/,
    ],
    [
      "a body field that does not exist",
      { pattern: { case: "post", value: "/Echo" }, body: "nope" },
      /not a message field/,
    ],
  ] as const)("refuses %s at start-up", (_name, rule, message) => {
    expect(() =>
      legacyRoutesOf([methodWith(rule as MessageInitShape<typeof HttpRuleSchema>)]),
    ).toThrow(message);
  });

  it("refuses a streaming RPC", () => {
    expect(() =>
      legacyRoutesOf([methodWith({ pattern: { case: "get", value: "/Echo" } }, true)]),
    ).toThrow(/only unary/);
  });
});
