/**
 * The CPU-heavy image work (painting the simulator's pictures, PNG->JPEG transcoding), done off
 * the event loop in a small pool of Web Workers so that a request for images does not stall
 * every other request of the process for the tens of milliseconds each image takes.
 */
import { paintScene } from "../providers/simulator/painter.ts";
import { planScene } from "../providers/simulator/scene.ts";
import { encodeJpeg } from "./jpeg.ts";
import { PngError } from "./png.ts";
import { pngToJpeg } from "./transcode.ts";

/** One of the simulator's pictures, as the painter takes it. */
export interface PaintTask {
  prompt: string;
  /** Which of the request's `n` images (each has its own seed). */
  index: number;
  width: number;
  height: number;
  guidanceScale: number;
  steps: number;
}

/** A piece of image work and its result: JPEG bytes. */
export type ImageTask = { kind: "paint"; paint: PaintTask } | { kind: "png"; png: Uint8Array };

/** Does image work; every method gives JPEG bytes. */
export interface ImageWork {
  run(task: ImageTask, signal: AbortSignal): Promise<Uint8Array>;
  /** Stops any threads it started. */
  close(): void;
  /** From now on stops its threads whenever no task is pending (a server draining for
   * shutdown, whose idle threads would keep the process alive); a later task starts them. */
  release?(): void;
}

/** Does one task on the calling thread. */
export async function runImageTask(task: ImageTask): Promise<Uint8Array> {
  if (task.kind === "png") return await pngToJpeg(task.png);
  const { prompt, index, width, height, guidanceScale, steps } = task.paint;
  const rgb = paintScene(planScene(prompt, index), width, height, { guidanceScale, steps });
  return encodeJpeg({ width, height, data: rgb, channels: 3 });
}

/** Image work on the calling thread (tests, and where workers cannot start). */
export const inlineImageWork: ImageWork = {
  run: (task) => runImageTask(task),
  close: () => {},
};

/** What a worker answers for task `id`. */
export type WorkerReply =
  | { id: number; jpeg: Uint8Array }
  | { id: number; error: { name: string; message: string } };

interface Pending {
  resolve(jpeg: Uint8Array): void;
  reject(error: unknown): void;
  worker: Worker;
}

/**
 * A lazily started pool of image workers (at most `size`), each taking tasks in turn. A task
 * whose caller gives up (its signal aborts) is answered at once; the worker finishes it and
 * the result is dropped. A worker that crashes fails its tasks and is replaced on next use.
 */
export class ImageWorkers implements ImageWork {
  readonly #size: number;
  readonly #workers: Worker[] = [];
  readonly #pending = new Map<number, Pending>();
  #next = 0;
  #id = 0;
  #closed = false;
  #released = false;

  constructor(size = Math.max(1, Math.min(4, (navigator.hardwareConcurrency ?? 2) - 1))) {
    this.#size = size;
  }

  run(task: ImageTask, signal: AbortSignal): Promise<Uint8Array> {
    if (this.#closed) return Promise.reject(new Error("the image workers are closed"));
    if (signal.aborted) return Promise.reject(signal.reason);
    const worker = this.#pick();
    const id = ++this.#id;
    return new Promise<Uint8Array>((resolve, reject) => {
      const onAbort = () => {
        this.#pending.delete(id);
        this.#stopIfIdle();
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#pending.set(id, {
        worker,
        resolve: (jpeg) => {
          signal.removeEventListener("abort", onAbort);
          resolve(jpeg);
        },
        reject: (error) => {
          signal.removeEventListener("abort", onAbort);
          reject(error);
        },
      });
      worker.postMessage({ id, task });
    });
  }

  release(): void {
    this.#released = true;
    this.#stopIfIdle();
  }

  #stopIfIdle(): void {
    if (!this.#released || this.#pending.size > 0) return;
    for (const worker of this.#workers.splice(0)) worker.terminate();
  }

  close(): void {
    this.#closed = true;
    for (const worker of this.#workers.splice(0)) worker.terminate();
    for (const pending of this.#pending.values()) {
      pending.reject(new Error("the image workers were closed"));
    }
    this.#pending.clear();
  }

  #pick(): Worker {
    if (this.#workers.length < this.#size) {
      const worker = new Worker(new URL("./worker.ts", import.meta.url).href, { type: "module" });
      worker.onmessage = (e: MessageEvent<WorkerReply>) => this.#reply(e.data);
      worker.onerror = (e: ErrorEvent) => {
        e.preventDefault();
        this.#crashed(worker, e.message);
      };
      this.#workers.push(worker);
      return worker;
    }
    const worker = this.#workers[this.#next % this.#workers.length]!;
    this.#next++;
    return worker;
  }

  #reply(reply: WorkerReply): void {
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    this.#pending.delete(reply.id);
    this.#stopIfIdle();
    if ("jpeg" in reply) pending.resolve(reply.jpeg);
    else {
      const { name, message } = reply.error;
      pending.reject(name === "PngError" ? new PngError(message) : new Error(message));
    }
  }

  #crashed(worker: Worker, message: string): void {
    worker.terminate();
    const index = this.#workers.indexOf(worker);
    if (index >= 0) this.#workers.splice(index, 1);
    for (const [id, pending] of this.#pending) {
      if (pending.worker !== worker) continue;
      this.#pending.delete(id);
      pending.reject(new Error(`an image worker failed: ${message}`));
    }
  }
}
