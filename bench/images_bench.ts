/**
 * Micro-benchmarks of the image path: `deno bench bench/images_bench.ts`.
 * The JPEG encoder at the spec's three sizes, the simulator's painter at the largest, the PNG
 * decoder, and the whole PNG → JPEG transcoding an OpenAI-style upstream's images go through.
 */
import { encodeJpeg } from "../src/images/jpeg.ts";
import { decodePng } from "../src/images/png.ts";
import { pngToJpeg } from "../src/images/transcode.ts";
import { paintScene } from "../src/providers/simulator/painter.ts";
import { planScene } from "../src/providers/simulator/scene.ts";
import { PNG } from "npm:pngjs@7.0.0";

const OPTIONS = { guidanceScale: 3.5, steps: 30 };

for (const [width, height] of [[1024, 1024], [1024, 1792], [1792, 1024]] as const) {
  const rgb = paintScene(planScene("mountains by a lake at sunset", 0), width, height, OPTIONS);
  Deno.bench(`encodeJpeg ${width}x${height} 4:2:0`, { group: "jpeg" }, () => {
    encodeJpeg({ width, height, data: rgb, channels: 3 });
  });
  Deno.bench(`encodeJpeg ${width}x${height} 4:4:4`, { group: "jpeg444" }, () => {
    encodeJpeg({ width, height, data: rgb, channels: 3 }, { subsampling: "4:4:4" });
  });
}

Deno.bench("paintScene 1792x1024", { group: "paint" }, () => {
  paintScene(planScene("a forest by a lake under a full moon", 0), 1792, 1024, OPTIONS);
});

const source = new PNG({ width: 1024, height: 1024 });
const city = paintScene(planScene("a city at night", 0), 1024, 1024, OPTIONS);
for (let i = 0; i < 1024 * 1024; i++) {
  source.data.set([...city.subarray(i * 3, i * 3 + 3), 255], i * 4);
}
const png = new Uint8Array(PNG.sync.write(source));
Deno.bench("decodePng 1024x1024 RGBA", { group: "png" }, async () => {
  await decodePng(png);
});

Deno.bench("pngToJpeg 1024x1024 RGBA", { group: "transcode" }, async () => {
  await pngToJpeg(png);
});
