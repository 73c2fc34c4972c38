/**
 * A `bedrock` provider's AWS credentials: the access keys in the environment variables it
 * names, else (as the AWS SDKs' default chain goes on) the temporary credentials of an IAM role:
 * the task's or pod's, from the container credentials endpoint that ECS and EKS name in
 * `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` or `_FULL_URI`, or (with `instance_role`) the EC2
 * instance's, from the instance metadata service (IMDSv2). Fetched once for all calls, renewed 5
 * minutes before they expire.
 */
import { untilAborted } from "../../abort.ts";
import type { BedrockConfig } from "../../config/types.ts";
import type { Clock } from "../../clock.ts";
import { upstreamError } from "../../errors.ts";
import type { HttpClient } from "../../http/client/types.ts";
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

/** Where a role's credentials come from: the container endpoint and its authorization, or the
 * instance metadata service. */
export type RoleSource =
  | {
    kind: "container";
    url: string;
    /** `AWS_CONTAINER_AUTHORIZATION_TOKEN`, sent as `Authorization`, or `null`. */
    authorization: string | null;
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
  const relative = env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
  const full = env("AWS_CONTAINER_CREDENTIALS_FULL_URI");
  if (!accessKeyId && !secretAccessKey && (relative || full)) {
    const url = relative ? ECS_ENDPOINT + relative : full!;
    if (URL.canParse(url)) {
      const authorization = env("AWS_CONTAINER_AUTHORIZATION_TOKEN") || null;
      return { role: { kind: "container", url, authorization } };
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
    const text = this.source.kind === "container"
      ? await this.#get(
        this.source.url,
        this.source.authorization === null ? {} : { authorization: this.source.authorization },
      )
      : await this.#fromInstance(this.source.endpoint);
    let answer: unknown = null;
    try {
      answer = JSON.parse(text);
    } catch {
      // Reported below.
    }
    const fields = isObject(answer) ? answer : {};
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
    const source = this.#sourceName();
    let status: number;
    let text: string;
    try {
      const response = await this.http.request({
        method,
        url,
        headers,
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
      status = response.status;
      text = (await response.text(ANSWER_BYTES)).text;
    } catch {
      throw this.#failure(`${source} could not be reached`);
    }
    if (status !== 200) throw this.#failure(`${source} answered HTTP ${status}`);
    return text;
  }

  #sourceName(): string {
    return this.source.kind === "container"
      ? "the container credentials endpoint"
      : "the instance metadata service";
  }

  #failure(what: string) {
    const role = this.source.kind === "container" ? "the task's or pod's" : "the instance's";
    return upstreamError(
      `The upstream provider "${this.provider}" has no AWS credentials: ${what}. The operator must check ${role} IAM role.`,
    );
  }
}
