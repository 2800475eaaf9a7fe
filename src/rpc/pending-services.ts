/** Services whose contracts and legacy paths exist but whose rules are not built yet. */
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import { CounteragentService } from "../../gen/docflow/api/v1/counteragents_pb";

const notYet = (): never => {
  throw new ConnectError("not implemented yet", Code.Unimplemented);
};

export const counteragentService: ServiceImpl<typeof CounteragentService> = {
  getCounteragentsFromGroup: notYet,
};

export { CounteragentService };
