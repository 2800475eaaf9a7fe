/** `npm run openapi -- [file]`: writes the OpenAPI document the server serves at /openapi.json (default: openapi.json). */
import { writeFile } from "node:fs/promises";
import type { DescMethod } from "@bufbuild/protobuf";
import { serviceOpenApi } from "../src/http/openapi";
import { createServiceTranscoder } from "../src/http/transcoding";
import { servedMethods } from "../src/rpc/pipeline";
import { commandLine } from "./cli";

/** The document the service serves, from the same bindings (src/http/server.ts). */
export function openApiDocument(
  serverUrl = "http://127.0.0.1:8080",
  methods: readonly DescMethod[] = servedMethods(),
): object {
  return serviceOpenApi(createServiceTranscoder(methods).bindings, serverUrl);
}

const USAGE = `usage: npm run openapi -- [file] [--server-url URL]

Writes the OpenAPI document the service serves at /openapi.json to a file
(default openapi.json), without starting the service. Its server URL is
--server-url (default http://127.0.0.1:8080); the running service puts in
PUBLIC_URL, or the URL the document was fetched with.`;

if (process.argv[1]?.endsWith("openapi.ts")) {
  const args = commandLine({ text: USAGE, options: ["--server-url"] });
  const at = args.indexOf("--server-url");
  const serverUrl = at === -1 ? "http://127.0.0.1:8080" : args.splice(at, 2)[1];
  if (serverUrl === undefined || !/^https?:\/\/\S+$/.test(serverUrl)) {
    process.stderr.write(`--server-url needs an http:// or https:// URL\n\n${USAGE}\n`);
    process.exit(2);
  }
  const file = args[0] ?? "openapi.json";
  writeFile(file, `${JSON.stringify(openApiDocument(serverUrl), null, 2)}\n`).then(
    () => process.stdout.write(`wrote ${file}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
