/** API clients and access tokens, stored by the hash of their secret only. */
import type { Db } from "mongodb";
import type { AccessToken, ApiClient } from "../domain/model";
import type { CredentialStore } from "../domain/ports";
import { Collections } from "./collections";

export interface ApiClientDocument {
  _id: string; // sha-256 of the API key
  name: string;
  enabled: boolean;
}

export interface TokenDocument {
  _id: string; // sha-256 of the token
  userId: string;
  expiresAt: Date;
}

export function createCredentialStore(db: Db): CredentialStore {
  const clients = db.collection<ApiClientDocument>(Collections.apiClients);
  const tokens = db.collection<TokenDocument>(Collections.tokens);
  return {
    async findApiClient(keyHash: string): Promise<ApiClient | null> {
      const doc = await clients.findOne({ _id: keyHash }, { projection: { name: 1, enabled: 1 } });
      return doc ? { name: doc.name, enabled: doc.enabled } : null;
    },
    async findToken(tokenHash: string): Promise<AccessToken | null> {
      const doc = await tokens.findOne(
        { _id: tokenHash },
        { projection: { userId: 1, expiresAt: 1 } },
      );
      return doc ? { userId: doc.userId, expiresAt: new Date(doc.expiresAt) } : null;
    },
  };
}
