/** A `bedrock` provider's AWS credentials, read from the environment variables it names. */
import type { BedrockConfig } from "../../config/types.ts";
import type { AwsCredentials } from "./sigv4.ts";

/** The credentials, or why there are none (the variables unset): the provider is then
 * disabled. An unset session token variable means long-term keys. */
export function awsCredentials(
  config: BedrockConfig,
  env: (name: string) => string | undefined,
): AwsCredentials | { missing: string } {
  const accessKeyId = env(config.access_key_id_env);
  const secretAccessKey = env(config.secret_access_key_env);
  const unset = [
    ...(accessKeyId ? [] : [config.access_key_id_env]),
    ...(secretAccessKey ? [] : [config.secret_access_key_env]),
  ];
  if (!accessKeyId || !secretAccessKey) {
    return { missing: `${unset.join(" and ")} ${unset.length > 1 ? "are" : "is"} not set` };
  }
  const sessionToken = env(config.session_token_env);
  return sessionToken ? { accessKeyId, secretAccessKey, sessionToken } : {
    accessKeyId,
    secretAccessKey,
  };
}
