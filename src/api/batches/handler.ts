/**
 * The Batch API (`/v1/batches`, OpenAI's shapes): create a batch over an uploaded input file,
 * retrieve, list (paged) and cancel the caller's key's batches. The gateway runs them itself on
 * the KV queue (src/batches/); see docs/batches.md.
 */
import { json } from "../../http/response.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { BATCH_ENDPOINTS } from "../../batches/jsonl.ts";
import type { BatchRecord } from "../../batches/store.ts";
import type { StartMessage } from "../../batches/runner.ts";
import { quote } from "../../quote.ts";
import { invalidValue } from "../../validation/error.ts";
import { type Fields, OPTIONAL, readRequest } from "../../validation/reader.ts";
import { pageLimit, queryFields } from "../../validation/query.ts";
import { noSuch, ownerKey } from "../files/owner.ts";
import { batchObject } from "./object.ts";

const DAY_MS = 86_400_000;
/** OpenAI's bounds on `metadata`: 16 pairs, keys of 64 and values of 512 characters. */
const METADATA_PAIRS = 16;

/** `POST /v1/batches`: `input_file_id`, `endpoint`, `completion_window: "24h"`, `metadata`. */
export async function createBatch(ctx: RequestContext): Promise<Response> {
  const key = ownerKey(ctx);
  const f = readRequest(ctx.takeBody());
  const inputFileId = f.string("input_file_id", { nonEmpty: true, maxLength: 256 });
  const endpoint = f.oneOf("endpoint", BATCH_ENDPOINTS);
  f.oneOf("completion_window", ["24h"] as const);
  const metadata = readMetadata(f.optional("metadata")?.object());
  f.get("output_expires_after"); // OpenAI's; files here expire by `batches.file_retention_days`
  f.done();
  const { batches, clock } = ctx.services;
  const file = await batches.files.get(inputFileId, key.id);
  if (file === null) throw noSuch("File", inputFileId);
  if (file.purpose !== "batch") {
    throw invalidValue("input_file_id", `file ${quote(inputFileId)} is not a batch input file`);
  }
  const now = clock.now();
  const seconds = Math.floor(now / 1000);
  const batch: BatchRecord = {
    id: batches.batches.newId(now),
    owner: key.id,
    owner_hash: key.hash,
    endpoint,
    input_file_id: inputFileId,
    completion_window: "24h",
    status: "validating",
    metadata,
    errors: null,
    output_file_id: null,
    error_file_id: null,
    created_at: seconds,
    in_progress_at: null,
    expires_at: Math.floor((now + DAY_MS) / 1000),
    finalizing_at: null,
    completed_at: null,
    failed_at: null,
    expired_at: null,
    cancelling_at: null,
    cancelled_at: null,
    total: 0,
    queued: 0,
    outcome: null,
  };
  await batches.batches.create(batch, { kind: "batch_start", batch: batch.id } as StartMessage);
  return json(batchObject(batch, { done: 0, failed: 0 }));
}

/** `metadata`: up to 16 string pairs (`null` when absent). */
function readMetadata(fields: Fields | undefined): Record<string, string> | null {
  if (fields === undefined) return null;
  const out: Record<string, string> = {};
  const names = [...fields.keys];
  if (names.length > METADATA_PAIRS) {
    throw invalidValue("metadata", `expected at most ${METADATA_PAIRS} pairs`);
  }
  for (const name of names) {
    if (name.length > 64) throw invalidValue("metadata", "keys are at most 64 characters");
    out[name] = fields.string(name, { maxLength: 512 });
  }
  return out;
}

/** `GET /v1/batches/{id}`. */
export async function retrieveBatch(ctx: RequestContext): Promise<Response> {
  queryFields(ctx.url.searchParams).done();
  const { batches } = ctx.services;
  const batch = await batches.batches.get(ctx.params.id!, ownerKey(ctx).id);
  if (batch === null) throw noSuch("Batch", ctx.params.id!);
  return json(batchObject(batch, await batches.batches.counts(batch.id)));
}

/** `GET /v1/batches`: the key's batches, newest first (`after`, `limit` 1-100, default 20). */
export async function listBatches(ctx: RequestContext): Promise<Response> {
  const key = ownerKey(ctx);
  const q = queryFields(ctx.url.searchParams);
  const limit = pageLimit("limit", q.string("limit", OPTIONAL), 100, 20);
  const after = q.string("after", OPTIONAL);
  q.done();
  const store = ctx.services.batches.batches;
  const { batches, hasMore } = await store.list(key.id, limit, after);
  const data = await Promise.all(
    batches.map(async (b) => batchObject(b, await store.counts(b.id))),
  );
  return json({
    object: "list",
    data,
    first_id: batches[0]?.id ?? null,
    last_id: batches.at(-1)?.id ?? null,
    has_more: hasMore,
  });
}

/** `POST /v1/batches/{id}/cancel`: the batch stops taking lines (`cancelling`), then finalizes
 * with the results it has (`cancelled`). */
export async function cancelBatch(ctx: RequestContext): Promise<Response> {
  queryFields(ctx.url.searchParams).done();
  const { batches } = ctx.services;
  const id = ctx.params.id!;
  const owner = ownerKey(ctx).id;
  if (await batches.batches.get(id, owner) === null) throw noSuch("Batch", id);
  await batches.cancel(id);
  const batch = (await batches.batches.get(id, owner))!;
  return json(batchObject(batch, await batches.batches.counts(id)));
}
