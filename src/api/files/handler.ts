/**
 * The Files API (`/v1/files`, OpenAI's shapes): upload a batch input file (multipart, checked
 * line by line), list, retrieve, read and delete the files of the caller's key. See
 * docs/batches.md.
 */
import { ApiError, invalidRequest, payloadTooLarge } from "../../errors.ts";
import { readLimited } from "../../http/body.ts";
import { json } from "../../http/response.ts";
import type { RequestContext } from "../../pipeline/context.ts";
import { quote } from "../../quote.ts";
import { fileObject } from "../../batches/files.ts";
import { checkBatchFile, MAX_REPORTED } from "../../batches/jsonl.ts";
import { missingParameter } from "../../validation/error.ts";
import { OPTIONAL } from "../../validation/reader.ts";
import { pageLimit, queryFields } from "../../validation/query.ts";
import { noSuch, ownerKey } from "./owner.ts";

/** Bytes of a multipart body beyond the file's own (its headers and other fields). */
const MULTIPART_SLACK = 64 * 1024;
const MAX_FILENAME = 255;

/** `POST /v1/files`: `purpose=batch` and a JSONL `file`; every bad line is named in the 400. */
export async function createFile(ctx: RequestContext): Promise<Response> {
  const key = ownerKey(ctx);
  queryFields(ctx.url.searchParams).done();
  const { config, batches, clock } = ctx.services;
  const max = config.batches.max_file_bytes;
  const form = await readForm(ctx, max + MULTIPART_SLACK);
  const purpose = form.get("purpose");
  if (purpose === null) throw missingParameter("purpose");
  if (purpose !== "batch") {
    throw invalidRequest(
      `purpose must be "batch" (the only purpose this gateway stores files for), not ${
        quote(String(purpose))
      }.`,
      "purpose",
    );
  }
  const file = form.get("file");
  if (file === null) throw missingParameter("file");
  if (typeof file === "string") throw invalidRequest("file must be a file upload.", "file");
  if (file.size > max) throw payloadTooLarge(max);
  const bytes = new Uint8Array(await file.arrayBuffer());
  const checked = checkBatchFile(bytes, config.batches.max_lines);
  if (checked.errors.length > 0) {
    const shown = checked.errors.slice(0, MAX_REPORTED).map((e) => `line ${e.line}: ${e.message}`);
    const more = checked.errors.length - shown.length;
    throw invalidRequest(
      `The file has ${checked.errors.length} invalid line${
        checked.errors.length === 1 ? "" : "s"
      }: ${shown.join("; ")}${more > 0 ? `; and ${more} more` : ""}.`,
      "file",
      "invalid_file",
    );
  }
  const record = await batches.files.put(
    {
      owner: key.id,
      filename: (file.name || "batch.jsonl").slice(0, MAX_FILENAME),
      purpose: "batch",
      lines: checked.spans.length,
    },
    bytes,
    clock.now(),
  );
  return json(fileObject(record));
}

/** The request's multipart form, read within `maxBytes` and `server.body_timeout_ms` (408),
 * as every body is. */
async function readForm(ctx: RequestContext, maxBytes: number): Promise<FormData> {
  const { request } = ctx;
  const type = request.headers.get("content-type") ?? "";
  if (!/^multipart\/form-data\s*;/i.test(type)) {
    throw new ApiError(
      400,
      "invalid_request_error",
      `Content-Type must be multipart/form-data, not ${quote(type || "(none)")}.`,
      { code: "invalid_content_type" },
    );
  }
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw payloadTooLarge(maxBytes);
  const timeoutMs = ctx.services.config.server.body_timeout_ms;
  const bytes = await readLimited(request, maxBytes, timeoutMs, ctx.services.bodyTimers);
  try {
    return await new Response(bytes as Uint8Array<ArrayBuffer>, {
      headers: { "content-type": type },
    }).formData();
  } catch {
    throw invalidRequest("The multipart body could not be parsed.", null, "invalid_multipart");
  }
}

/** `GET /v1/files`: the key's files, newest first (`order`, `after`, `limit`, `purpose`). */
export async function listFiles(ctx: RequestContext): Promise<Response> {
  const key = ownerKey(ctx);
  const q = queryFields(ctx.url.searchParams);
  const limit = pageLimit("limit", q.string("limit", OPTIONAL), 10_000, 10_000);
  const after = q.string("after", OPTIONAL);
  const order = q.oneOf("order", ["asc", "desc"] as const, OPTIONAL) ?? "desc";
  const purpose = q.string("purpose", OPTIONAL);
  q.done();
  const { files, hasMore } = await ctx.services.batches.files.list(key.id, {
    limit,
    order,
    ...(after !== undefined ? { after } : {}),
    ...(purpose !== undefined ? { purpose } : {}),
  });
  return json({
    object: "list",
    data: files.map(fileObject),
    first_id: files[0]?.id ?? null,
    last_id: files.at(-1)?.id ?? null,
    has_more: hasMore,
  });
}

/** `GET /v1/files/{id}`. */
export async function retrieveFile(ctx: RequestContext): Promise<Response> {
  queryFields(ctx.url.searchParams).done();
  const file = await ctx.services.batches.files.get(ctx.params.id!, ownerKey(ctx).id);
  if (file === null) throw noSuch("File", ctx.params.id!);
  return json(fileObject(file));
}

/** `GET /v1/files/{id}/content`: the file's bytes, streamed chunk by chunk from KV. */
export async function fileContent(ctx: RequestContext): Promise<Response> {
  queryFields(ctx.url.searchParams).done();
  const files = ctx.services.batches.files;
  const file = await files.get(ctx.params.id!, ownerKey(ctx).id);
  if (file === null) throw noSuch("File", ctx.params.id!);
  const chunks = files.chunks(file);
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await chunks.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "application/octet-stream",
      "content-length": String(file.bytes),
    },
  });
}

/** `DELETE /v1/files/{id}`. */
export async function deleteFile(ctx: RequestContext): Promise<Response> {
  queryFields(ctx.url.searchParams).done();
  const id = ctx.params.id!;
  if (!await ctx.services.batches.files.delete(id, ownerKey(ctx).id)) throw noSuch("File", id);
  return json({ id, object: "file", deleted: true });
}
