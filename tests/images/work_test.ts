import assert from "node:assert/strict";
import { PngError } from "../../src/images/png.ts";
import {
  type ImageTask,
  type ImageWork,
  ImageWorkers,
  inlineImageWork,
} from "../../src/images/work.ts";
import { writePng } from "../support/png_writer.ts";

const PAINT: ImageTask = {
  kind: "paint",
  paint: {
    prompt: "a red sunset over mountains",
    index: 0,
    width: 512,
    height: 512,
    guidanceScale: 3.5,
    steps: 30,
  },
};

const never = () => new AbortController().signal;

/** How many macrotasks the calling thread ran while `work` did a task. */
async function ticksDuring(work: ImageWork, task: ImageTask): Promise<number> {
  let ticks = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    ticks++;
    setTimeout(tick, 0);
  };
  setTimeout(tick, 0);
  await work.run(task, never());
  running = false;
  await new Promise((r) => setTimeout(r, 0));
  return ticks;
}

Deno.test("image workers give the same JPEG bytes as the calling thread", async () => {
  const workers = new ImageWorkers(1);
  try {
    const png = await writePng({
      width: 8,
      height: 4,
      colorType: 2,
      depth: 8,
      samples: Array.from({ length: 8 * 4 * 3 }, (_, i) => (i * 37) % 256),
    });
    for (const task of [PAINT, { kind: "png", png } as const]) {
      assert.deepEqual(await workers.run(task, never()), await inlineImageWork.run(task, never()));
    }
  } finally {
    workers.close();
  }
});

Deno.test("image work in a worker leaves the calling thread free; inline work does not", async () => {
  const workers = new ImageWorkers(1);
  try {
    await workers.run(PAINT, never()); // start the worker
    assert.ok((await ticksDuring(workers, PAINT)) > 0);
    assert.equal(await ticksDuring(inlineImageWork, PAINT), 0);
  } finally {
    workers.close();
  }
});

Deno.test("image workers: a broken PNG is a PngError; an aborted task and close() reject", async () => {
  const workers = new ImageWorkers(1);
  try {
    const broken = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
    await assert.rejects(workers.run({ kind: "png", png: broken }, never()), PngError);

    const controller = new AbortController();
    const task = workers.run(PAINT, controller.signal);
    controller.abort(new Error("caller left"));
    await assert.rejects(task, /caller left/);
    await assert.rejects(workers.run(PAINT, controller.signal), /caller left/);

    const pending = workers.run(PAINT, never());
    workers.close();
    await assert.rejects(pending, /closed/);
    await assert.rejects(workers.run(PAINT, never()), /closed/);
  } finally {
    workers.close();
  }
});
