/**
 * The transcoder (src/transcoder) on our front door: the service's one
 * transcoder (every rule of every method served, each by its profile, the
 * JSON profile's statuses from the error table), a Node request as its
 * Exchange (the body read by wire/body.ts with the size limit and
 * Content-Encoding, answers compressed by Accept-Encoding), and the pipeline
 * as its Invoker (callUnary, callStream: the interceptors every protocol
 * runs).
 */
import { createHash } from "node:crypto";
import {
  type DescField,
  type DescMethod,
  getOption,
  hasOption,
  type Registry,
} from "@bufbuild/protobuf";
import { http } from "../../gen/google/api/annotations_pb";
import { callStream } from "../call/stream";
import { callUnary } from "../call/unary";
import { createLegacyProfile, isLegacy } from "../legacy/profile";
import type { FrontCall } from "../protocols/face";
import type { Pipeline } from "../rpc/pipeline";
import {
  DecodeFailure,
  type Exchange,
  type Invoker,
  type StreamWriter,
} from "../transcoder/exchange";
import { createJsonProfile } from "../transcoder/json-profile";
import type { Profile } from "../transcoder/profile";
import type { Binding } from "../transcoder/rules";
import { createTranscoder, httpBindingKey, type Transcoder } from "../transcoder/transcoder";
import { readDecodedBody } from "../wire/body";
import { COMPRESS_MIN_BYTES, compress, negotiateCoding } from "../wire/compression";
import { restStatusOf } from "../wire/errors";
import { type NodeRequest, type NodeResponse, requestHeaders, writeChunk } from "../wire/http";
import { addVary } from "../wire/plain";

/**
 * Every rule of `methods`, one table: the legacy paths by the legacy profile,
 * the standard bindings by the JSON profile, which answers an error with the
 * error table's status (the Connect column, google/rpc/code.proto's too).
 * The profile follows the binding: a legacy method's rule is its legacy
 * path, and its additional bindings are standard ones.
 */
export function createServiceTranscoder(
  methods: readonly DescMethod[],
  jsonRegistry?: Registry,
): Transcoder {
  const jsonProfile = createJsonProfile({
    registry: jsonRegistry,
    statusOf: restStatusOf,
    // Every answer depends on who asks (their rights, their reach): a private cache may
    // keep it, and must revalidate with the ETag before reusing it (docs/api.md §3.1).
    etagOf: (body) => `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`,
    cacheControl: "private, no-cache",
    created: createsOf(methods),
  });
  const legacyProfile = createLegacyProfile(methods);
  return createTranscoder(methods, {
    ruleOf: (method) => (hasOption(method, http) ? getOption(method, http) : undefined),
    profileOf: (method, index) => (index === 0 && isLegacy(method) ? legacyProfile : jsonProfile),
    // Google's Go REST client sends a "/" inside a one-segment variable raw (docs/transcoding.md).
    slashInSingleSegmentVariables: true,
  });
}

/**
 * Which standard bindings create a resource (AIP-133), derived from the
 * rules: a POST to a collection (`…/groups`, no `:verb`) whose method's
 * answer is the message a GET of `…/groups/{x}` answers with, and which has
 * a field named as x's is (case and underscores aside: `counteragent_group_id`
 * and `CounteragentGroupId`). That field names the created resource under
 * the request's path: a 201 with Location (docs/api.md §3.1).
 */
function createsOf(
  methods: readonly DescMethod[],
): (binding: Binding<Profile>) => DescField | undefined {
  const gets = new Map<string, string>();
  for (const method of methods) {
    for (const rule of rulesOf(method)) {
      if (rule.pattern.case !== "get") continue;
      // `…/collection/{field}`: the last segment a variable of one plain field.
      const path = rule.pattern.value;
      const at = path.lastIndexOf("/{");
      const name = path.slice(at + 2, -1);
      if (at < 0 || !path.endsWith("}") || name.includes("=") || name.includes(".")) continue;
      gets.set(`${method.output.typeName} ${path.slice(0, at)}`, name);
    }
  }
  const fold = (name: string) => name.replaceAll("_", "").toLowerCase();
  const found = new Map<string, DescField | undefined>();
  return (binding) => {
    if (binding.httpMethod !== "POST" || binding.responseField) return undefined;
    const key = `${binding.method.output.typeName} ${binding.template.source}`;
    if (!found.has(key)) {
      const name = gets.get(key);
      found.set(
        key,
        name === undefined
          ? undefined
          : binding.method.output.fields.find(
              (f) => f.fieldKind === "scalar" && fold(f.name) === fold(name),
            ),
      );
    }
    return found.get(key);
  };
}

/** A method's google.api.http rule and its additional bindings. */
function rulesOf(method: DescMethod) {
  if (!hasOption(method, http)) return [];
  const rule = getOption(method, http);
  return [rule, ...rule.additionalBindings];
}

/** What a transcoded call carries to the pipeline. */
export interface TranscodedCall {
  readonly req: NodeRequest;
  /** The answer's stream: the call is aborted if it closes before the answer is finished. */
  readonly res: NodeResponse;
  readonly front: FrontCall;
  readonly binding: Binding<Profile>;
  /** HandlerContext.protocolName: "legacy" or "http". */
  readonly protocolName: string;
  /** HandlerContext.url: the legacy path as declared, or the request's path. */
  readonly url: string;
}

export function exchangeOf(req: NodeRequest, res: NodeResponse, maxBytes: number): Exchange {
  return new HttpExchange(req, res, maxBytes);
}

/** One request and its answer; a class, so that a request costs one object, not a dozen closures. */
class HttpExchange implements Exchange {
  readonly httpMethod: string;

  constructor(
    readonly req: NodeRequest,
    readonly res: NodeResponse,
    private readonly maxBytes: number,
  ) {
    this.httpMethod = req.method ?? "GET";
  }

  get path(): string {
    const url = this.req.url ?? "/";
    const q = url.indexOf("?");
    return q < 0 ? url : url.slice(0, q);
  }

  header(name: string): string | undefined {
    const value = this.req.headers[name];
    return Array.isArray(value) ? value.join(", ") : value;
  }

  get requestHeaders(): [string, string][] {
    return requestHeaders(this.req);
  }

  readBody(): Promise<Uint8Array> {
    return readDecodedBody(this.req, this.maxBytes);
  }

  skipBody(): void {
    this.req.resume();
  }

  async respond(status: number, headers: Record<string, string>, body: Uint8Array): Promise<void> {
    const { req, res } = this;
    if (res.destroyed) return;
    if (res.headersSent) {
      // Too late for an answer of its own: the client sees the one begun cut off.
      res.destroy();
      return;
    }
    res.statusCode = status;
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    let out = body;
    const coding =
      out.length >= COMPRESS_MIN_BYTES
        ? negotiateCoding(req.headers["accept-encoding"])
        : undefined;
    if (coding) {
      out = await compress(out, coding);
      res.setHeader("content-encoding", coding);
    }
    addVary(res, "Accept, Accept-Encoding");
    // A 304 has no body and says nothing of the length of the one it stands for.
    if (status !== 304) res.setHeader("content-length", String(out.length));
    if (this.httpMethod === "HEAD" || status === 304) res.end();
    else res.end(out);
  }

  startStream(status: number, headers: Record<string, string>): StreamWriter {
    const { res } = this;
    res.statusCode = status;
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    res.setHeader("cache-control", "no-cache");
    return {
      async write(chunk) {
        if (res.destroyed) return;
        if (!writeChunk(res, chunk))
          await new Promise((resolve) => res.once("drain", resolve).once("close", resolve));
      },
      end: () => {
        if (!res.destroyed) res.end();
      },
      abort: () => {
        res.destroy();
      },
    };
  }

  get closed(): boolean {
    return this.res.destroyed || this.res.writableEnded;
  }
}

/** The pipeline as the transcoder's invoker. */
export function pipelineInvoker(
  pipeline: Pipeline,
  shutdownSignal: AbortSignal,
): Invoker<TranscodedCall> {
  const initOf = (method: DescMethod, call: TranscodedCall) => {
    const route = pipeline.route(method);
    if (!route) throw new Error(`${method.name} is not served`);
    return {
      route,
      protocolName: call.protocolName,
      requestMethod: call.req.method ?? "GET",
      url: call.url,
      timeoutMs: undefined,
      requestHeader: () => requestHeaders(call.req),
      response: call.res,
      values: call.front.values.set(httpBindingKey, call.binding),
    };
  };
  return {
    // callUnary's outcome is a UnaryResult (with the call's context beside it).
    unary: (method, input, call) => callUnary(pipeline.interceptors, initOf(method, call), input),
    serverStream(method, input, call) {
      const inputs = (async function* () {
        // Read when the implementation asks for it: after the interceptors.
        const read = typeof input === "function" ? await input() : input;
        if (read instanceof DecodeFailure) throw read.reason;
        yield read;
      })();
      return callStream(pipeline.interceptors, shutdownSignal, initOf(method, call), inputs)
        .outputs;
    },
  };
}
