// @ts-check
/// <reference lib="dom" />
/** The playground: chat (streamed, with tools and images), moderation, the similarity of two
 * texts' embeddings and image generation,
 * all through the public API with the visitor's key (kept in this browser's storage only). */
import { ApiFailure, call, callJson, sseData } from "./api.js";
import { scoreBar } from "./chart.js";
import { byId, h, messageOf, show } from "./dom.js";

const KEY_STORAGE = "switchyard.apiKey";

/**
 * @typedef {{ id: string, chat_completions?: boolean, moderation?: boolean,
 *   default_moderation?: boolean, embeddings?: boolean, image_input?: boolean, function_calling?: boolean,
 *   image_generation?: { sizes: string[], max_n: number } }} Model
 * @typedef {{ id: string, name: string, arguments: string }} ToolCall
 * @typedef {{ role: string, content?: unknown, tool_calls?: unknown[], tool_call_id?: string }} Message
 */

const keyInput = byId("api-key", HTMLInputElement);
const modelSelect = byId("model", HTMLSelectElement);
const modelsStatus = byId("models-status", HTMLElement);
const systemInput = byId("system", HTMLTextAreaElement);
const temperatureInput = byId("temperature", HTMLInputElement);
const maxTokensInput = byId("max-tokens", HTMLInputElement);
const toolsInput = byId("tools", HTMLTextAreaElement);
const toolsError = byId("tools-error", HTMLElement);
const transcript = byId("transcript", HTMLElement);
const chatForm = byId("chat-form", HTMLFormElement);
const promptInput = byId("prompt", HTMLTextAreaElement);
const attachInput = byId("attach", HTMLInputElement);
const attachmentList = byId("attachments", HTMLUListElement);
const sendButton = byId("send", HTMLButtonElement);
const stopButton = byId("stop", HTMLButtonElement);
const chatStatus = byId("chat-status", HTMLElement);
const moderationForm = byId("moderation-form", HTMLFormElement);
const moderationModel = byId("moderation-model", HTMLSelectElement);
const moderationInput = byId("moderation-input", HTMLTextAreaElement);
const moderationResult = byId("moderation-result", HTMLElement);
const embeddingsForm = byId("embeddings-form", HTMLFormElement);
const embeddingModel = byId("embedding-model", HTMLSelectElement);
const embeddingA = byId("embedding-a", HTMLTextAreaElement);
const embeddingB = byId("embedding-b", HTMLTextAreaElement);
const embeddingsResult = byId("embeddings-result", HTMLElement);
const imageForm = byId("image-form", HTMLFormElement);
const imageModel = byId("image-model", HTMLSelectElement);
const imagePrompt = byId("image-prompt", HTMLInputElement);
const imageSize = byId("image-size", HTMLSelectElement);
const imageCount = byId("image-n", HTMLInputElement);
const imagesNote = byId("images-note", HTMLElement);
const imageResult = byId("image-result", HTMLElement);

/** The conversation so far, in OpenAI's message shape (without the system prompt). */
/** @type {Message[]} */
let messages = [];
/** Images attached to the next message, as data URLs. */
/** @type {string[]} */
let attachments = [];
/** The streaming request in flight, if any. */
/** @type {AbortController | null} */
let inFlight = null;
/** @type {Model[]} */
let models = [];

keyInput.value = localStorage.getItem(KEY_STORAGE) ?? "";

function apiKey() {
  return keyInput.value.trim();
}

/**
 * Fills a select with models; keeps the chosen one when it is still there.
 * @param {HTMLSelectElement} select
 * @param {Model[]} list
 * @param {string | undefined} preferred
 */
function fill(select, list, preferred) {
  const chosen = select.value || preferred;
  show(select, ...list.map((m) => h("option", { value: m.id, selected: m.id === chosen }, m.id)));
  select.disabled = list.length === 0;
}

async function loadModels() {
  modelsStatus.textContent = "Loading models\u2026";
  try {
    const list = await callJson("/v1/models", { token: apiKey() });
    models = list.data;
    modelsStatus.textContent = apiKey() === ""
      ? `${models.length} models open without a key.`
      : `${models.length} models open to your key.`;
  } catch (e) {
    models = [];
    modelsStatus.textContent = e instanceof ApiFailure && e.status === 401
      ? "This key is not valid here (401). Clear it to use the public models."
      : `Could not load the models: ${messageOf(e)}`;
  }
  fill(modelSelect, models.filter((m) => m.chat_completions), undefined);
  fill(
    moderationModel,
    models.filter((m) => m.moderation),
    models.find((m) => m.default_moderation)?.id,
  );
  const embeddingModels = models.filter((m) => m.embeddings);
  fill(embeddingModel, embeddingModels, undefined);
  for (const control of embeddingsForm.elements) {
    if (control instanceof HTMLButtonElement) control.disabled = embeddingModels.length === 0;
  }
  const imageModels = models.filter((m) => m.image_generation);
  fill(imageModel, imageModels, undefined);
  imagesNote.hidden = imageModels.length > 0;
  for (const control of imageForm.elements) {
    if (control instanceof HTMLInputElement || control instanceof HTMLButtonElement) {
      control.disabled = imageModels.length === 0;
    }
  }
  fillSizes();
}

function fillSizes() {
  const model = models.find((m) => m.id === imageModel.value);
  const sizes = model?.image_generation?.sizes ?? [];
  show(imageSize, ...sizes.map((s) => h("option", { value: s }, s)));
  imageSize.disabled = sizes.length === 0;
  imageCount.max = String(model?.image_generation?.max_n ?? 1);
}

keyInput.addEventListener("change", () => {
  if (apiKey() === "") localStorage.removeItem(KEY_STORAGE);
  else localStorage.setItem(KEY_STORAGE, apiKey());
  loadModels();
});
byId("forget-key", HTMLButtonElement).addEventListener("click", () => {
  keyInput.value = "";
  localStorage.removeItem(KEY_STORAGE);
  loadModels();
});
imageModel.addEventListener("change", fillSizes);

// Attachments: by file picker or by pasting an image into the message box.

/** @param {File} file */
function attach(file) {
  if (!file.type.startsWith("image/")) return;
  const reader = new FileReader();
  reader.addEventListener("load", () => {
    if (typeof reader.result !== "string") return;
    attachments.push(reader.result);
    renderAttachments();
  });
  reader.readAsDataURL(file);
}

function renderAttachments() {
  show(
    attachmentList,
    ...attachments.map((url, i) => {
      const remove = h("button", {
        type: "button",
        class: "secondary small",
        "aria-label": `Remove image ${i + 1}`,
      }, "×");
      remove.addEventListener("click", () => {
        attachments.splice(i, 1);
        renderAttachments();
      });
      return h("li", {}, h("img", { src: url, alt: `Attached image ${i + 1}` }), remove);
    }),
  );
}

attachInput.addEventListener("change", () => {
  for (const file of attachInput.files ?? []) attach(file);
  attachInput.value = "";
});
promptInput.addEventListener("paste", (event) => {
  const files = [...(event.clipboardData?.files ?? [])].filter((f) => f.type.startsWith("image/"));
  if (files.length === 0) return;
  event.preventDefault();
  files.forEach(attach);
});
promptInput.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) chatForm.requestSubmit();
});

// Chat.

/**
 * Adds a message bubble to the transcript.
 * @param {string} role
 * @param {(Node | string)[]} children
 * @returns {HTMLElement}
 */
function bubble(role, ...children) {
  const element = h(
    "div",
    { class: `message ${role}` },
    h("p", { class: "role" }, role),
    ...children,
  );
  transcript.append(element);
  element.scrollIntoView({ block: "end" });
  return element;
}

/** The tools to send, or `undefined`; throws with a message naming the problem. */
function tools() {
  const text = toolsInput.value.trim();
  if (text === "") return undefined;
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new Error(`Tools are not valid JSON: ${messageOf(e)}`);
  }
  if (!Array.isArray(parsed)) throw new Error("Tools must be a JSON array of tool definitions.");
  return parsed;
}

/** The request body for the conversation so far. */
function chatRequest() {
  /** @type {Record<string, unknown>} */
  const body = {
    model: modelSelect.value,
    messages: systemInput.value.trim() === ""
      ? messages
      : [{ role: "system", content: systemInput.value }, ...messages],
    stream: true,
    stream_options: { include_usage: true },
  };
  if (temperatureInput.value !== "") body.temperature = Number(temperatureInput.value);
  if (maxTokensInput.value !== "") body.max_tokens = Number(maxTokensInput.value);
  const list = tools();
  if (list) body.tools = list;
  return body;
}

chatForm.addEventListener("submit", (event) => {
  event.preventDefault();
  if (inFlight) return;
  const text = promptInput.value;
  /** @type {unknown} */
  const content = attachments.length === 0 ? text : [
    { type: "text", text },
    ...attachments.map((url) => ({ type: "image_url", image_url: { url } })),
  ];
  try {
    toolsError.textContent = "";
    tools();
  } catch (e) {
    toolsError.textContent = messageOf(e);
    return;
  }
  messages.push({ role: "user", content });
  bubble(
    "user",
    h("p", { class: "text" }, text),
    ...attachments.map((url, i) =>
      h("img", { src: url, alt: `Sent image ${i + 1}`, class: "thumb" })
    ),
  );
  promptInput.value = "";
  attachments = [];
  renderAttachments();
  complete();
});

/** Streams the assistant's answer to the conversation so far into a new bubble. */
async function complete() {
  const controller = new AbortController();
  inFlight = controller;
  sendButton.disabled = true;
  stopButton.disabled = false;
  chatStatus.textContent = "Waiting for the model\u2026";
  const textElement = h("p", { class: "text" });
  const callsElement = h("div", { class: "tool-calls" });
  const element = bubble("assistant", textElement, callsElement);
  element.setAttribute("aria-busy", "true");
  let text = "";
  /** @type {ToolCall[]} */
  const calls = [];
  let stopped = false;
  try {
    const response = await call("/v1/chat/completions", {
      method: "POST",
      token: apiKey(),
      body: chatRequest(),
      signal: controller.signal,
    });
    chatStatus.textContent = "Streaming\u2026";
    for await (const data of sseData(response)) {
      if (data === "[DONE]") break;
      const chunk = JSON.parse(data);
      if (chunk.error) throw new Error(chunk.error.message ?? "The stream failed.");
      const delta = chunk.choices?.[0]?.delta;
      if (delta?.content) {
        text += delta.content;
        textElement.textContent = text;
      }
      for (const part of delta?.tool_calls ?? []) {
        const call = calls[part.index] ??= { id: "", name: "", arguments: "" };
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
        renderCalls(callsElement, calls);
      }
      if (chunk.usage) {
        chatStatus.textContent =
          `Done: ${chunk.usage.prompt_tokens} prompt and ${chunk.usage.completion_tokens} completion tokens.`;
      }
    }
  } catch (e) {
    if (controller.signal.aborted) {
      stopped = true;
      chatStatus.textContent = "Stopped.";
      element.append(h("p", { class: "hint" }, "(stopped)"));
    } else {
      chatStatus.textContent = "";
      element.append(h("p", { class: "error", role: "alert" }, messageOf(e)));
    }
  } finally {
    inFlight = null;
    sendButton.disabled = false;
    stopButton.disabled = true;
    element.removeAttribute("aria-busy");
  }
  if (text === "" && calls.length === 0) return;
  /** @type {Message} */
  const message = { role: "assistant", content: text === "" ? null : text };
  if (calls.length > 0 && !stopped) {
    message.tool_calls = calls.map((c) => ({
      id: c.id,
      type: "function",
      function: { name: c.name, arguments: c.arguments },
    }));
    callsElement.append(toolResultsForm(calls));
  }
  messages.push(message);
}

/**
 * Shows the tool calls streamed so far.
 * @param {HTMLElement} element
 * @param {ToolCall[]} calls
 */
function renderCalls(element, calls) {
  show(
    element,
    ...calls.map((c) =>
      h(
        "div",
        { class: "tool-call" },
        h("p", {}, "Tool call ", h("code", {}, c.name)),
        h("pre", {}, h("code", {}, c.arguments)),
      )
    ),
  );
}

/**
 * A form to answer the calls with results and continue the conversation.
 * @param {ToolCall[]} calls
 * @returns {HTMLFormElement}
 */
function toolResultsForm(calls) {
  const form = h("form", { class: "tool-results" });
  const inputs = calls.map((c, i) => {
    const id = `tool-result-${messages.length}-${i}`;
    const input = h("textarea", { id, rows: 2, class: "mono", required: true });
    form.append(h("label", { for: id }, `Result of ${c.name}`), input);
    return input;
  });
  form.append(h("button", { type: "submit" }, "Send results"));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (inFlight) return;
    calls.forEach((c, i) =>
      messages.push({ role: "tool", tool_call_id: c.id, content: inputs[i]?.value ?? "" })
    );
    form.remove();
    complete();
  });
  return form;
}

stopButton.addEventListener("click", () => inFlight?.abort());
byId("clear", HTMLButtonElement).addEventListener("click", () => {
  inFlight?.abort();
  messages = [];
  show(transcript);
  chatStatus.textContent = "";
});

// Moderation.

moderationForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  show(moderationResult, h("p", { class: "hint" }, "Moderating\u2026"));
  try {
    const answer = await callJson("/v1/moderations", {
      method: "POST",
      token: apiKey(),
      body: { model: moderationModel.value, input: moderationInput.value },
    });
    const result = answer.results[0];
    /** @type {[string, number][]} */
    const scores = Object.entries(result.category_scores);
    scores.sort((a, b) => b[1] - a[1]);
    show(
      moderationResult,
      h(
        "p",
        { class: result.flagged ? "flagged" : "clean" },
        result.flagged ? "Flagged" : "Not flagged",
      ),
      h(
        "table",
        { class: "scores" },
        h(
          "thead",
          {},
          h("tr", {}, h("th", { scope: "col" }, "Category"), h("th", { scope: "col" }, "Score")),
        ),
        h(
          "tbody",
          {},
          ...scores.map(([category, score]) =>
            h(
              "tr",
              { class: result.categories[category] ? "flagged" : "" },
              h("th", { scope: "row" }, category),
              h("td", {}, scoreBar(score), h("span", { class: "num" }, score.toFixed(3))),
            )
          ),
        ),
      ),
    );
  } catch (e) {
    show(moderationResult, h("p", { class: "error", role: "alert" }, messageOf(e)));
  }
});

// Embeddings: the cosine similarity of two texts.

/**
 * The cosine of the angle between two vectors (1: same direction).
 * @param {number[]} a
 * @param {number[]} b
 */
function cosine(a, b) {
  let dot = 0, aa = 0, bb = 0;
  a.forEach((x, i) => {
    const y = b[i] ?? 0;
    dot += x * y;
    aa += x * x;
    bb += y * y;
  });
  return aa === 0 || bb === 0 ? 0 : dot / Math.sqrt(aa * bb);
}

embeddingsForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  show(embeddingsResult, h("p", { class: "hint" }, "Embedding\u2026"));
  try {
    const answer = await callJson("/v1/embeddings", {
      method: "POST",
      token: apiKey(),
      body: { model: embeddingModel.value, input: [embeddingA.value, embeddingB.value] },
    });
    /** @type {number[][]} */
    const vectors = answer.data.map((/** @type {{ embedding: number[] }} */ d) => d.embedding);
    const a = vectors[0] ?? [];
    const b = vectors[1] ?? [];
    const similarity = cosine(a, b);
    show(
      embeddingsResult,
      h(
        "p",
        { class: "similarity" },
        "Similarity ",
        scoreBar(similarity),
        h("span", { class: "num" }, similarity.toFixed(3)),
      ),
      h(
        "p",
        { class: "hint" },
        `${a.length} dimensions, ${answer.usage.prompt_tokens} input tokens`,
      ),
    );
  } catch (e) {
    show(embeddingsResult, h("p", { class: "error", role: "alert" }, messageOf(e)));
  }
});

// Image generation.

imageForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  show(imageResult, h("p", { class: "hint" }, "Generating\u2026"));
  try {
    const answer = await callJson("/v1/images/generations", {
      method: "POST",
      token: apiKey(),
      body: {
        model: imageModel.value,
        prompt: imagePrompt.value,
        size: imageSize.value,
        n: Number(imageCount.value || "1"),
      },
    });
    show(
      imageResult,
      ...answer.data.map((
        /** @type {{ url?: string, b64_json?: string }} */ image,
        /** @type {number} */ i,
      ) =>
        h("img", {
          src: image.url ?? `data:image/png;base64,${image.b64_json}`,
          alt: `Image ${i + 1} for \u201c${imagePrompt.value}\u201d`,
        })
      ),
    );
  } catch (e) {
    show(imageResult, h("p", { class: "error", role: "alert" }, messageOf(e)));
  }
});

loadModels();
