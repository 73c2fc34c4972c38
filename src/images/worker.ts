/** The image worker's entry: runs {@link ImageTask}s posted by {@link ImageWorkers}. */
import { type ImageTask, runImageTask, type WorkerReply } from "./work.ts";

const scope = globalThis as unknown as {
  onmessage: ((e: MessageEvent<{ id: number; task: ImageTask }>) => void) | null;
  postMessage(message: WorkerReply, transfer?: Transferable[]): void;
};

scope.onmessage = async (e) => {
  const { id, task } = e.data;
  try {
    const jpeg = await runImageTask(task);
    scope.postMessage({ id, jpeg }, [jpeg.buffer as ArrayBuffer]);
  } catch (error) {
    const { name, message } = error instanceof Error ? error : new Error(String(error));
    scope.postMessage({ id, error: { name, message } });
  }
};
