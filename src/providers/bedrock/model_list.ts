/**
 * Bedrock's models for discovery, from its control plane (`bedrock.{region}.amazonaws.com`):
 * `GET /foundation-models` (the text models, their input modalities and how they may be
 * invoked) and `GET /inference-profiles` (the cross-region profiles, `us.anthropic...`, by which
 * the newer models are invoked).
 */
import { everyPage, looksLikeChat } from "../model_lists.ts";
import type { ListedModel } from "../types.ts";
import type { Upstream } from "../upstream/upstream.ts";
import { isObject, type JsonObject, malformed } from "../wire.ts";

/** What a model ARN names its model after. */
const FOUNDATION = "foundation-model/";

/** A text model of the listing: whether it reads images, and whether it is invoked by its id. */
export interface FoundationModel {
  imageInput: boolean;
  onDemand: boolean;
}

/** The active text models of a `ListFoundationModels` answer (`modelSummaries`) that stream
 * and are not obviously embedding or image models, by id. */
export function readFoundationModels(page: unknown): Map<string, FoundationModel> {
  if (!isObject(page) || !Array.isArray(page.modelSummaries)) {
    throw malformed('model list (no "modelSummaries" array)');
  }
  const models = new Map<string, FoundationModel>();
  for (const item of page.modelSummaries) {
    if (!isObject(item) || typeof item.modelId !== "string" || item.modelId === "") continue;
    const outputs = list(item, "outputModalities");
    const status = isObject(item.modelLifecycle) ? item.modelLifecycle.status : "ACTIVE";
    if (!outputs.includes("TEXT") || status !== "ACTIVE") continue;
    if (item.responseStreamingSupported === false || !looksLikeChat(item.modelId)) continue;
    models.set(item.modelId, {
      imageInput: list(item, "inputModalities").includes("IMAGE"),
      onDemand: list(item, "inferenceTypesSupported").includes("ON_DEMAND"),
    });
  }
  return models;
}

/** The active inference profiles of a `ListInferenceProfiles` page whose model is one of
 * `models` (read from the first model ARN's `foundation-model/{id}`). */
export function readInferenceProfiles(
  page: unknown,
  models: ReadonlyMap<string, FoundationModel>,
): ListedModel[] {
  if (!isObject(page) || !Array.isArray(page.inferenceProfileSummaries)) {
    throw malformed('model list (no "inferenceProfileSummaries" array)');
  }
  const listed: ListedModel[] = [];
  for (const item of page.inferenceProfileSummaries) {
    if (!isObject(item) || typeof item.inferenceProfileId !== "string") continue;
    if (item.status !== undefined && item.status !== "ACTIVE") continue;
    const arn = Array.isArray(item.models) && isObject(item.models[0])
      ? item.models[0].modelArn
      : undefined;
    const at = typeof arn === "string" ? arn.indexOf(FOUNDATION) : -1;
    const model = at < 0 ? undefined : models.get((arn as string).slice(at + FOUNDATION.length));
    if (model === undefined) continue;
    listed.push(listedModel(item.inferenceProfileId, model));
  }
  return listed;
}

/** Every text model invoked by its id, then every inference profile of a text model. */
export async function listBedrockModels(
  control: Upstream,
  signal: AbortSignal,
): Promise<ListedModel[]> {
  const page = await control.json({
    method: "GET",
    path: "/foundation-models?byOutputModality=TEXT",
    signal,
    requestId: "discovery",
  });
  const models = readFoundationModels(page);
  const listed = [...models].filter(([, m]) => m.onDemand).map(([id, m]) => listedModel(id, m));
  listed.push(
    ...await everyPage(control, signal, {
      path: (token) =>
        "/inference-profiles?maxResults=1000&typeEquals=SYSTEM_DEFINED" +
        (token === null ? "" : `&nextToken=${encodeURIComponent(token)}`),
      read: (profiles) => readInferenceProfiles(profiles, models),
      next: (profiles: JsonObject) =>
        typeof profiles.nextToken === "string" && profiles.nextToken !== ""
          ? profiles.nextToken
          : null,
    }),
  );
  return listed;
}

/** The model families that take tools through Converse (Bedrock's table of supported models
 * and features): Claude 3 and later, Nova, Mistral Large and Pixtral, Command R, Llama 3.1 and
 * later. Others are left unknown (no tools). */
const TOOL_MODELS =
  /anthropic\.claude-(?:3|sonnet|opus|haiku)|amazon\.nova|mistral\.(?:mistral-large|pixtral)|cohere\.command-r|meta\.llama(?:3-[1-9]-\d|4)/;

function listedModel(id: string, model: FoundationModel): ListedModel {
  return {
    id,
    created: null,
    contextLength: null,
    imageInput: model.imageInput,
    functionCalling: TOOL_MODELS.test(id) ? true : null,
  };
}

function list(item: JsonObject, key: string): unknown[] {
  const value = item[key];
  return Array.isArray(value) ? value : [];
}
