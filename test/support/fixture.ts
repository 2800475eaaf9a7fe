/** The data most tests run on. Secrets here are test values. */
export const HEAD = "00000000-0000-0000-0000-000000000000";

export const KEY = "test-api-key";
export const DISABLED_KEY = "disabled-api-key";

export const BOX = "b0000000-0000-4000-8000-000000000001";
export const OTHER_BOX = "b0000000-0000-4000-8000-000000000002";
export const ENDED_BOX = "b0000000-0000-4000-8000-000000000003";
export const UNKNOWN_BOX = "b0000000-0000-4000-8000-00000000ffff";

export const USERS = {
  admin: { userId: "u-admin", token: "admin-token" },
  clerk: { userId: "u-clerk", token: "clerk-token" },
  colleague: { userId: "u-colleague", token: "colleague-token" },
  muted: { userId: "u-muted", token: "muted-token" },
  outsider: { userId: "u-outsider", token: "outsider-token" },
  expired: { userId: "u-expired", token: "expired-token" },
  // base64 tokens carry '=', '+' and '/'.
  b64: { userId: "u-b64", token: "dG9r+ZW4/c2VjcmV0==" },
} as const;

export type UserName = keyof typeof USERS;

export function authHeader(user: UserName, key = KEY): string {
  return `ServiceAuth svcauth_api_client_id=${key}, svcauth_token=${USERS[user].token}`;
}

/**
 * The same credentials as the official Java SDK spells them (its
 * DiadocAuthScheme.java: no space after the comma), read by a service
 * started with SERVICE_AUTH_ALIASES=DiadocAuth:ddauth.
 */
export function sdkAuthHeader(user: UserName, key = KEY): string {
  return `DiadocAuth ddauth_api_client_id=${key},ddauth_token=${USERS[user].token}`;
}

/** SERVICE_AUTH_ALIASES=DiadocAuth:ddauth, as config.ts reads it. */
export const SDK_ALIASES = [{ scheme: "DiadocAuth", prefix: "ddauth" }] as const;

const ALL_FALSE = {
  CounteragentInvitation: false,
  CounteragentInvitationResponses: false,
  NewIncomingDocuments: false,
  CounteragentSignatures: false,
  CounteragentSignatureDenials: false,
  ResolutionRequests: false,
  ResolutionResults: false,
  EmployeeRequests: false,
  News: false,
  ChatMessages: false,
};

export function baseFixture() {
  const user = (name: UserName, expiresAt = "2099-01-01T00:00:00Z") => ({
    userId: USERS[name].userId,
    tokens: [{ token: USERS[name].token, expiresAt }],
  });
  return {
    apiClients: [
      { apiKey: KEY, name: "Test client" },
      { apiKey: DISABLED_KEY, name: "Disabled client", enabled: false },
    ],
    users: [
      user("admin"),
      user("clerk"),
      user("colleague"),
      user("muted"),
      user("outsider"),
      user("expired", "2020-01-01T00:00:00Z"),
      user("b64"),
    ],
    boxes: [
      {
        boxId: BOX,
        organizationName: "Test Org",
        apiSubscriptionEndsAt: "2099-01-01T00:00:00Z",
        employees: [
          { userId: USERS.admin.userId, isAdministrator: true, canManageCounteragents: true },
          { userId: USERS.clerk.userId, subscriptions: { News: false } },
          { userId: USERS.colleague.userId },
          { userId: USERS.muted.userId, subscriptions: ALL_FALSE },
          { userId: USERS.expired.userId, isAdministrator: true },
          { userId: USERS.b64.userId, isAdministrator: true },
        ],
      },
      {
        boxId: OTHER_BOX,
        organizationName: "Another Org",
        employees: [{ userId: USERS.outsider.userId, isAdministrator: true }],
      },
      {
        boxId: ENDED_BOX,
        organizationName: "Lapsed Org",
        apiSubscriptionEndsAt: "2020-01-01T00:00:00Z",
        employees: [
          { userId: USERS.admin.userId, isAdministrator: true },
          { userId: USERS.clerk.userId },
        ],
      },
    ],
  };
}

/** The base fixture with 60 counteragents in the default group: a full page is over 1 KiB (compressed when asked). */
export function fullPageFixture() {
  const base = baseFixture();
  const [box, ...rest] = base.boxes;
  return {
    ...base,
    boxes: [
      {
        ...box,
        counteragents: Array.from({ length: 60 }, (_, i) => ({
          counteragentBoxId: `c0000000-0000-4000-8000-0000000000${String(i).padStart(2, "0")}`,
          joinedGroupAt: `2026-01-01T00:00:${String(i).padStart(2, "0")}Z`,
        })),
      },
      ...rest,
    ],
  };
}

/**
 * One box with one all-rights administrator (`u-admin`, token `admin-token`),
 * one message `msg` with documents d1 and d2, and the groups and counteragents
 * given: the data of the round-trip and query-plan tests.
 */
export function adminBoxFixture(
  boxId: string,
  counteragentGroups: readonly { counteragentGroupId: string; name: string }[],
  counteragents: readonly Record<string, string>[],
) {
  return {
    apiClients: [{ apiKey: KEY }],
    users: [{ userId: "u-admin", tokens: [{ token: "admin-token" }] }],
    boxes: [
      {
        boxId,
        employees: [
          {
            userId: "u-admin",
            isAdministrator: true,
            canManageCounteragents: true,
            canDeleteRestoreDocuments: true,
            documentAccessLevel: "AllDocuments",
          },
        ],
        counteragentGroups,
        counteragents,
        messages: [
          {
            messageId: "msg",
            documents: [
              { documentId: "d1", departmentId: HEAD },
              { documentId: "d2", departmentId: HEAD },
            ],
          },
        ],
      },
    ],
  };
}
