/** Services whose contracts and legacy paths exist but whose rules are not built yet. */
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { CounteragentService } from "../../gen/docflow/api/v1/counteragents_pb";
import { DocumentService } from "../../gen/docflow/api/v1/documents_pb";

const notYet = (): never => {
  throw new ConnectError("not implemented yet", Code.Unimplemented);
};

export const documentService: ServiceImpl<typeof DocumentService> = {
  restore: notYet,
  delete: notYet,
};

export const counteragentService: ServiceImpl<typeof CounteragentService> = {
  getCounteragentsFromGroup: notYet,
};

export { CounteragentService, DocumentService };
