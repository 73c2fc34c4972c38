/**
 * Google Cloud workload identity federation: an `external_account` credential configuration (as
 * `gcloud iam workload-identity-pools create-cred-config` writes it) in `credentials_env`. A token
 * the workload has from elsewhere (a Kubernetes service account token in a file on EKS or AKS, an
 * Azure managed identity's token from a URL, an AWS identity proven by a signed
 * `GetCallerIdentity`...) is exchanged at Google's Security Token Service
 * for a federated access token and, when the configuration names a service account to
 * impersonate, that token for the account's own at the IAM Credentials API. No key is kept
 * anywhere. Tokens are kept and renewed as every OAuth token is (`upstream/oauth_tokens.ts`).
 */
import {
  GrantError,
  type OAuthTokenDeps,
  OAuthTokens,
  type TokenRequest,
} from "../upstream/oauth_tokens.ts";
import { readTokenFile, TokenFileError } from "../upstream/token_file.ts";
import { isObject } from "../wire.ts";
import { type AwsCredentials, signRequest } from "../bedrock/sigv4.ts";
import { CLOUD_PLATFORM_SCOPE } from "./assertion.ts";

/** Google's Security Token Service, where a configuration gives no `token_url`. */
const STS_URL = "https://sts.googleapis.com/v1/token";
const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
const ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token";
/** The lifetime asked of an impersonated account's token, where the configuration gives none. */
const DEFAULT_LIFETIME_SECONDS = 3600;
/** Bytes of a subject token URL's answer that are read. */
const SUBJECT_BYTES = 64 * 1024;

/** Where the workload's own token is read, and how (the whole text, or a field of its JSON);
 * or, on AWS, where the identity it proves by a signed `GetCallerIdentity` comes from. */
export type SubjectSource =
  | { kind: "file"; path: string; field: string | null }
  | { kind: "url"; url: string; headers: Record<string, string>; field: string | null }
  | AwsSource;

/** AWS's source (`environment_id: "aws1"`): the region and credentials from the environment
 * (`AWS_REGION`, `AWS_ACCESS_KEY_ID`...), else from the instance metadata service's URLs. */
export interface AwsSource {
  kind: "aws";
  /** STS's `GetCallerIdentity` URL, `{region}` in it. */
  verificationUrl: string;
  /** The instance's availability zone (`region_url`), if given. */
  regionUrl: string | null;
  /** The instance role's credentials (`url`), if given. */
  credentialsUrl: string | null;
  /** IMDSv2's session token (`imdsv2_session_token_url`), if given. */
  sessionTokenUrl: string | null;
}

/** What an `external_account` configuration says. */
export interface ExternalAccount {
  /** The workload identity pool provider's resource name, as STS takes it. */
  audience: string;
  /** The type of the workload's token (`urn:ietf:params:oauth:token-type:jwt`...). */
  subjectTokenType: string;
  /** The Security Token Service's URL. */
  tokenUrl: string;
  /** The IAM Credentials API's `generateAccessToken` URL of the account to impersonate, if any. */
  impersonationUrl: string | null;
  /** Seconds an impersonated token is asked to live. */
  lifetimeSeconds: number;
  source: SubjectSource;
  /** A workforce pool's user project (`workforce_pool_user_project`), if any. */
  userProject: string | null;
}

/**
 * The configuration in `key` (an object whose `type` is `external_account`); throws what
 * `problem` makes of the first thing wrong, naming the field (never a value).
 */
export function parseExternalAccount(
  key: Record<string, unknown>,
  problem: (what: string) => Error,
): ExternalAccount {
  const text = (name: string, value: unknown, optional = false): string | null => {
    if (value === undefined && optional) return null;
    if (typeof value !== "string" || value === "") throw problem(`whose ${name} is not a string`);
    return value;
  };
  const url = (name: string, value: string | null): string | null => {
    if (value !== null && !(URL.canParse(value) && /^https?:$/.test(new URL(value).protocol))) {
      throw problem(`whose ${name} is not an http(s) URL`);
    }
    return value;
  };
  const source = key.credential_source;
  if (!isObject(source)) throw problem("whose credential_source is not an object");
  const impersonation = key.service_account_impersonation;
  const lifetime = isObject(impersonation) ? impersonation.token_lifetime_seconds : undefined;
  if (
    lifetime !== undefined &&
    (!Number.isInteger(lifetime) || (lifetime as number) < 600 || (lifetime as number) > 43200)
  ) {
    throw problem(
      "whose service_account_impersonation.token_lifetime_seconds is not from 600 to 43200",
    );
  }
  return {
    audience: text("audience", key.audience)!,
    subjectTokenType: text("subject_token_type", key.subject_token_type)!,
    tokenUrl: url("token_url", text("token_url", key.token_url, true)) ?? STS_URL,
    impersonationUrl: url(
      "service_account_impersonation_url",
      text("service_account_impersonation_url", key.service_account_impersonation_url, true),
    ),
    lifetimeSeconds: (lifetime as number | undefined) ?? DEFAULT_LIFETIME_SECONDS,
    source: subjectSource(source, problem),
    userProject: text("workforce_pool_user_project", key.workforce_pool_user_project, true),
  };
}

/** A `credential_source`: a `file` or a `url` (with its `headers`), in a `format` of `text` or
 * `json` (with its `subject_token_field_name`). */
function subjectSource(
  source: Record<string, unknown>,
  problem: (what: string) => Error,
): SubjectSource {
  if (source.environment_id !== undefined) return awsSource(source, problem);
  if (source.executable !== undefined) {
    throw problem("whose credential_source is an executable, which the gateway does not run");
  }
  const format = source.format;
  let field: string | null = null;
  if (format !== undefined) {
    if (!isObject(format) || (format.type !== "text" && format.type !== "json")) {
      throw problem('whose credential_source.format.type is not "text" or "json"');
    }
    if (format.type === "json") {
      const name = format.subject_token_field_name;
      if (typeof name !== "string" || name === "") {
        throw problem("whose credential_source.format has no subject_token_field_name");
      }
      field = name;
    }
  }
  if (typeof source.file === "string" && source.file !== "") {
    return { kind: "file", path: source.file, field };
  }
  if (typeof source.url === "string" && URL.canParse(source.url)) {
    const headers = source.headers ?? {};
    if (!isObject(headers) || Object.values(headers).some((v) => typeof v !== "string")) {
      throw problem("whose credential_source.headers is not an object of strings");
    }
    return { kind: "url", url: source.url, headers: headers as Record<string, string>, field };
  }
  throw problem("whose credential_source has neither a file nor a url");
}

/** AWS's `credential_source`: `environment_id` `aws1`, its `regional_cred_verification_url`,
 * and the metadata service's URLs it may give. */
function awsSource(source: Record<string, unknown>, problem: (what: string) => Error): AwsSource {
  if (source.environment_id !== "aws1") {
    throw problem('whose credential_source.environment_id is not "aws1"');
  }
  const url = (name: string, required = false): string | null => {
    const value = source[name];
    if (value === undefined && !required) return null;
    if (typeof value !== "string" || !URL.canParse(value.replace("{region}", "r"))) {
      throw problem(`whose credential_source.${name} is not a URL`);
    }
    return value;
  };
  return {
    kind: "aws",
    verificationUrl: url("regional_cred_verification_url", true)!,
    regionUrl: url("region_url"),
    credentialsUrl: url("url"),
    sessionTokenUrl: url("imdsv2_session_token_url"),
  };
}

/** What {@link externalAccountTokens} needs: an external account instead of a grant. */
export type ExternalAccountDeps = Omit<OAuthTokenDeps, "tokenUrl" | "request" | "credentials"> & {
  account: ExternalAccount;
  /** The process's environment (AWS's region and credentials). */
  env: (name: string) => string | undefined;
};

/** The access tokens of a federated workload: the STS exchange's, or the impersonated
 * account's made with them. */
export function externalAccountTokens(deps: ExternalAccountDeps): OAuthTokens {
  const { account } = deps;
  const federated = new OAuthTokens({
    ...deps,
    tokenUrl: account.tokenUrl,
    request: async () => ({ form: exchangeForm(account, await subjectToken(deps)) }),
    credentials: {
      what: "the workload's token (workload identity federation)",
      check: "credentials_env's audience and the pool provider's attribute conditions",
    },
  });
  if (account.impersonationUrl === null) return federated;
  return new OAuthTokens({
    ...deps,
    tokenUrl: account.impersonationUrl,
    request: async (): Promise<TokenRequest> => ({
      json: JSON.stringify({
        scope: [CLOUD_PLATFORM_SCOPE],
        lifetime: `${account.lifetimeSeconds}s`,
      }),
      headers: await federated.headers(AbortSignal.timeout(deps.timeoutMs), null),
    }),
    credentials: {
      what: "the federated workload's impersonation of its service account",
      check: "that the pool's principal has the Workload Identity User role on the account",
    },
  });
}

/** The Security Token Service's form for `subjectToken`. */
function exchangeForm(account: ExternalAccount, subjectToken: string): string {
  const form = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE,
    audience: account.audience,
    scope: CLOUD_PLATFORM_SCOPE,
    requested_token_type: ACCESS_TOKEN_TYPE,
    subject_token: subjectToken,
    subject_token_type: account.subjectTokenType,
  });
  if (account.userProject !== null) {
    form.set("options", JSON.stringify({ userProject: account.userProject }));
  }
  return form.toString();
}

/** The workload's own token, read again for every exchange (files rotate); a
 * {@link GrantError} naming the file or URL (never a token) when there is none. */
async function subjectToken(deps: ExternalAccountDeps): Promise<string> {
  const { account, http, timeoutMs } = deps;
  const { source } = account;
  if (source.kind === "aws") return await awsSubjectToken(source, deps);
  let text: string;
  if (source.kind === "file") {
    try {
      text = await readTokenFile(source.path);
    } catch (e) {
      if (e instanceof TokenFileError) throw new GrantError(e.message);
      throw e;
    }
  } else {
    const where = `the subject token URL ${new URL(source.url).origin}`;
    try {
      const response = await http.request({
        method: "GET",
        url: source.url,
        headers: source.headers,
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = (await response.text(SUBJECT_BYTES)).text.trim();
      if (response.status < 200 || response.status >= 300) {
        throw new GrantError(`${where} answered HTTP ${response.status}`);
      }
    } catch (e) {
      if (e instanceof GrantError) throw e;
      throw new GrantError(`${where} could not be reached`);
    }
  }
  if (source.field === null) {
    if (text === "") throw new GrantError("the workload's token is empty");
    return text;
  }
  let value: unknown;
  try {
    value = (JSON.parse(text) as Record<string, unknown>)[source.field];
  } catch {
    value = undefined;
  }
  if (typeof value !== "string" || value === "") {
    throw new GrantError(
      `the workload's token source is not JSON with a string ${source.field} field`,
    );
  }
  return value;
}

/** The workload's AWS identity as STS's `GetCallerIdentity` request, signed with its
 * credentials for its region and serialized as Google's STS takes it (URL-encoded JSON of the
 * URL, the method and the headers, `x-goog-cloud-target-resource` the audience among them). */
async function awsSubjectToken(source: AwsSource, deps: ExternalAccountDeps): Promise<string> {
  const metadata = new AwsMetadata(source, deps);
  const region = deps.env("AWS_REGION") || deps.env("AWS_DEFAULT_REGION") ||
    (await metadata.region());
  const credentials = awsEnvironmentCredentials(deps.env) ?? (await metadata.credentials());
  const url = source.verificationUrl.replace("{region}", region);
  const headers = await signRequest({
    credentials,
    now: deps.clock.now(),
    region,
    service: "sts",
    method: "POST",
    url,
    headers: { "x-goog-cloud-target-resource": deps.account.audience },
    body: "",
  });
  const listed = { host: new URL(url).host, ...headers };
  return encodeURIComponent(JSON.stringify({
    url,
    method: "POST",
    headers: Object.entries(listed).map(([key, value]) => ({ key, value })),
  }));
}

/** AWS's keys from `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`). */
function awsEnvironmentCredentials(
  env: (name: string) => string | undefined,
): AwsCredentials | null {
  const accessKeyId = env("AWS_ACCESS_KEY_ID");
  const secretAccessKey = env("AWS_SECRET_ACCESS_KEY");
  if (!accessKeyId || !secretAccessKey) return null;
  const sessionToken = env("AWS_SESSION_TOKEN");
  return sessionToken
    ? { accessKeyId, secretAccessKey, sessionToken }
    : { accessKeyId, secretAccessKey };
}

/** What the EC2 instance metadata service tells: the region and the role's credentials. */
class AwsMetadata {
  readonly #source: AwsSource;
  readonly #deps: ExternalAccountDeps;
  #session: Promise<Record<string, string>> | null = null;

  constructor(source: AwsSource, deps: ExternalAccountDeps) {
    this.#source = source;
    this.#deps = deps;
  }

  /** The region: the availability zone (`region_url`) without its letter. */
  async region(): Promise<string> {
    const url = this.#source.regionUrl;
    if (url === null) {
      throw new GrantError("no AWS region: set AWS_REGION, or give credential_source.region_url");
    }
    const zone = await this.#get(url);
    return zone.slice(0, -1);
  }

  /** The instance role's credentials: its name from `url`, then its keys. */
  async credentials(): Promise<AwsCredentials> {
    const url = this.#source.credentialsUrl;
    if (url === null) {
      throw new GrantError(
        "no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give credential_source.url",
      );
    }
    const role = (await this.#get(url)).split("\n")[0]!.trim();
    let keys: unknown;
    try {
      keys = JSON.parse(await this.#get(`${url.replace(/\/+$/, "")}/${role}`));
    } catch (e) {
      if (e instanceof GrantError) throw e;
      keys = null;
    }
    if (
      !isObject(keys) || typeof keys.AccessKeyId !== "string" ||
      typeof keys.SecretAccessKey !== "string"
    ) {
      throw new GrantError("the instance metadata service answered no role credentials");
    }
    return typeof keys.Token === "string"
      ? {
        accessKeyId: keys.AccessKeyId,
        secretAccessKey: keys.SecretAccessKey,
        sessionToken: keys.Token,
      }
      : { accessKeyId: keys.AccessKeyId, secretAccessKey: keys.SecretAccessKey };
  }

  /** A GET of the metadata service (with IMDSv2's session token when the source gives its
   * URL); its text. */
  async #get(url: string): Promise<string> {
    const where = `the instance metadata service (${new URL(url).origin})`;
    try {
      const headers = await this.#sessionHeaders();
      const response = await this.#deps.http.request({
        method: "GET",
        url,
        headers,
        signal: AbortSignal.timeout(this.#deps.timeoutMs),
      });
      const text = (await response.text(SUBJECT_BYTES)).text.trim();
      if (response.status < 200 || response.status >= 300) {
        throw new GrantError(`${where} answered HTTP ${response.status}`);
      }
      return text;
    } catch (e) {
      if (e instanceof GrantError) throw e;
      throw new GrantError(`${where} could not be reached`);
    }
  }

  #sessionHeaders(): Promise<Record<string, string>> {
    const url = this.#source.sessionTokenUrl;
    if (url === null) return Promise.resolve({});
    return this.#session ??= (async () => {
      const response = await this.#deps.http.request({
        method: "PUT",
        url,
        headers: { "x-aws-ec2-metadata-token-ttl-seconds": "300" },
        signal: AbortSignal.timeout(this.#deps.timeoutMs),
      });
      const token = (await response.text(SUBJECT_BYTES)).text.trim();
      if (response.status < 200 || response.status >= 300 || token === "") {
        throw new GrantError(`IMDSv2 gave no session token (HTTP ${response.status})`);
      }
      return { "x-aws-ec2-metadata-token": token };
    })();
  }
}
