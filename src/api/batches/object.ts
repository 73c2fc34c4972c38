/** A batch as OpenAI's API shows it (the `Batch` object). */
import type { BatchCounts, BatchRecord } from "../../batches/store.ts";

/** OpenAI's batch object for `batch` with its line counts. */
export function batchObject(batch: BatchRecord, counts: BatchCounts): Record<string, unknown> {
  return {
    id: batch.id,
    object: "batch",
    endpoint: batch.endpoint,
    errors: batch.errors === null ? null : { object: "list", data: batch.errors },
    input_file_id: batch.input_file_id,
    completion_window: batch.completion_window,
    status: batch.status,
    output_file_id: isFinal(batch) ? batch.output_file_id : null,
    error_file_id: isFinal(batch) ? batch.error_file_id : null,
    created_at: batch.created_at,
    in_progress_at: batch.in_progress_at,
    expires_at: batch.expires_at,
    finalizing_at: batch.finalizing_at,
    completed_at: batch.completed_at,
    failed_at: batch.failed_at,
    expired_at: batch.expired_at,
    cancelling_at: batch.cancelling_at,
    cancelled_at: batch.cancelled_at,
    request_counts: {
      total: batch.total,
      completed: counts.done - counts.failed,
      failed: counts.failed,
    },
    metadata: batch.metadata,
  };
}

/** Whether the batch's files are written (their ids are chosen before). */
function isFinal(batch: BatchRecord): boolean {
  return batch.status === "completed" || batch.status === "cancelled" ||
    batch.status === "expired";
}
