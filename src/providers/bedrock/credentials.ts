/**
 * A `bedrock` provider's AWS credentials: the access keys in the environment variables it
 * names, else (as the AWS SDKs' default chain goes on) the temporary credentials of an IAM role:
 * a Kubernetes service account's (EKS's IRSA: STS `AssumeRoleWithWebIdentity` with the token in
 * `AWS_WEB_IDENTITY_TOKEN_FILE`, for `AWS_ROLE_ARN`), the task's or pod's, from the container
 * credentials endpoint that ECS and EKS Pod Identity name in
 * `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` or `_FULL_URI`, or (with `instance_role`) the EC2
 * instance's, from the instance metadata service (IMDSv2). Fetched once for all calls, renewed 5
 * minutes before they expire; a token file is read again for every fetch (Kubernetes rotates it).
 */
import { untilAborted } from "../../abort.ts";
import type { BedrockConfig } from "../../config/types.ts";
import type { Clock } from "../../clock.ts";
import { upstreamError } from "../../errors.ts";
import type { HttpClient } from "../../http/client/types.ts";
import { readTokenFile, TokenFileError } from "../upstream/token_file.ts";
import { isObject } from "../wire.ts";
import type { AwsCredentials } from "./sigv4.ts";

/** ECS's credentials endpoint, which `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` is a path on. */
const ECS_ENDPOINT = "http://169.254.170.2";
/** Credentials are renewed this long before they expire (the AWS SDKs: 5 minutes). */
const RENEW_BEFORE_MS = 5 * 60_000;
/** The most a fetch of credentials may take. */
const FETCH_TIMEOUT_MS = 5_000;
/** Bytes of the endpoint's answer that are read. */
const ANSWER_BYTES = 64 * 1024;

/** Where a role's credentials come from: STS for a web identity token, the container endpoint
 * and its authorization, or the instance metadata service. */
export type RoleSource =
  | {
    kind: "web_identity";
    /** STS's address (`AWS_ENDPOINT_URL_STS`, else the provider's region's, or the global one
     * with `AWS_STS_REGIONAL_ENDPOINTS=legacy`). */
    sts: string;
    /** `AWS_ROLE_ARN`. */
    roleArn: string;
    /** `AWS_ROLE_SESSION_NAME`, or `null` for one naming the provider. */
    sessionName: string | null;
    /** `AWS_WEB_IDENTITY_TOKEN_FILE`. */
    tokenFile: string;
  }
  | {
    kind: "container";
    url: string;
    /** `AWS_CONTAINER_AUTHORIZATION_TOKEN`, sent as `Authorization`, or `null`. */
    authorization: string | null;
    /** `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` (EKS Pod Identity's), whose token is sent
     * instead, or `null`. */
    authorizationFile: string | null;
  }
  | {
    kind: "instance";
    /** The service's address (`AWS_EC2_METADATA_SERVICE_ENDPOINT`, else EC2's). */
    endpoint: string;
  };

/** EC2's instance metadata service. */
const IMDS_ENDPOINT = "http://169.254.169.254";
/** Seconds an IMDSv2 session token is asked to live. */
const IMDS_TOKEN_SECONDS = "21600";

/** The access keys, or the container endpoint, or why there are none (the variables unset):
 * the provider is then disabled. An unset session token variable means long-term keys. */
export function awsCredentials(
  config: BedrockConfig,
  env: (name: string) => string | undefined,
): AwsCredentials | { role: RoleSource } | { missing: string } {
  const accessKeyId = env(config.access_key_id_env);
  const secretAccessKey = env(config.secret_access_key_env);
  if (accessKeyId && secretAccessKey) {
    const sessionToken = env(config.session_token_env);
    return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : {
      accessKeyId,
      secretAccessKey,
    };
  }
  const tokenFile = env("AWS_WEB_IDENTITY_TOKEN_FILE");
  const roleArn = env("AWS_ROLE_ARN");
  if (!accessKeyId && !secretAccessKey && tokenFile && roleArn) {
    const legacy = env("AWS_STS_REGIONAL_ENDPOINTS")?.toLowerCase() === "legacy";
    const sts = (env("AWS_ENDPOINT_URL_STS") || stsEndpoint(config.region, legacy))
      .replace(/\/+$/, "");
    if (URL.canParse(sts)) {
      const sessionName = env("AWS_ROLE_SESSION_NAME") || null;
      return { role: { kind: "web_identity", sts, roleArn, sessionName, tokenFile } };
    }
  }
  const relative = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
  const full = env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  if (!accessKeyId && !secretAccessKey && (relative || full)) {
    const url = relative ? ECS_ENDPOINT + relative : full!;
    if (URL.canParse(url)) {
      const authorization = env("AWS_CONTAINER_AUTHORIZATION_TOKEN") || null;
      const authorizationFile = env("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE") || null;
      return { role: { kind: "container", url, authorization, authorizationFile } };
    }
  }
  if (!accessKeyId && !secretAccessKey && config.instance_role) {
    const endpoint = (env("AWS_EC2_METADATA_SERVICE_ENDPOINT") || IMDS_ENDPOINT).replace(
      /\/+$/,
      "",
    );
    if (URL.canParse(endpoint)) return { role: { kind: "instance", endpoint } };
  }
  const unset = [
    ...(accessKeyId ? [] : [config.access_key_id_env]),
    ...(secretAccessKey ? [] : [config.secret_access_key_env]),
  ];
  return { missing: `${unset.join(" and ")} ${unset.length > 1 ? "are" : "is"} not set` };
}

/** The regions whose STS calls `AWS_STS_REGIONAL_ENDPOINTS=legacy` sends to the global
 * endpoint (the AWS SDKs' list). */
const LEGACY_GLOBAL_REGIONS = new Set([
  "ap-northeast-1",
  "ap-south-1",
  "ap-southeast-1",
  "ap-southeast-2",
  "aws-global",
  "ca-central-1",
  "eu-central-1",
  "eu-north-1",
  "eu-west-1",
  "eu-west-2",
  "eu-west-3",
  "sa-east-1",
  "us-east-1",
  "us-east-2",
  "us-west-1",
  "us-west-2",
]);

/** STS's regional endpoint (the AWS SDKs' default since 2022), or with `legacy` the global one
 * for the regions that used it. */
export function stsEndpoint(region: string, legacy = false): string {
  if (legacy && LEGACY_GLOBAL_REGIONS.has(region)) return "https://sts.amazonaws.com";
  return `https://sts.${region}.${region.startsWith("cn-") ? "amazonaws.com.cn" : "amazonaws.com"}`;
}

/** Credentials that are kept as they are, or renewed from a source. */
export interface CredentialSource {
  /** The credentials to sign the next request with; rejects with a 502 naming no secret. */
  current(signal: AbortSignal): Promise<AwsCredentials>;
}

/** Keys from the environment: the same for every request. */
export function fixedCredentials(credentials: AwsCredentials): CredentialSource {
  return { current: () => Promise.resolve(credentials) };
}

/** A role's credentials from its source, fetched once for every call that needs them meanwhile
 * and kept until shortly before they expire. */
export class RoleCredentials implements CredentialSource {
  #held: { credentials: AwsCredentials; renewAt: number } | null = null;
  #pending: Promise<AwsCredentials> | null = null;

  constructor(
    readonly provider: string,
    readonly source: RoleSource,
    readonly http: HttpClient,
    readonly clock: Clock,
  ) {}

  current(signal: AbortSignal): Promise<AwsCredentials> {
    const held = this.#held;
    if (held !== null && this.clock.now() < held.renewAt) return Promise.resolve(held.credentials);
    this.#pending ??= this.#fetch().finally(() => this.#pending = null);
    return untilAborted(this.#pending, signal);
  }

  async #fetch(): Promise<AwsCredentials> {
    const source = this.source;
    let fields: Record<string, unknown>;
    if (source.kind === "web_identity") fields = await this.#fromSts(source);
    else {
      const text = source.kind === "container"
        ? await this.#get(source.url, await this.#containerHeaders(source))
        : await this.#fromInstance(source.endpoint);
      let answer: unknown = null;
      try {
        answer = JSON.parse(text);
      } catch {
        // Reported below.
      }
      fields = isObject(answer) ? answer : {};
    }
    const { AccessKeyId: id, SecretAccessKey: secret, Token: token, Expiration: expiration } =
      fields;
    if (typeof id !== "string" || !id || typeof secret !== "string" || !secret) {
      throw this.#failure(`${this.#sourceName()} answered without credentials`);
    }
    const credentials: AwsCredentials = typeof token === "string" && token
      ? { accessKeyId: id, secretAccessKey: secret, sessionToken: token }
      : { accessKeyId: id, secretAccessKey: secret };
    const expires = typeof expiration === "string" ? Date.parse(expiration) : NaN;
    const now = this.clock.now();
    // Without an expiry they are asked for again after a while, as if they lived an hour.
    const life = Number.isNaN(expires) ? 3_600_000 : Math.max(0, expires - now);
    this.#held = { credentials, renewAt: now + Math.max(life - RENEW_BEFORE_MS, life / 2) };
    return credentials;
  }

  /** The container endpoint's `Authorization`: the token file's (read anew: it is rotated), else
   * the variable's. */
  async #containerHeaders(
    source: Extract<RoleSource, { kind: "container" }>,
  ): Promise<Record<string, string>> {
    if (source.authorizationFile !== null) {
      return { authorization: await this.#token(source.authorizationFile) };
    }
    return source.authorization === null ? {} : { authorization: source.authorization };
  }

  /** STS `AssumeRoleWithWebIdentity` with the token file's token (unsigned: the token is the
   * proof); the credentials in the fields the other sources name them. */
  async #fromSts(
    source: Extract<RoleSource, { kind: "web_identity" }>,
  ): Promise<Record<string, unknown>> {
    const token = await this.#token(source.tokenFile);
    const form = new URLSearchParams({
      Action: "AssumeRoleWithWebIdentity",
      Version: "2011-06-15",
      RoleArn: source.roleArn,
      RoleSessionName: source.sessionName ?? sessionName(this.provider),
      WebIdentityToken: token,
    });
    const { status, text } = await this.#call(source.sts + "/", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded; charset=utf-8" },
      body: form.toString(),
    });
    if (status !== 200) {
      const code = xmlText(text, "Code");
      const message = xmlText(text, "Message");
      throw this.#failure(
        `STS refused AssumeRoleWithWebIdentity (HTTP ${status}${code ? `, ${code}` : ""}${
          message ? `: ${message.slice(0, 200)}` : ""
        })`,
      );
    }
    return {
      AccessKeyId: xmlText(text, "AccessKeyId"),
      SecretAccessKey: xmlText(text, "SecretAccessKey"),
      Token: xmlText(text, "SessionToken"),
      Expiration: xmlText(text, "Expiration"),
    };
  }

  /** A token file's token; one that cannot be read is the 502 saying why. */
  async #token(path: string): Promise<string> {
    try {
      return await readTokenFile(path);
    } catch (e) {
      throw e instanceof TokenFileError ? this.#failure(e.message) : e;
    }
  }

  /** IMDSv2: a session token, the instance's role name, then the role's credentials. */
  async #fromInstance(endpoint: string): Promise<string> {
    const token = await this.#get(`${endpoint}/latest/api/token`, {
      "x-aws-ec2-metadata-token-ttl-seconds": IMDS_TOKEN_SECONDS,
    }, "PUT");
    const headers = { "x-aws-ec2-metadata-token": token.trim() };
    const roles = `${endpoint}/latest/meta-data/iam/security-credentials/`;
    const role = (await this.#get(roles, headers)).split("\n")[0]!.trim();
    if (!/^[\w+=,.@-]{1,128}$/.test(role)) throw this.#failure("the instance has no IAM role");
    return await this.#get(roles + role, headers);
  }

  /** The body of a 200 from the role's source, or the 502 of a failure. */
  async #get(url: string, headers: Record<string, string>, method = "GET"): Promise<string> {
    const { status, text } = await this.#call(url, { method, headers });
    if (status !== 200) throw this.#failure(`${this.#sourceName()} answered HTTP ${status}`);
    return text;
  }

  /** The status and body of a call to the role's source; one that fails is the 502. */
  async #call(
    url: string,
    call: { method: string; headers: Record<string, string>; body?: string },
  ): Promise<{ status: number; text: string }> {
    try {
      const response = await this.http.request({
        ...call,
        url,
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
      return { status: response.status, text: (await response.text(ANSWER_BYTES)).text };
    } catch {
      throw this.#failure(`${this.#sourceName()} could not be reached`);
    }
  }

  #sourceName(): string {
    return this.source.kind === "container"
      ? "the container credentials endpoint"
      : this.source.kind === "web_identity"
      ? "STS"
      : "the instance metadata service";
  }

  #failure(what: string) {
    const role = this.source.kind === "instance"
      ? "the instance's"
      : this.source.kind === "web_identity"
      ? "the service account's"
      : "the task's or pod's";
    return upstreamError(
      `The upstream provider "${this.provider}" has no AWS credentials: ${what}. The operator must check ${role} IAM role.`,
    );
  }
}

/** A role session's name for `provider`: what STS accepts (`[\w+=,.@-]`, 2-64 characters). */
function sessionName(provider: string): string {
  return `switchyard-${provider.replace(/[^\w+=,.@-]/g, "-")}`.slice(0, 64);
}

const XML_ENTITIES: Record<string, string> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
};

/** The text of the first `<name>` element of an STS answer (elements without attributes, as
 * STS writes them), or `null`. */
function xmlText(xml: string, name: string): string | null {
  const match = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  if (match === null) return null;
  return match[1]!.trim().replace(
    /&(amp|lt|gt|quot|apos|#\d{1,7}|#x[0-9a-fA-F]{1,6});/g,
    (whole, entity: string) => {
      if (entity[0] !== "#") return XML_ENTITIES[entity]!;
      const code = entity[1] === "x" ? parseInt(entity.slice(2), 16) : Number(entity.slice(1));
      return code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    },
  );
}
