/** The path of one of a Bedrock model's operations: the model id (or inference profile, or
 * ARN) URL-encoded as one path segment. */
export function bedrockModelPath(modelId: string, operation: string): string {
  return `/model/${encodeURIComponent(modelId)}/${operation}`;
}
