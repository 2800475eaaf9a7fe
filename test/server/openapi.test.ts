/** The OpenAPI 3.1 document of the legacy paths: valid, complete, derived from the proto, and true. */
import { create, createFileRegistry, setExtension } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FieldOptionsSchema,
  FileDescriptorProtoSchema,
  MethodOptionsSchema,
} from "@bufbuild/protobuf/wkt";
import { Validator } from "@seriousme/openapi-schema-validator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HttpProfile, http_profile } from "../../gen/docflow/legacy/options_pb";
import { http } from "../../gen/google/api/annotations_pb";
import { FieldBehavior, field_behavior } from "../../gen/google/api/field_behavior_pb";
import { HttpRuleSchema } from "../../gen/google/api/http_pb";
import { protoComments } from "../../gen/proto-comments";
import { openApiDocument } from "../../scripts/openapi";
import { GROUP_NAME_PATTERN } from "../../src/domain/counteragent-groups";
import { MAX_INDEX_KEY_LENGTH } from "../../src/domain/index-key";
import { SUBSCRIPTION_CATALOG } from "../../src/domain/subscriptions";
import { ID_MAX_LENGTH, ID_PATTERN } from "../../src/domain/validate";
import { createServiceTranscoder } from "../../src/http/transcoding";
import { LEGACY_PROFILE_NAME } from "../../src/legacy/profile";
import { servedMethods } from "../../src/rpc/pipeline";
import { buildOpenApi } from "../../src/transcoder/openapi";
import { LibraryService, routesWithBooks } from "../support/book-service";
import { authHeader, BOX, baseFixture, HEAD, USERS } from "../support/fixture";
import { type Harness, legacy, startHarness } from "../support/harness";

// The document is plain JSON read back from the server; its shape is what the tests check.
// biome-ignore lint/suspicious/noExplicitAny: walking arbitrary JSON
type Json = Record<string, any>;

let h: Harness;
let doc: Json;
beforeAll(async () => {
  const fixture = baseFixture();
  const box = fixture.boxes[0] as Json;
  box.employees[0].canDeleteRestoreDocuments = true;
  box.employees[0].documentAccessLevel = "AllDocuments";
  box.messages = [
    { messageId: "m-1", isDeleted: true, documents: [{ documentId: "d-1", isDeleted: true }] },
  ];
  box.counteragents = [
    { counteragentBoxId: "ca-1", joinedGroupAt: "2026-01-01T00:00:00Z" },
    { counteragentBoxId: "ca-2", joinedGroupAt: "2026-01-02T00:00:00Z" },
  ];
  // With docs/transcoding.md's example added as the doc says (test/support/book-service.ts):
  // a REST binding beside the legacy paths must leave every check below true.
  h = await startHarness(fixture, undefined, undefined, { routes: routesWithBooks });
  const res = await legacy(h, { method: "GET", path: "/openapi.json" });
  expect(res.status).toBe(200);
  expect(res.headers["content-type"]).toBe("application/json; charset=utf-8");
  doc = JSON.parse(res.text);
});
afterAll(async () => {
  await h?.close();
});

const operations = () =>
  Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([verb, op]) => ({ path, verb, op: op as Json })),
  );

/** What the server of this file serves: the service's methods, and the doc's example. */
const SERVED = [...servedMethods(), ...LibraryService.methods];
/** The legacy paths, from the rules: the bindings the legacy profile serves. */
const LEGACY_PATHS = new Set(
  createServiceTranscoder(SERVED)
    .bindings.filter((b) => b.profile.name === LEGACY_PROFILE_NAME)
    .map((b) => b.template.source),
);
/** The legacy API's operations: what the checks of the legacy style look at. */
const legacyOperations = () => operations().filter((o) => LEGACY_PATHS.has(o.path));

describe("GET /openapi.json", () => {
  it("validates against the OpenAPI 3.1 schema", async () => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("is the document `npm run openapi` writes, naming the server by the URL it was fetched with", () => {
    expect(doc.servers).toEqual([{ url: `http://127.0.0.1:${h.port}` }]);
    expect(doc).toEqual(
      JSON.parse(JSON.stringify(openApiDocument(`http://127.0.0.1:${h.port}`, SERVED))),
    );
  });

  it("lists every legacy path with its verb, and the REST bindings beside them", () => {
    expect(LEGACY_PATHS.size).toBe(11);
    expect(
      legacyOperations()
        .map((o) => `${o.verb.toUpperCase()} ${o.path}`)
        .sort(),
    ).toEqual([
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
    // Every other binding (ours, and the example's, docs/transcoding.md), derived from the
    // rules: one operation each, in the JSON profile's style. A REST binding added as the
    // doc says lands here with no list to update.
    const rest = operations().filter((o) => !LEGACY_PATHS.has(o.path));
    const standard = createServiceTranscoder(SERVED).bindings.filter(
      (b) => b.profile.name !== LEGACY_PROFILE_NAME,
    );
    expect(standard.length).toBeGreaterThanOrEqual(2);
    expect(rest.map((o) => `${o.verb.toUpperCase()} ${o.op["x-rpc"]}`).sort()).toEqual(
      standard.map((b) => `${b.httpMethod} /${b.method.parent.typeName}/${b.method.name}`).sort(),
    );
  });

  it("query parameters: required ones, types, the limits of count", () => {
    const list = doc.paths["/GetCounteragentsFromGroup"].get.parameters as Json[];
    const byName = Object.fromEntries(list.map((p) => [p.name, p]));
    expect(byName.boxId).toMatchObject({ in: "query", required: true, schema: { type: "string" } });
    expect(byName.counteragentGroupId.required).toBe(true);
    expect(byName.afterIndexKey.required).toBe(false);
    expect(byName.count).toMatchObject({
      required: false,
      schema: { type: "integer", minimum: 1, maximum: 100, default: 100 },
    });
    const restore = Object.fromEntries(
      (doc.paths["/Restore"].post.parameters as Json[]).map((p) => [p.name, p.required]),
    );
    expect(restore).toEqual({ boxId: true, messageId: true, documentId: false });
    // Delete also takes the name old SDKs send for documentId, deprecated.
    const del = Object.fromEntries(
      (doc.paths["/Delete"].post.parameters as Json[]).map((p) => [p.name, p]),
    );
    expect(Object.keys(del)).toEqual(["boxId", "messageId", "documentId", "entityId"]);
    expect(del.entityId).toMatchObject({ required: false, deprecated: true, in: "query" });
    expect(del.entityId.schema).toEqual(del.documentId.schema);
    expect(del.entityId.description).toContain("documentId");
  });

  it("counteragent groups: page and count, a required body for Create only, AnyDepartment read as a string or a boolean", () => {
    const list = Object.fromEntries(
      (doc.paths["/GetCounteragentGroups"].get.parameters as Json[]).map((p) => [p.name, p]),
    );
    expect(list.page).toMatchObject({
      required: false,
      schema: { type: "integer", minimum: 1, default: 1 },
    });
    expect(list.count).toMatchObject({ schema: { minimum: 1, maximum: 100, default: 100 } });
    const add = (doc.paths["/AddCounteragentToGroup"].post.parameters as Json[]).map((p) => [
      p.name,
      p.required,
    ]);
    expect(add).toEqual([
      ["boxId", true],
      ["counteragentBoxId", true],
      ["counteragentGroupId", true],
    ]);
    expect(doc.paths["/AddCounteragentToGroup"].post.requestBody).toBeUndefined();
    expect(doc.paths["/DeleteCounteragentGroup"].post.responses["200"].content).toBeUndefined();
    expect(doc.paths["/CreateCounteragentGroup"].post.requestBody.required).toBe(true);
    expect(doc.paths["/UpdateCounteragentGroup"].post.requestBody.required).toBe(false);
    const group = doc.components.schemas["docflow.legacy.CounteragentGroup"];
    expect(group.required).toEqual(["CounteragentGroupId", "Name"]);
    // Groups is in every answer (empty or not): required, so generated clients type it as always there.
    expect(doc.components.schemas["docflow.legacy.CounteragentGroupsList"].required).toEqual([
      "Groups",
      "TotalCount",
    ]);
    const patch = doc.components.schemas["docflow.legacy.CounteragentGroupDepartmentPatch"];
    // A string enum (a type mixing strings and booleans breaks generators); booleans accepted, as said.
    expect(patch.properties.AnyDepartment).toMatchObject({
      type: "string",
      enum: ["true", "false"],
    });
    expect(patch.properties.AnyDepartment.description).toContain(
      "the JSON booleans true and false are accepted too",
    );
    expect(patch.required).toEqual(["AnyDepartment"]);
    // AnyDepartment true: no department listed; false: at least one (else a 400): said in
    // prose, not as a oneOf generators cannot express.
    expect(patch.oneOf).toBeUndefined();
    expect(patch.description).toContain("CounteragentGroup.InvalidDepartments");
    for (const verb of ["/UpdateCounteragentGroup", "/DeleteCounteragentGroup"]) {
      const group = (doc.paths[verb].post.parameters as Json[]).find(
        (p) => p.name === "counteragentGroupId",
      );
      expect(group?.schema.not, verb).toEqual({ const: HEAD });
    }
  });

  it("bodies and responses in both media types, legacy JSON names, IsSubscribed as a string enum", () => {
    const update = doc.paths["/UpdateSubscriptions"].post;
    expect(Object.keys(update.requestBody.content)).toEqual([
      "application/json",
      "application/x-protobuf",
    ]);
    expect(Object.keys(update.responses["200"].content)).toEqual([
      "application/json",
      "application/x-protobuf",
    ]);
    const subscription = doc.components.schemas["docflow.legacy.Subscription"];
    expect(subscription.properties.IsSubscribed).toMatchObject({
      type: "string",
      enum: ["true", "false"],
    });
    expect(subscription.required).toEqual(["Id", "IsSubscribed"]);
    const page = doc.components.schemas["docflow.legacy.CounteragentFromGroupResponse"];
    expect(Object.keys(page.properties)).toEqual([
      "CounteragentBoxId",
      "TotalCount",
      "AfterIndexKey",
    ]);
    // CounteragentBoxId is written even when empty; AfterIndexKey only when there is a next page.
    expect(page.required).toEqual(["CounteragentBoxId", "TotalCount"]);
    expect(doc.components.schemas["docflow.legacy.EmployeeSubscriptions"].required).toEqual([
      "Subscriptions",
    ]);
    expect(doc.paths["/Restore"].post.responses["200"].content).toBeUndefined();
  });

  it("every documented status per operation, with the X-Service-ErrorCode header", () => {
    const statuses = (path: string, verb: string) => Object.keys(doc.paths[path][verb].responses);
    // Every operation may be refused for load: 429 (a client over its share), 503 (over capacity).
    const load = ["429", "500", "503"];
    const common = ["200", "400", "401", "402", "403", "404", "405", ...load];
    const withConflict = ["200", "400", "401", "402", "403", "404", "405", "409", ...load];
    expect(statuses("/Restore", "post")).toEqual(withConflict);
    expect(statuses("/Delete", "post")).toEqual(withConflict);
    expect(statuses("/GetCounteragentsFromGroup", "get")).toEqual(common);
    expect(statuses("/GetSubscriptions", "get")).toEqual(common);
    // 413: only where a body is read.
    expect(statuses("/UpdateSubscriptions", "post")).toEqual([
      ...common.slice(0, 7),
      "413",
      ...load,
    ]);
    // The counteragent groups (docs/api.md §6.4): a 404 only where a group or counteragent is addressed.
    const noNotFound = common.filter((s) => s !== "404");
    expect(statuses("/CreateCounteragentGroup", "post")).toEqual([
      ...noNotFound.slice(0, 6),
      "409",
      "413",
      ...load,
    ]);
    expect(statuses("/UpdateCounteragentGroup", "post")).toEqual([
      ...withConflict.slice(0, 8),
      "413",
      ...load,
    ]);
    expect(statuses("/DeleteCounteragentGroup", "post")).toEqual(common);
    expect(statuses("/GetCounteragentGroup", "get")).toEqual(common);
    expect(statuses("/GetCounteragentGroups", "get")).toEqual(noNotFound);
    expect(statuses("/AddCounteragentToGroup", "post")).toEqual(withConflict);
    for (const { op } of legacyOperations()) {
      for (const [status, response] of Object.entries(op.responses as Json)) {
        expect(response.description, status).toMatch(/\w/);
        if (status !== "200") {
          expect(response.headers["X-Service-ErrorCode"]).toEqual({
            $ref: "#/components/headers/X-Service-ErrorCode",
          });
        }
      }
    }
    expect(doc.paths["/Restore"].post.responses["409"].description).toMatch(/Repeated restore/);
  });

  it("error answers: problem+json first (generators type the body by it), headers only where the server sends them", async () => {
    for (const { path, verb, op } of legacyOperations()) {
      for (const [status, response] of Object.entries(op.responses as Json)) {
        if (status === "200") continue;
        const where = `${verb} ${path} ${status}`;
        expect(Object.keys(response.content), where).toEqual([
          "application/problem+json",
          "text/plain",
        ]);
        const headers = Object.keys(response.headers).sort();
        const expected = ["X-Service-ErrorCode"];
        if (status === "401" || status === "403") expected.push("WWW-Authenticate");
        if (status === "405") expected.push("Allow");
        if (status === "429" || status === "503") expected.push("Retry-After");
        expect(headers, where).toEqual(expected.sort());
      }
    }
    // What the server sends: a 401 has the challenge; a 404 does not.
    const unauthenticated = await legacy(h, {
      method: "GET",
      path: `/GetSubscriptions?boxId=${BOX}&userId=${USERS.admin.userId}`,
      headers: { accept: "application/json" },
    });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers["www-authenticate"]).toMatch(/^ServiceAuth/);
    expect(unauthenticated.headers["content-type"]).toBe("application/problem+json");
    const notFound = await legacy(h, {
      method: "POST",
      path: `/Restore?boxId=${BOX}&messageId=m-none`,
      headers: { authorization: authHeader("admin"), accept: "application/json" },
    });
    expect(notFound.status).toBe(404);
    expect(notFound.headers["www-authenticate"]).toBeUndefined();
    expect(Object.keys(JSON.parse(notFound.text)).sort()).toEqual(
      [...doc.components.schemas.Problem.required].sort(),
    );
  });

  it("summaries and descriptions come from the proto comments", () => {
    const get = doc.paths["/GetSubscriptions"].get;
    const comment = protoComments["docflow.api.v1.SubscriptionService.GetSubscriptions"];
    expect(comment).toBeDefined();
    expect(get.description).toBe(comment);
    expect(get.summary).toBe("Returns every subscription of the employee, in catalog order.");
    for (const { path, op } of legacyOperations()) {
      expect(op.summary, path).not.toBe(op.operationId);
      expect(op.summary, path).toMatch(/^[A-Z].*\.$/);
      expect(op.summary, path).not.toContain("\n");
    }
  });

  it("says, where generated-client users read it, that JSON needs Accept: application/json, and that protobuf users generate from the proto files", () => {
    const description = doc.info.description as string;
    expect(description).toContain("Send `Accept: application/json` to get JSON.");
    expect(description).toContain('headers: { Accept: "application/json" }');
    expect(description).toContain(".proto files");
    expect(doc.paths["/GetSubscriptions"].get.responses["200"].description).toContain(
      "JSON when Accept contains application/json",
    );
  });

  it("the ServiceAuth and Bearer security schemes apply to every operation, either one", () => {
    expect(doc.components.securitySchemes.Bearer).toMatchObject({
      type: "http",
      scheme: "bearer",
      bearerFormat: "JWT",
    });
    expect(doc.components.securitySchemes.ServiceAuth).toMatchObject({
      type: "apiKey",
      in: "header",
      name: "Authorization",
    });
    expect(doc.security).toEqual([{ ServiceAuth: [] }, { Bearer: [] }]);
  });

  it("descriptions come from the proto comments", () => {
    expect(doc.paths["/Restore"].post.description).toBe(
      protoComments["docflow.api.v1.DocumentService.Restore"],
    );
    expect(doc.paths["/Restore"].post.description).toMatch(/deletion mark/);
  });
});

describe("the document is exactly as strict as the server (a schema-driven fuzzer finds no mismatch)", () => {
  const parameter = (path: string, verb: string, name: string): Json =>
    (doc.paths[path][verb].parameters as Json[]).find((p) => p.name === name) ?? {};
  /** A string against a string schema as JSON Schema reads it: lengths in code points, the pattern an ECMA regex with u. */
  const satisfies = (schema: Json, value: string) => {
    const length = [...value].length;
    return (
      length >= (schema.minLength ?? 0) &&
      length <= (schema.maxLength ?? Number.POSITIVE_INFINITY) &&
      new RegExp(schema.pattern ?? "", "u").test(value)
    );
  };
  const ids = [
    "x",
    "ü",
    "a b",
    " a ",
    "\u00a0x",
    "😀".repeat(256),
    "x".repeat(256),
    "",
    " ",
    "\t",
    "\u00a0",
    "\u3000\ufeff\u2028 ",
    "a\u0000",
    "a\u0009b",
    "a\u001f",
    "a\u007f",
    "a\u0080",
    "a\u0085",
    "a\u009f",
    "a\u00a0",
    "😀".repeat(257),
    "x".repeat(257),
  ];

  it("every identifier parameter carries the identifier rule: 1–256 characters, a pattern, not only white space", () => {
    const rule = { type: "string", minLength: 1, maxLength: ID_MAX_LENGTH, pattern: ID_PATTERN };
    for (const [path, verb, name] of [
      ["/GetSubscriptions", "get", "boxId"],
      ["/GetSubscriptions", "get", "userId"],
      ["/UpdateSubscriptions", "post", "userId"],
      ["/Restore", "post", "messageId"],
      ["/Delete", "post", "documentId"],
      ["/GetCounteragentsFromGroup", "get", "counteragentGroupId"],
    ] as const) {
      expect(parameter(path, verb, name).schema, `${path} ${name}`).toMatchObject(rule);
    }
    // C0, DEL and C1 alike; white space as trim() knows it.
    expect(ID_PATTERN).toContain("\\u0000-\\u001F\\u007F-\\u009F");
  });

  it("the identifier schema accepts exactly what the server accepts (required: boxId)", async () => {
    const schema = parameter("/GetSubscriptions", "get", "boxId").schema;
    for (const value of ids) {
      const res = await legacy(h, {
        method: "GET",
        path: `/GetSubscriptions?boxId=${encodeURIComponent(value)}&userId=${USERS.admin.userId}`,
        headers: { authorization: authHeader("admin") },
      });
      // Valid: an unknown box (403); invalid: 400.
      expect(res.status, JSON.stringify(value)).toBe(satisfies(schema, value) ? 403 : 400);
    }
  });

  it("an optional identifier: the same rule, and an empty value means absent (said in words: allowEmptyValue is deprecated)", async () => {
    const documentId = parameter("/Restore", "post", "documentId");
    expect(documentId).toMatchObject({ required: false });
    expect(documentId.allowEmptyValue).toBeUndefined();
    expect(documentId.description).toContain("An empty value means absent.");
    expect(parameter("/Restore", "post", "boxId").description ?? "").not.toContain("empty value");
    for (const value of ids) {
      const res = await legacy(h, {
        method: "POST",
        path: `/Restore?boxId=${BOX}&messageId=m-none&documentId=${encodeURIComponent(value)}`,
        headers: { authorization: authHeader("admin") },
      });
      const accepted = value === "" || satisfies(documentId.schema, value);
      // Valid or absent: no such message (404); invalid: 400.
      expect(res.status, JSON.stringify(value)).toBe(accepted ? 404 : 400);
    }
  });

  it("the resource API: a path identifier accepts exactly what the server accepts; its page tokens, sizes, request ids, masks and If-Match have the server's rules", async () => {
    const v1 = "/v1/boxes/{box_id}/employees/{user_id}/subscriptions";
    const box = parameter(v1, "get", "box_id").schema;
    expect(box).toMatchObject({ minLength: 1, maxLength: ID_MAX_LENGTH, pattern: ID_PATTERN });
    for (const value of ids.filter((v) => v !== "" && !v.includes("/"))) {
      const res = await legacy(h, {
        method: "GET",
        path: `/v1/boxes/${encodeURIComponent(value)}/employees/${USERS.admin.userId}/subscriptions`,
        headers: { authorization: authHeader("admin") },
      });
      // Valid: an unknown box (403); invalid: 400.
      expect(res.status, JSON.stringify(value)).toBe(satisfies(box, value) ? 403 : 400);
    }
    const groups = "/v1/boxes/{box_id}/counteragentGroups";
    expect(parameter(groups, "get", "pageSize").schema).toMatchObject({ minimum: 0 });
    /** The schema takes each of `accepted` and none of `refused`. */
    const judges = (schema: Json, accepted: string[], refused: string[]) => {
      for (const value of accepted) expect(satisfies(schema, value), value).toBe(true);
      for (const value of refused) expect(satisfies(schema, value), value).toBe(false);
    };
    judges(parameter(groups, "get", "pageToken").schema, [""], ["A".repeat(21)]);
    judges(
      parameter(groups, "post", "requestId").schema,
      ["5f0c3e2a-1b7d-4c1e-9a55-0d6f2b8e4a10"],
      ["not-a-uuid"],
    );
    const group = `${groups}/{counteragent_group_id}`;
    judges(
      parameter(group, "patch", "updateMask").schema,
      ["name", "Name,groupDepartments", "*"],
      ["group_departments", "color"],
    );
    judges(
      parameter(group, "patch", "If-Match").schema,
      ["*", '"a", W/"b"'],
      ["", '"a""b"', "abc"],
    );
    // A body key that names no field is a 400 (proto3 JSON as the JSON profile reads it).
    expect(doc.components.schemas["docflow.legacy.CounteragentGroupToUpdate.json"]).toMatchObject({
      additionalProperties: false,
    });
    expect(doc.paths[groups].post.requestBody).toMatchObject({ required: true });
  });

  it("a group's Name: the schema accepts exactly what the server accepts", async () => {
    const create = doc.components.schemas["docflow.legacy.CounteragentGroupToCreate"];
    const update = doc.components.schemas["docflow.legacy.CounteragentGroupToUpdate"];
    expect(create.properties.Name.pattern).toBe(GROUP_NAME_PATTERN);
    expect(update.properties.Name.pattern).toBe(GROUP_NAME_PATTERN);
    const names = [
      "x",
      "  Key accounts \t",
      "a b",
      "𝔸".repeat(100),
      ` ${"x".repeat(100)}\u3000`,
      "",
      " ",
      "\t\n",
      "x".repeat(101),
      "𝔸".repeat(101),
      "a\u0000b",
      "a\u0085",
      "\u001Ca",
      "\u00a0a\u00a0",
    ];
    for (const name of names) {
      // Each name on a box with no groups, so that only the Name rule can refuse it.
      await h.db.collection("counteragentGroups").deleteMany({ boxId: BOX });
      const res = await legacy(h, {
        method: "POST",
        path: `/CreateCounteragentGroup?boxId=${BOX}`,
        headers: { authorization: authHeader("admin"), "content-type": "application/json" },
        body: JSON.stringify({ Name: name }),
      });
      const valid = satisfies(create.properties.Name, name);
      expect(res.status, JSON.stringify(name)).toBe(valid ? 200 : 400);
    }
  });

  it("count: an integer from 1 to 100; empty means the default", async () => {
    const count = parameter("/GetCounteragentsFromGroup", "get", "count");
    expect(count).toMatchObject({ schema: { type: "integer", minimum: 1, maximum: 100 } });
    expect(count.description).toContain("An empty value means absent.");
    const status = async (value: string) =>
      (
        await legacy(h, {
          method: "GET",
          path: `/GetCounteragentsFromGroup?boxId=${BOX}&counteragentGroupId=${HEAD}&count=${value}`,
          headers: { authorization: authHeader("admin") },
        })
      ).status;
    for (const value of ["", "1", "100"]) expect(await status(value), value).toBe(200);
    for (const value of ["0", "101", "1.5", "1e2", "abc", "-1"])
      expect(await status(value), value).toBe(400);
  });

  it("afterIndexKey: the shape of the keys the server issues; empty means absent", async () => {
    const key = parameter("/GetCounteragentsFromGroup", "get", "afterIndexKey");
    expect(key.description).toContain("An empty value means absent.");
    expect(key).toMatchObject({
      required: false,
      schema: {
        type: "string",
        minLength: 22,
        maxLength: MAX_INDEX_KEY_LENGTH,
        pattern: "^[A-Za-z0-9_-]+$",
      },
    });
    const page = await legacy(h, {
      method: "GET",
      path: `/GetCounteragentsFromGroup?boxId=${BOX}&counteragentGroupId=${HEAD}&count=1&afterIndexKey=`,
      headers: { authorization: authHeader("admin"), accept: "application/json" },
    });
    expect(page.status).toBe(200);
    const issued = JSON.parse(page.text).AfterIndexKey as string;
    expect(satisfies(key.schema, issued), issued).toBe(true);
  });

  it("subscription Ids: the catalog as an enum, each Id at most once in an update", async () => {
    const input = doc.components.schemas["docflow.legacy.Subscription.Input"];
    const output = doc.components.schemas["docflow.legacy.Subscription"];
    expect(input.properties.Id.enum).toEqual([...SUBSCRIPTION_CATALOG]);
    expect(output.properties.Id.enum).toEqual([...SUBSCRIPTION_CATALOG]);
    const list =
      doc.components.schemas["docflow.legacy.SubscriptionsToUpdate"].properties.Subscriptions;
    expect(list.items).toEqual({ $ref: "#/components/schemas/docflow.legacy.Subscription.Input" });
    expect(list.maxItems).toBe(SUBSCRIPTION_CATALOG.length);
    expect(list.allOf).toHaveLength(SUBSCRIPTION_CATALOG.length);
    expect(list.allOf[0]).toEqual({
      contains: {
        type: "object",
        properties: { Id: { const: SUBSCRIPTION_CATALOG[0] } },
        required: ["Id"],
      },
      minContains: 0,
      maxContains: 1,
    });
    const update = (body: string) =>
      legacy(h, {
        method: "POST",
        path: `/UpdateSubscriptions?boxId=${BOX}&userId=${USERS.admin.userId}`,
        headers: { authorization: authHeader("admin"), "content-type": "application/json" },
        body,
      });
    expect((await update('{"Subscriptions":[{"Id":"news","IsSubscribed":"true"}]}')).status).toBe(
      400,
    );
    expect(
      (
        await update(
          '{"Subscriptions":[{"Id":"News","IsSubscribed":"true"},{"Id":"News","IsSubscribed":"false"}]}',
        )
      ).status,
    ).toBe(400);
  });

  it("IsSubscribed: written as a string, read as a string or a boolean; optional fields may be null on input", async () => {
    const input = doc.components.schemas["docflow.legacy.Subscription.Input"];
    const output = doc.components.schemas["docflow.legacy.Subscription"];
    expect(output.properties.IsSubscribed).toMatchObject({
      type: "string",
      enum: ["true", "false"],
    });
    expect(input.properties.IsSubscribed).toMatchObject({
      type: "string",
      enum: ["true", "false"],
    });
    expect(input.properties.IsSubscribed.description).toContain(
      "the JSON booleans true and false are accepted too",
    );
    const list =
      doc.components.schemas["docflow.legacy.SubscriptionsToUpdate"].properties.Subscriptions;
    expect(list.type).toEqual(["array", "null"]);
    for (const body of [
      '{"Subscriptions":[{"Id":"News","IsSubscribed":true}]}',
      '{"Subscriptions":[{"Id":"News","IsSubscribed":"false"}]}',
      '{"Subscriptions":null}',
      "{}",
    ]) {
      const res = await legacy(h, {
        method: "POST",
        path: `/UpdateSubscriptions?boxId=${BOX}&userId=${USERS.admin.userId}`,
        headers: {
          authorization: authHeader("admin"),
          "content-type": "application/json",
          accept: "application/json",
        },
        body,
      });
      expect(res.status, body).toBe(200);
      expect(res.text).toMatch(/"IsSubscribed":"(true|false)"/);
    }
  });

  it("the body of UpdateSubscriptions is optional: no body at all is the empty message (200)", async () => {
    expect(doc.paths["/UpdateSubscriptions"].post.requestBody.required).toBe(false);
    const res = await legacy(h, {
      method: "POST",
      path: `/UpdateSubscriptions?boxId=${BOX}&userId=${USERS.admin.userId}`,
      headers: { authorization: authHeader("admin") },
    });
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toBe("application/x-protobuf");
  });
});

describe("every operation of the document, called as the document describes it", () => {
  const samples: Record<string, string> = {
    boxId: BOX,
    userId: USERS.admin.userId,
    messageId: "m-1",
    counteragentGroupId: HEAD,
  };
  /** A minimal JSON value of a schema: required properties only, empty arrays. */
  const minimal = (schema: Json): unknown => {
    const target = schema.$ref
      ? doc.components.schemas[String(schema.$ref).split("/").pop() ?? ""]
      : schema;
    if (target.type === "object") {
      return Object.fromEntries(
        (target.required ?? []).map((k: string) => [k, minimal(target.properties[k])]),
      );
    }
    if (target.type === "array") return [];
    if (target.enum) return target.enum[0];
    return target.type === "integer" ? 1 : "x";
  };

  it("each one reaches the server and gets a documented status", async () => {
    const seen: string[] = [];
    for (const { path, verb, op } of legacyOperations()) {
      const query = new URLSearchParams();
      for (const p of op.parameters as Json[]) {
        if (p.required) query.set(p.name, samples[p.name] ?? "x");
        else if (p.schema.default !== undefined) query.set(p.name, String(p.schema.default));
      }
      const json = op.requestBody?.content["application/json"];
      const res = await legacy(h, {
        method: verb.toUpperCase(),
        path: `${path}?${query}`,
        headers: {
          authorization: authHeader("admin"),
          accept: "application/json",
          ...(json ? { "content-type": "application/json" } : {}),
        },
        body: json ? JSON.stringify(minimal(json.schema)) : undefined,
      });
      expect(Object.keys(op.responses), `${verb} ${path}: ${res.status} ${res.text}`).toContain(
        String(res.status),
      );
      seen.push(`${path} ${res.status}`);
    }
    expect(seen).toEqual(
      expect.arrayContaining([
        "/GetSubscriptions 200",
        "/UpdateSubscriptions 200",
        "/Restore 200",
        "/Delete 200",
        "/GetCounteragentsFromGroup 200",
        "/CreateCounteragentGroup 200",
        "/UpdateCounteragentGroup 400",
        "/DeleteCounteragentGroup 400",
        "/GetCounteragentGroup 200",
        "/GetCounteragentGroups 200",
        "/AddCounteragentToGroup 404",
      ]),
    );
  });
});

describe("an RPC with an http rule appears in the document with no other code", () => {
  it("a test-only service from a descriptor built here", () => {
    const methodOptions = create(MethodOptionsSchema);
    setExtension(
      methodOptions,
      http,
      create(HttpRuleSchema, { pattern: { case: "get", value: "/Ping" } }),
    );
    setExtension(methodOptions, http_profile, HttpProfile.LEGACY);
    const required = create(FieldOptionsSchema);
    setExtension(required, field_behavior, [FieldBehavior.REQUIRED]);
    const file = create(FileDescriptorProtoSchema, {
      name: "test/extra.proto",
      package: "test.extra.v1",
      syntax: "proto3",
      messageType: [
        {
          name: "PingRequest",
          field: [
            {
              name: "box_id",
              jsonName: "boxId",
              number: 1,
              type: FieldDescriptorProto_Type.STRING,
              label: FieldDescriptorProto_Label.OPTIONAL,
              options: required,
            },
            {
              name: "echo",
              jsonName: "echo",
              number: 2,
              type: FieldDescriptorProto_Type.STRING,
              label: FieldDescriptorProto_Label.OPTIONAL,
            },
          ],
        },
        {
          name: "PingResponse",
          field: [
            {
              name: "Text",
              jsonName: "Text",
              number: 1,
              type: FieldDescriptorProto_Type.STRING,
              label: FieldDescriptorProto_Label.OPTIONAL,
            },
          ],
        },
      ],
      service: [
        {
          name: "ExtraService",
          method: [
            {
              name: "Ping",
              inputType: ".test.extra.v1.PingRequest",
              outputType: ".test.extra.v1.PingResponse",
              options: methodOptions,
            },
          ],
        },
      ],
    });
    const extra = createFileRegistry(file, () => undefined).getService(
      "test.extra.v1.ExtraService",
    );
    expect(extra).toBeDefined();
    const methods = [...SERVED, ...(extra?.methods ?? [])];
    const comments: Record<string, string> = { "test.extra.v1.ExtraService.Ping": "Answers pong." };
    const extended = buildOpenApi(createServiceTranscoder(methods).bindings, {
      info: { title: "test", version: "test" },
      serverUrl: "http://127.0.0.1:8080",
      describe: (name) => comments[name],
    }) as Json;
    expect(extended.paths["/Ping"].get).toMatchObject({
      operationId: "Ping",
      description: "Answers pong.",
      parameters: [
        { name: "boxId", required: true },
        { name: "echo", required: false },
      ],
    });
    expect(Object.keys(extended.paths["/Ping"].get.responses["200"].content)).toEqual([
      "application/json",
      "application/x-protobuf",
    ]);
    expect(Object.keys(extended.paths)).toHaveLength(Object.keys(doc.paths).length + 1);
  });
});

describe("docs/transcoding.md's example, added as the doc says, serves its bindings", () => {
  it.each([
    ["/v1/shelves/s1/books/b1", "shelves/s1/books/b1"],
    ["/v1/books/any/depth/b2", "any/depth/b2"],
  ])("GET %s: 200, the book as proto JSON", async (path, name) => {
    const res = await legacy(h, {
      method: "GET",
      path,
      headers: { authorization: authHeader("admin") },
    });
    expect(res.status, res.text).toBe(200);
    expect(JSON.parse(res.text)).toEqual({ name, title: `The book ${name}` });
  });

  it("the same call without credentials: 401, as every call", async () => {
    const res = await legacy(h, { method: "GET", path: "/v1/shelves/s1/books/b1" });
    expect(res.status).toBe(401);
  });
});
