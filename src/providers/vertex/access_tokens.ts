/**
 * A service account's OAuth 2.0 access tokens for Vertex AI's calls: a signed assertion
 * (assertion.ts) exchanged at Google's token endpoint (`upstream/oauth_tokens.ts`).
 */
import type { Clock } from "../../clock.ts";
import {
  GrantError,
  type OAuthTokenDeps,
  OAuthTokens,
  type TokenRequest,
} from "../upstream/oauth_tokens.ts";
import { importSigningKey, signedAssertion } from "./assertion.ts";
import type { ServiceAccount } from "./service_account.ts";

/** The JWT bearer grant's type, as the token endpoint's form takes it. */
const GRANT_TYPE = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/** What {@link AccessTokens} needs: a service account instead of a grant. */
export type AccessTokenDeps = Omit<OAuthTokenDeps, "request" | "credentials"> & {
  account: ServiceAccount;
};

/** One service account's access tokens, as headers for Vertex AI's calls. */
export class AccessTokens extends OAuthTokens {
  constructor(deps: AccessTokenDeps) {
    super({
      ...deps,
      request: assertionGrant(deps.account, deps.tokenUrl, deps.clock),
      credentials: { what: "its service account", check: "credentials_env" },
    });
  }
}

/** The grant of a fresh assertion signed with the account's key (imported once). */
function assertionGrant(
  account: ServiceAccount,
  tokenUrl: string,
  clock: Clock,
): () => Promise<TokenRequest> {
  let key: Promise<CryptoKey> | null = null;
  return async () => {
    let assertion: string;
    try {
      key ??= importSigningKey(account);
      assertion = await signedAssertion(
        account,
        await key,
        tokenUrl,
        Math.floor(clock.now() / 1000),
      );
    } catch {
      key = null;
      throw new GrantError("its service account's private_key is not an RSA key it can sign with");
    }
    return { form: new URLSearchParams({ grant_type: GRANT_TYPE, assertion }).toString() };
  };
}
