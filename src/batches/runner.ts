/**
 * Runs batches from the KV queue (docs/batches.md): one message starts a batch (checks its input
 * file, queues one message per line), one per line runs it through the app's pipeline as the
 * batch's owner, one finalizes (writes the output and error files). Every message may be
 * delivered more than once and to any instance: each step is guarded by the batch's record
 * (checked in the same commit) and a line's result is written only if it has none.
 */
import { randomBase62 } from "../auth/keys.ts";
import { retryWhileBusy } from "../kv/busy.ts";
import type { Caller } from "../auth/authenticate.ts";
import type { KeyStore } from "../auth/keys.ts";
import type { Clock } from "../clock.ts";
import type { BatchesConfig, LimitsConfig } from "../config/types.ts";
import type { Logger } from "../log/logger.ts";
import type { OnBehalf } from "../pipeline/context.ts";
import { FileStore } from "./files.ts";
import { type BatchLine, checkBatchFile, MAX_REPORTED, parseLine } from "./jsonl.ts";
import type { QueueDispatcher, QueueMessage } from "./queue.ts";
import { takeShare } from "./share.ts";
import {
  activeKey,
  type BatchError,
  type BatchOutcome,
  type BatchRecord,
  BatchStore,
  spansKey,
} from "./store.ts";

/** Runs one request through the app's pipeline as `onBehalf`'s caller. */
export type RunInternal = (
  request: Request,
  onBehalf: OnBehalf,
) => Promise<{ response: Response; requestId: string }>;

/** What the runner is built from. */
export interface BatchRunnerDeps {
  kv: Deno.Kv;
  clock: Clock;
  config: BatchesConfig;
  limits: LimitsConfig;
  keys: KeyStore;
  logger: Logger;
  run: RunInternal;
  /** Called once per line whose result was written. */
  onLine?: (ok: boolean) => void;
  /** Requests open in this process now (live ones and batch lines). */
  openRequests?: () => number;
  /** `performance.now()` when a live request last began or ended in this process. */
  liveAt?: () => number;
}

/** Starts a batch: checks its input file and queues its lines. */
export interface StartMessage extends QueueMessage {
  kind: "batch_start";
  batch: string;
}
/** One line to run: bytes `offset`..`offset + length` of the input file. */
export interface LineTask {
  index: number;
  offset: number;
  length: number;
  /** Tries so far that ended in an upstream failure. */
  attempt: number;
}
/** Runs a few lines of a batch, one after the other (fewer messages: the queue's own work per
 * message weighs on the KV store that live requests commit to). */
export interface LinesMessage extends QueueMessage {
  kind: "batch_lines";
  batch: string;
  lines: LineTask[];
}
/** Finalizes a batch whose lines are done (or that was cancelled or expired). */
export interface FinalizeMessage extends QueueMessage {
  kind: "batch_finalize";
  batch: string;
}
/** Expires a batch still running at the end of its completion window. */
export interface ExpireMessage extends QueueMessage {
  kind: "batch_expire";
  batch: string;
}

/** Lines per queue message; line messages in the queue at once for a batch (each one done
 * queues the next: a 20,000-line batch queued whole at its start put 2,000 messages before
 * live traffic's KV commits, live p99 393% of alone with no line even running); lines whose
 * places (offset, length) are stored per KV value. */
const LINES_PER_MESSAGE = 10;
const WINDOW_MESSAGES = 8;
const SPANS_PER_CHUNK = 2_000;
/** The first retry's wait, doubled each time up to {@link MAX_BACKOFF_MS}. */
const BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 60_000;
/** Bytes of a line's answer kept in its result (a longer one is an error line). */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
const DAY_MS = 86_400_000;
/** Lines one process runs at once: the queue hands over many messages together, and a line
 * takes about the CPU of a live request. */
const LINES_AT_ONCE = 2;
/** How often waiting lines look whether live traffic has paused; how long it must have been
 * quiet (no live request open) for a line to start; and, under steady live traffic, the gap
 * between line starts (so that a busy process still makes progress on its batches). */
const YIELD_POLL_MS = 2;
const QUIET_MS = 25;
const BUSY_GAP_MS = 100;
/** How old the queue depth the metrics show may be. */
const DEPTH_MS = 5_000;

/** The batch engine of one app: its queue handlers and the stores they share with the API. */
export class BatchRunner {
  readonly files: FileStore;
  readonly batches: BatchStore;
  readonly #deps: BatchRunnerDeps;
  /** Lines running in this process, and the lines waiting for their turn (oldest first). */
  #running = 0;
  readonly #waiting: ((go: boolean) => void)[] = [];
  #closing = false;
  /** `performance.now()` when a live request was last seen open, and a line last started. */
  #liveSeen = -Infinity;
  #lastStart = -Infinity;
  #pumping: ReturnType<typeof setTimeout> | null = null;
  #depth: { value: number; at: number; reading: Promise<void> | null } = {
    value: 0,
    at: -Infinity,
    reading: null,
  };

  constructor(deps: BatchRunnerDeps) {
    this.#deps = deps;
    // Batches are kept a day longer than files: a batch may run for its 24 h window.
    const retention = deps.config.file_retention_days * DAY_MS;
    this.files = new FileStore(deps.kv, retention);
    this.batches = new BatchStore(deps.kv, retention + DAY_MS);
  }

  /** Batch lines queued and not yet done in every running batch, as last read (a read is
   * started when the last one is older than 5 s: the metrics' gauge is read synchronously). */
  queueDepth(): number {
    const now = this.#deps.clock.now();
    if (this.#depth.reading === null && now - this.#depth.at >= DEPTH_MS) {
      this.#depth.reading = this.batches.queueDepth().then(
        (depth) => {
          this.#depth = { value: depth, at: this.#deps.clock.now(), reading: null };
        },
        (e) => {
          this.#deps.logger.error("could not read the batch queue's depth", e);
          this.#depth.reading = null;
        },
      );
    }
    return this.#depth.value;
  }

  /** Registers the runner's handlers on `queue`. */
  listenOn(queue: QueueDispatcher): void {
    queue.on("batch_start", (m) => this.#start(m as StartMessage));
    queue.on("batch_lines", (m) => this.#lines(m as LinesMessage));
    queue.on("batch_finalize", (m) => this.#finalize(m as FinalizeMessage));
    queue.on("batch_expire", (m) => this.#expire(m as ExpireMessage));
  }

  /** Asks a running batch to stop: no line starts after this, and it finalizes with what it
   * has. Resolves with the batch as changed, or `null` if it had already stopped. */
  cancel(id: string): Promise<BatchRecord | null> {
    const now = this.#seconds();
    return this.batches.update(
      id,
      (b) =>
        b.status === "validating" || b.status === "in_progress"
          ? { ...b, status: "cancelling", cancelling_at: now, ...this.#ending(b, "cancelled") }
          : null,
      (op) => op.enqueue({ kind: "batch_finalize", batch: id } satisfies FinalizeMessage),
    );
  }

  #seconds(): number {
    return Math.floor(this.#deps.clock.now() / 1000);
  }

  /** The fields of a batch that stops taking lines: how it ends, and its files' ids. */
  #ending(b: BatchRecord, outcome: BatchOutcome): Partial<BatchRecord> {
    const now = this.#deps.clock.now();
    return {
      outcome,
      output_file_id: b.output_file_id ?? this.files.newId(now),
      error_file_id: b.error_file_id ?? this.files.newId(now),
    };
  }

  async #start(m: StartMessage): Promise<void> {
    const { clock, config } = this.#deps;
    const batch = (await this.batches.entry(m.batch)).value;
    if (batch === null) return;
    if (batch.status !== "validating" && batch.status !== "in_progress") return;
    const file = await this.files.get(batch.input_file_id, batch.owner);
    if (file === null) {
      return await this.#fail(batch.id, [{
        code: "invalid_input_file",
        message: `The input file ${batch.input_file_id} no longer exists.`,
        param: "input_file_id",
        line: null,
      }]);
    }
    const checked = checkBatchFile(await this.files.bytes(file), config.max_lines);
    if (checked.errors.length > 0) {
      return await this.#fail(
        batch.id,
        checked.errors.slice(0, MAX_REPORTED).map((e) => ({
          code: "invalid_request",
          message: e.message,
          param: null,
          line: e.line,
        })),
      );
    }
    const spans = checked.spans;
    if (batch.status === "validating") {
      const now = this.#seconds();
      const started = await this.batches.update(
        batch.id,
        (b) =>
          b.status === "validating"
            ? { ...b, status: "in_progress", in_progress_at: now, total: spans.length, queued: 0 }
            : null,
        (op, b) =>
          op.set(activeKey(b.id), true, { expireIn: this.batches.retentionMs })
            .enqueue({ kind: "batch_expire", batch: b.id } satisfies ExpireMessage, {
              delay: Math.max(0, b.expires_at * 1000 - clock.now()),
            }),
      );
      if (started === null) return;
    }
    // The lines' places, then the first messages; each message done queues the next. A start
    // delivered again writes the same places and tops the window up.
    for (let chunk = 0; chunk * SPANS_PER_CHUNK < spans.length; chunk++) {
      const part = spans.slice(chunk * SPANS_PER_CHUNK, (chunk + 1) * SPANS_PER_CHUNK)
        .flatMap((span) => [span.offset, span.length]);
      await retryWhileBusy(() =>
        this.#deps.kv.set(spansKey(batch.id, chunk), part, { expireIn: this.batches.retentionMs })
      );
    }
    for (let i = 0; i < WINDOW_MESSAGES; i++) if (!await this.#queueNext(batch.id)) return;
  }

  /** Queues the batch's next line message (its `queued` moved past it in the same commit);
   * whether there was one. */
  async #queueNext(batchId: string): Promise<boolean> {
    for (;;) {
      const b = (await this.batches.entry(batchId)).value;
      if (b === null || b.status !== "in_progress" || b.queued >= b.total) return false;
      const from = b.queued;
      const to = Math.min(b.total, from + LINES_PER_MESSAGE);
      const lines: LineTask[] = [];
      let chunk: number[] | null = null;
      let chunkNo = -1;
      for (let index = from; index < to; index++) {
        if (Math.floor(index / SPANS_PER_CHUNK) !== chunkNo) {
          chunkNo = Math.floor(index / SPANS_PER_CHUNK);
          chunk = (await this.#deps.kv.get<number[]>(spansKey(batchId, chunkNo))).value;
          if (chunk === null) return false;
        }
        const at = (index % SPANS_PER_CHUNK) * 2;
        lines.push({ index, offset: chunk![at]!, length: chunk![at + 1]!, attempt: 0 });
      }
      let moved = false;
      await this.batches.update(batchId, (now) => {
        if (now.status !== "in_progress" || now.queued !== from) return null;
        moved = true;
        return { ...now, queued: to };
      }, (op) => op.enqueue({ kind: "batch_lines", batch: batchId, lines } satisfies LinesMessage));
      if (moved) return true;
      // Another message queued this range first: look again.
    }
  }

  async #fail(id: string, errors: BatchError[]): Promise<void> {
    const now = this.#seconds();
    await this.batches.update(
      id,
      (b) => b.status === "validating" ? { ...b, status: "failed", failed_at: now, errors } : null,
    );
  }

  /** A message of lines: the queue hands over messages as fast as it can, so each line waits
   * for its turn before any work (the lines of a batch that stopped are dropped at once). A
   * line over the batch's share of its key's limits sends itself and the rest back to the
   * queue, delayed. */
  async #lines(m: LinesMessage): Promise<void> {
    if (await this.#runLines(m)) await this.#queueNext(m.batch);
  }

  /** The message's lines in turn; whether it is done with them (not sent back to the queue). */
  async #runLines(m: LinesMessage): Promise<boolean> {
    for (let i = 0; i < m.lines.length; i++) {
      const batch = (await this.batches.entry(m.batch)).value;
      if (batch === null || batch.status !== "in_progress") return false;
      // Closing: the rest goes back to the queue at once (this message is then done).
      let wait = 0;
      if (await this.#turn()) {
        try {
          wait = await this.#runLine(m.batch, m.lines[i]!);
        } finally {
          this.#done();
        }
        if (wait === 0) continue;
      }
      const rest: LinesMessage = { ...m, lines: m.lines.slice(i) };
      await retryWhileBusy(() => this.#deps.kv.enqueue(rest, { delay: wait }));
      return false;
    }
    return true;
  }

  /** Runs one line; resolves with how long it must wait first (0: it ran, or needs not). */
  async #runLine(batchId: string, m: LineTask): Promise<number> {
    const { kv, clock, config, limits, keys, run } = this.#deps;
    const entry = await this.batches.entry(batchId);
    const batch = entry.value;
    // A batch that stopped taking lines (cancelled, expired) drops the rest.
    if (batch === null || batch.status !== "in_progress") return 0;
    if (await this.batches.hasResult(batch.id, m.index)) {
      await this.#maybeDone(batch);
      return 0;
    }
    const file = await this.files.get(batch.input_file_id, batch.owner);
    if (file === null) {
      const error = { code: "input_file_missing", message: "The input file was deleted." };
      await this.#write(entry, m.index, false, errorLine(null, error));
      return 0;
    }
    const line = parseLine(await this.files.range(file, m.offset, m.length));
    const key = await keys.lookup(batch.owner_hash);
    if (key === null || key.record.disabled) {
      const error = {
        code: "invalid_api_key",
        message: "The batch's API key was revoked or disabled.",
      };
      await this.#write(entry, m.index, false, errorLine(line.custom_id, error));
      return 0;
    }
    // The batch's share of the key's limits is used up: the line waits, live traffic goes on.
    const scope = line.url === "/v1/chat/completions" || line.url === "/v1/responses"
      ? "chat"
      : "other";
    const wait = await takeShare(kv, limits, key.record, scope, config.limit_share, clock.now());
    if (wait > 0) return wait;
    const caller: Caller = { kind: "key", entry: key, verified: true };
    const { response, requestId } = await run(lineRequest(line), { caller, batchId: batch.id });
    const body = await answerBody(response);
    const status = response.status;
    if ((status === 429 || status >= 500) && m.attempt + 1 < config.max_attempts) {
      const retry: LinesMessage = {
        kind: "batch_lines",
        batch: batchId,
        lines: [{ ...m, attempt: m.attempt + 1 }],
      };
      await retryWhileBusy(() => kv.enqueue(retry, { delay: retryDelay(response, m.attempt) }));
      return 0;
    }
    const ok = status >= 200 && status < 300;
    const text = JSON.stringify({
      id: "batch_req_" + randomBase62(24),
      custom_id: line.custom_id,
      response: { status_code: status, request_id: requestId, body },
      error: null,
    });
    await this.#write(entry, m.index, ok, text);
    return 0;
  }

  /**
   * Waits for the line's turn: a free place among {@link LINES_AT_ONCE}, and live traffic
   * first: a line starts once the process has had no live request open for {@link QUIET_MS},
   * or under steady live traffic, {@link BUSY_GAP_MS} after the last line started. A batch
   * takes the process's idle time.
   */
  #turn(): Promise<boolean> {
    if (this.#closing) return Promise.resolve(false);
    return new Promise((go) => {
      this.#waiting.push(go);
      this.#pump();
    });
  }

  /** Runs no more lines: the lines waiting for their turn go back to the queue (for another
   * instance, or this one started again). */
  close(): void {
    this.#closing = true;
    for (const go of this.#waiting.splice(0)) go(false);
    if (this.#pumping !== null) clearTimeout(this.#pumping);
    this.#pumping = null;
  }

  #done(): void {
    this.#running--;
    this.#pump();
  }

  /** Starts the waiting lines whose turn it is; looks again shortly while some wait. */
  #pump(): void {
    const open = this.#deps.openRequests;
    if (open && open() - this.#running > 0) this.#liveSeen = performance.now();
    // Every live request's start and end, not only those a look found open: under steady
    // traffic of short calls most of them began and ended between two looks (bench --batch: live
    // p99 at 223-411% of alone beside a batch, the lines starting in the gaps they left).
    const liveAt = this.#deps.liveAt?.() ?? 0;
    if (liveAt > this.#liveSeen) this.#liveSeen = liveAt;
    while (this.#waiting.length > 0 && this.#running < LINES_AT_ONCE) {
      const now = performance.now();
      const quiet = now - this.#liveSeen >= QUIET_MS;
      if (!quiet && now - this.#lastStart < BUSY_GAP_MS) break;
      this.#lastStart = now;
      this.#running++;
      this.#waiting.shift()!(true);
    }
    if (this.#waiting.length > 0 && this.#pumping === null) {
      this.#pumping = setTimeout(() => {
        this.#pumping = null;
        this.#pump();
      }, YIELD_POLL_MS);
    }
  }

  /** Writes line `index`'s result once, then finalizes the batch if it was its last line. */
  async #write(
    entry: Deno.KvEntry<BatchRecord>,
    index: number,
    ok: boolean,
    text: string,
  ): Promise<void> {
    for (;;) {
      const outcome = await this.batches.writeResult(entry, index, ok, text);
      if (outcome === "written") this.#deps.onLine?.(ok);
      if (outcome !== "stale") return await this.#maybeDone(entry.value);
      // The batch's record changed: go on only if it still takes lines.
      const fresh = await this.batches.entry(entry.value.id);
      if (fresh.value === null || fresh.value.status !== "in_progress") return;
      entry = fresh as Deno.KvEntry<BatchRecord>;
    }
  }

  /** Queues the batch's finalizing once every line is done. */
  async #maybeDone(batch: BatchRecord): Promise<void> {
    const counts = await this.batches.counts(batch.id);
    if (counts.done < batch.total) return;
    const message: FinalizeMessage = { kind: "batch_finalize", batch: batch.id };
    await retryWhileBusy(() => this.#deps.kv.enqueue(message));
  }

  async #finalize(m: FinalizeMessage): Promise<void> {
    let batch = (await this.batches.entry(m.batch)).value;
    if (batch === null) return;
    if (batch.status === "in_progress") {
      const counts = await this.batches.counts(batch.id);
      if (counts.done < batch.total) return;
      const now = this.#seconds();
      batch = await this.batches.update(
        batch.id,
        (b) =>
          b.status === "in_progress"
            ? { ...b, status: "finalizing", finalizing_at: now, ...this.#ending(b, "completed") }
            : null,
      ) ?? (await this.batches.entry(m.batch)).value;
      if (batch === null) return;
    }
    if (batch.status !== "finalizing" && batch.status !== "cancelling") return;
    const from = batch.status;
    const written = await this.#writeFiles(batch);
    const outcome = batch.outcome ?? "completed";
    const now = this.#seconds();
    await this.batches.update(
      batch.id,
      (b) =>
        b.status === from
          ? {
            ...b,
            status: outcome,
            [`${outcome}_at`]: now,
            output_file_id: written.output ? b.output_file_id : null,
            error_file_id: written.errors ? b.error_file_id : null,
          }
          : null,
      (op, b) => op.delete(activeKey(b.id)),
    );
  }

  /** Writes the batch's output and error files (under the ids its record holds, so that a
   * finalizing delivered again writes the same files); says which have lines. */
  async #writeFiles(batch: BatchRecord): Promise<{ output: boolean; errors: boolean }> {
    const out: string[] = [];
    const err: string[] = [];
    for await (const [ok, text] of this.batches.results(batch.id)) (ok ? out : err).push(text);
    const now = this.#deps.clock.now();
    const encoder = new TextEncoder();
    const write = async (id: string | null, lines: string[], name: string) => {
      if (id === null || lines.length === 0) return false;
      const bytes = encoder.encode(lines.map((l) => l + "\n").join(""));
      const fields = { owner: batch.owner, filename: name, purpose: "batch_output" as const };
      await this.files.put(fields, bytes, now, id);
      return true;
    };
    return {
      output: await write(batch.output_file_id, out, `${batch.id}_output.jsonl`),
      errors: await write(batch.error_file_id, err, `${batch.id}_error.jsonl`),
    };
  }

  async #expire(m: ExpireMessage): Promise<void> {
    const now = this.#seconds();
    await this.batches.update(
      m.batch,
      (b) =>
        b.status === "validating" || b.status === "in_progress"
          ? { ...b, status: "finalizing", finalizing_at: now, ...this.#ending(b, "expired") }
          : null,
      (op) => op.enqueue({ kind: "batch_finalize", batch: m.batch } satisfies FinalizeMessage),
    );
  }
}

/** The internal request of a line: a POST of its body to its url. */
function lineRequest(line: BatchLine): Request {
  return new Request(`http://batch.internal${line.url}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(line.body),
  });
}

/** A line's answer as JSON (a stream or an oversized answer is an error body). */
async function answerBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text.length > MAX_ANSWER_BYTES) {
    return {
      error: { message: "The answer was too large for a batch result.", type: "server_error" },
    };
  }
  try {
    return JSON.parse(text);
  } catch {
    return { error: { message: "The answer was not JSON.", type: "server_error" } };
  }
}

/** The error-file line of a line that got no answer. */
function errorLine(customId: string | null, error: { code: string; message: string }): string {
  return JSON.stringify({
    id: "batch_req_" + randomBase62(24),
    custom_id: customId,
    response: null,
    error,
  });
}

/** How long a line waits before its next try: the answer's `retry-after`, else back-off. */
function retryDelay(response: Response, attempt: number): number {
  const after = Number(response.headers.get("retry-after"));
  if (Number.isFinite(after) && after > 0) return Math.min(after * 1000, MAX_BACKOFF_MS);
  return Math.min(BACKOFF_MS * 2 ** attempt, MAX_BACKOFF_MS);
}
