/**
 * The in-memory tier's transport: a connect-es `Transport` that runs calls
 * through the service's own pipeline (`callUnary`/`callStream`, the one way
 * every protocol adapter calls in), with no port and no HTTP. Each message
 * is encoded to protobuf and decoded back on the way in and out, as a wire
 * would: a message that cannot be encoded (a proto2 required field never
 * set) fails here as it fails there.
 */
import {
  type DescMessage,
  type DescMethodStreaming,
  type DescMethodUnary,
  fromBinary,
  type Message,
  type MessageShape,
  toBinary,
} from "@bufbuild/protobuf";
import {
  type ContextValues,
  createContextValues,
  type StreamResponse,
  type Transport,
  type UnaryResponse,
} from "@connectrpc/connect";
import { callStream } from "../../src/call/stream";
import { callUnary } from "../../src/call/unary";
import type { Pipeline } from "../../src/rpc/pipeline";

/** What `new Headers(…)` takes. */
type HeadersInit = ConstructorParameters<typeof Headers>[0];

const roundTrip = <T extends Message>(schema: DescMessage, message: T): T =>
  fromBinary(schema, toBinary(schema, message)) as T;

export function createInMemoryTransport(pipeline: Pipeline): Transport {
  const never = new AbortController().signal;
  const init = (
    method: DescMethodUnary | DescMethodStreaming,
    signal: AbortSignal | undefined,
    timeoutMs: number | undefined,
    header: HeadersInit | undefined,
    values: ContextValues | undefined,
  ) => {
    const route = pipeline.route(method);
    if (!route) throw new Error(`${method.name} is not served`);
    return {
      route,
      protocolName: "in-memory",
      requestMethod: "POST",
      url: route.path,
      timeoutMs,
      requestHeader: header ?? {},
      requestSignal: signal ?? never,
      values: values ?? createContextValues(),
    };
  };
  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: HeadersInit | undefined,
      input: MessageShape<I>,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      const outcome = await callUnary(
        pipeline.interceptors,
        init(method, signal, timeoutMs, header, contextValues),
        roundTrip(method.input, input as Message),
      );
      if (outcome.error) throw outcome.error;
      return {
        stream: false,
        service: method.parent,
        method,
        header: outcome.context.responseHeader,
        trailer: outcome.context.responseTrailer,
        message: roundTrip(method.output, outcome.output) as MessageShape<O>,
      };
    },
    async stream<I extends DescMessage, O extends DescMessage>(
      method: DescMethodStreaming<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: HeadersInit | undefined,
      input: AsyncIterable<MessageShape<I>>,
      contextValues?: ContextValues,
    ): Promise<StreamResponse<I, O>> {
      async function* inputs() {
        for await (const message of input) yield roundTrip(method.input, message as Message);
      }
      const call = callStream(
        pipeline.interceptors,
        never,
        init(method, signal, timeoutMs, header, contextValues),
        inputs(),
      );
      async function* outputs() {
        for await (const message of call.outputs)
          yield roundTrip(method.output, message) as MessageShape<O>;
      }
      return {
        stream: true,
        service: method.parent,
        method,
        header: call.context.responseHeader,
        trailer: call.context.responseTrailer,
        message: outputs(),
      };
    },
  };
}
