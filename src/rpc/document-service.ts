/** DocumentService handlers: decode → domain → encode. */
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  DeleteResponseSchema,
  DocumentService,
  RestoreResponseSchema,
} from "../../gen/docflow/api/v1/documents_pb";
import { deleteMarks, restore } from "../domain/deletion-marks";
import { callerOf, depsOf } from "./context";

export const documentService: ServiceImpl<typeof DocumentService> = {
  async restore(req, ctx) {
    await restore(depsOf(ctx), callerOf(ctx), req);
    return create(RestoreResponseSchema);
  },
  async delete(req, ctx) {
    await deleteMarks(depsOf(ctx), callerOf(ctx), req);
    return create(DeleteResponseSchema);
  },
};

export { DocumentService };
