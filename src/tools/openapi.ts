/** `npm run openapi -- [file]`: writes the OpenAPI document the server serves at /openapi.json (default: openapi.json). */
import { writeFile } from "node:fs/promises";
import { protoComments } from "../../gen/proto-comments";
import { legacyRoutesOf } from "../legacy/http-rules";
import { buildOpenApi } from "../legacy/openapi";
import { servedMethods } from "../rpc/pipeline";
import { SERVICE_VERSION } from "../version";

export function openApiDocument(): object {
  return buildOpenApi(legacyRoutesOf(servedMethods()), {
    version: SERVICE_VERSION,
    comments: protoComments,
  });
}

if (process.argv[1]?.endsWith("openapi.ts")) {
  const file = process.argv[2] ?? "openapi.json";
  writeFile(file, `${JSON.stringify(openApiDocument(), null, 2)}\n`).then(
    () => process.stdout.write(`wrote ${file}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
