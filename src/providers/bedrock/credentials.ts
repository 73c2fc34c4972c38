/**
 * A `bedrock` provider's AWS credentials: the access keys in the environment variables it
 * names, else (as the AWS SDKs' default chain goes on) the temporary credentials of the task's
 * or pod's IAM role, from the container credentials endpoint that ECS and EKS name in
 * `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` or `_FULL_URI`: fetched once for all calls, renewed
 * 5 minutes before they expire.
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

/** Where a role's credentials come from: the container endpoint, and its authorization. */
export interface ContainerSource {
  url: string;
  /** `AWS_CONTAINER_AUTHORIZATION_TOKEN`, sent as `Authorization`, or `null`. */
  authorization: string | null;
}

/** The access keys, or the container endpoint, or why there are none (the variables unset):
 * the provider is then disabled. An unset session token variable means long-term keys. */
export function awsCredentials(
  config: BedrockConfig,
  env: (name: string) => string | undefined,
): AwsCredentials | { container: ContainerSource } | { missing: string } {
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
      return {
        container: { url, authorization: env("AWS_CONTAINER_AUTHORIZATION_TOKEN") || null },
      };
    }
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

/** A role's credentials from the container endpoint, fetched once for every call that needs
 * them meanwhile and kept until shortly before they expire. */
export class ContainerCredentials implements CredentialSource {
  #held: { credentials: AwsCredentials; renewAt: number } | null = null;
  #pending: Promise<AwsCredentials> | null = null;

  constructor(
    readonly provider: string,
    readonly source: ContainerSource,
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
    let status: number;
    let text: string;
    try {
      const response = await this.http.request({
        method: "GET",
        url: this.source.url,
        headers: this.source.authorization === null
          ? {}
          : { authorization: this.source.authorization },
        signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
      });
      status = response.status;
      text = (await response.text(ANSWER_BYTES)).text;
    } catch {
      throw this.#failure("the container credentials endpoint could not be reached");
    }
    if (status !== 200) {
      throw this.#failure(`the container credentials endpoint answered HTTP ${status}`);
    }
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
      throw this.#failure("the container credentials endpoint answered without credentials");
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

  #failure(what: string) {
    return upstreamError(
      `The upstream provider "${this.provider}" has no AWS credentials: ${what}. The operator must check the task's or pod's IAM role.`,
    );
  }
}
