// @ts-check
/// <reference lib="dom" />
/** The operator's dashboard: keys, models, the request log, usage and health, all through the
 * admin API with the admin token (kept in this tab's session storage, never in a URL). */
import { ApiFailure, call, callJson, sseData } from "./api.js";
import { barChart, scoreBar } from "./chart.js";
import { byId, copyButton, h, messageOf, show } from "./dom.js";

const TOKEN_STORAGE = "switchyard.adminToken";
const SCOPES = /** @type {const} */ (["chat", "other", "images"]);
const WINDOWS = /** @type {const} */ ([["per_minute", "minute"], ["per_day", "day"]]);
/** Fields of an admin model view that a PUT does not take. */
const VIEW_ONLY = ["available", "served", "source", "config_hash"];
/** How far back each poll of the log looks again (streams are logged when they end). */
const LOG_OVERLAP_MS = 5 * 60_000;

/**
 * @typedef {{ per_minute?: number | null, per_day?: number | null }} WindowLimits
 * @typedef {{ id: string, name: string, created: string, last_used: string | null,
 *   disabled: boolean, models: string[] | null, preview: boolean,
 *   limits: Record<string, WindowLimits> }} Key
 * @typedef {{ ts: string, request_id: string, method: string, path: string, status: number,
 *   ms: number, key_id: string | null, model: string | null, prompt_tokens: number | null,
 *   completion_tokens: number | null, error: string | null }} LogRecord
 */

const loginSection = byId("login", HTMLElement);
const loginStatus = byId("login-status", HTMLElement);
const tokenInput = byId("admin-token", HTMLInputElement);
const dashboard = byId("dashboard", HTMLElement);

/** The admin token of this tab, if signed in. */
function token() {
  return sessionStorage.getItem(TOKEN_STORAGE);
}

/**
 * Calls the admin API with the token; a 401 signs out.
 * @param {string} path
 * @param {import("./api.js").CallOptions} [options]
 */
async function admin(path, options = {}) {
  try {
    return await callJson(path, { ...options, token: token() });
  } catch (e) {
    if (e instanceof ApiFailure && e.status === 401) signOut("The admin token was refused (401).");
    throw e;
  }
}

/** Shows that the admin API is off (its routes answer 404). */
function adminOff() {
  byId("admin-off", HTMLElement).hidden = false;
  loginSection.hidden = true;
  dashboard.hidden = true;
}

/** @param {string} [why] */
function signOut(why = "") {
  sessionStorage.removeItem(TOKEN_STORAGE);
  stopTail();
  dashboard.hidden = true;
  loginSection.hidden = false;
  loginStatus.textContent = why;
}

/** Checks the stored token and opens the dashboard with it. */
async function signIn() {
  try {
    await call("/admin/keys", { token: token() });
  } catch (e) {
    if (e instanceof ApiFailure && e.status === 404) return adminOff();
    signOut(e instanceof ApiFailure && e.status === 401 ? "Wrong admin token." : messageOf(e));
    return;
  }
  loginSection.hidden = true;
  dashboard.hidden = false;
  loginStatus.textContent = "";
  await Promise.all([loadKeys(), loadModels(), loadUsage(), loadBatches(), loadHealth()]);
  restartTail();
}

byId("login-form", HTMLFormElement).addEventListener("submit", (event) => {
  event.preventDefault();
  sessionStorage.setItem(TOKEN_STORAGE, tokenInput.value.trim());
  tokenInput.value = "";
  signIn();
});
byId("sign-out", HTMLButtonElement).addEventListener("click", () => signOut());

/**
 * A table with a header row and body rows.
 * @param {string} caption
 * @param {string[]} columns
 * @param {HTMLTableRowElement[]} rows
 */
function table(caption, columns, rows) {
  return h(
    "table",
    {},
    h("caption", { class: "visually-hidden" }, caption),
    h("thead", {}, h("tr", {}, ...columns.map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, ...rows),
  );
}

/** @param {(Node | string)[]} cells */
function tr(...cells) {
  return h("tr", {}, ...cells.map((c) => h("td", {}, c)));
}

/** @param {string | null} iso */
function when(iso) {
  return iso === null ? "never" : iso.replace("T", " ").slice(0, 19);
}

// Keys.

const keyForm = byId("key-form", HTMLFormElement);
const keyName = byId("key-name", HTMLInputElement);
const keyModels = byId("key-models", HTMLInputElement);
const keyPreview = byId("key-preview", HTMLInputElement);
const keyDisabled = byId("key-disabled", HTMLInputElement);
const keyStatus = byId("key-status", HTMLElement);
/** The key being edited, or `null` when the form creates one. */
/** @type {Key | null} */
let editing = null;

/**
 * @param {string} scope
 * @param {string} window
 */
function limitInput(scope, window) {
  return byId(`limit-${scope}-${window}`, HTMLInputElement);
}

/** The limits the form sets (only the filled-in windows). */
function formLimits() {
  /** @type {Record<string, WindowLimits>} */
  const limits = {};
  for (const scope of SCOPES) {
    for (const [field, window] of WINDOWS) {
      const text = limitInput(scope, window).value.trim();
      if (text === "") continue;
      (limits[scope] ??= {})[field] = text === "unlimited" ? null : Number(text);
    }
  }
  return limits;
}

/** @param {Key | null} key */
function editKey(key) {
  editing = key;
  byId("key-form-legend", HTMLElement).textContent = key
    ? `Edit key ${key.name} (${key.id})`
    : "Create a key";
  byId("key-submit", HTMLButtonElement).textContent = key ? "Save key" : "Create key";
  byId("key-cancel", HTMLButtonElement).hidden = !key;
  byId("key-disabled-label", HTMLElement).hidden = !key;
  keyName.value = key?.name ?? "";
  keyModels.value = key?.models?.join(", ") ?? "";
  keyPreview.checked = key?.preview ?? false;
  keyDisabled.checked = key?.disabled ?? false;
  for (const scope of SCOPES) {
    for (const [field, window] of WINDOWS) {
      const value = key?.limits?.[scope]?.[field];
      limitInput(scope, window).value = value === undefined
        ? ""
        : value === null
        ? "unlimited"
        : String(value);
    }
  }
  if (key) keyName.focus();
}

keyForm.addEventListener("submit", async (event) => {
  event.preventDefault();
  const models = keyModels.value.split(",").map((m) => m.trim()).filter((m) => m !== "");
  /** @type {Record<string, unknown>} */
  const body = {
    name: keyName.value.trim(),
    models: models.length === 0 ? null : models,
    preview: keyPreview.checked,
    limits: formLimits(),
  };
  try {
    if (editing) {
      body.disabled = keyDisabled.checked;
      await admin(`/admin/keys/${encodeURIComponent(editing.id)}`, { method: "PATCH", body });
      keyStatus.textContent = `Saved key ${body.name}.`;
      byId("new-key", HTMLElement).hidden = true;
    } else {
      const created = await admin("/admin/keys", { method: "POST", body });
      keyStatus.textContent = `Created key ${created.name} (${created.id}).`;
      const value = byId("new-key-value", HTMLElement);
      value.textContent = created.key;
      value.nextElementSibling?.remove();
      value.after(copyButton(() => created.key, "Copy the new key"));
      byId("new-key", HTMLElement).hidden = false;
    }
    editKey(null);
    await loadKeys();
  } catch (e) {
    keyStatus.textContent = messageOf(e);
  }
});
byId("key-cancel", HTMLButtonElement).addEventListener("click", () => editKey(null));

async function loadKeys() {
  /** @type {Key[]} */
  const keys = (await admin("/admin/keys")).data;
  const rows = keys.map((key) => {
    const edit = h("button", {
      type: "button",
      class: "secondary small",
      "aria-label": `Edit ${key.name}`,
    }, "Edit");
    edit.addEventListener("click", () => editKey(key));
    const revoke = h("button", {
      type: "button",
      class: "danger small",
      "aria-label": `Revoke ${key.name}`,
    }, "Revoke");
    revoke.addEventListener("click", async () => {
      if (!confirm(`Revoke the key ${key.name} (${key.id})? Requests with it fail at once.`)) {
        return;
      }
      try {
        await admin(`/admin/keys/${encodeURIComponent(key.id)}`, { method: "DELETE" });
        keyStatus.textContent = `Revoked key ${key.name}.`;
        byId("new-key", HTMLElement).hidden = true;
        await loadKeys();
      } catch (e) {
        keyStatus.textContent = messageOf(e);
      }
    });
    const row = tr(
      key.name,
      h("code", {}, key.id),
      key.models === null ? "all" : key.models.join(", "),
      key.preview ? "yes" : "no",
      key.disabled ? "disabled" : "active",
      when(key.last_used),
      h("span", { class: "actions" }, edit, revoke),
    );
    row.dataset.key = key.id;
    return row;
  });
  show(
    byId("keys-table", HTMLElement),
    keys.length === 0
      ? h("p", { class: "hint" }, "No keys yet.")
      : table("API keys", ["Name", "Id", "Models", "Preview", "State", "Last used", ""], rows),
  );
}

// Models.

const modelId = byId("model-id", HTMLInputElement);
const modelJson = byId("model-json", HTMLTextAreaElement);
const modelStatus = byId("model-status", HTMLElement);
const NEW_MODEL = { provider: "sim", chat_completions: true, labels: ["chat completions"] };

/**
 * The stored record of a model, as a PUT body (so a PUT keeps every field).
 * @param {string} id
 * @returns {Promise<Record<string, unknown>>}
 */
async function modelRecord(id) {
  const view = await admin(`/admin/models/${encodeURIComponent(id)}`);
  for (const field of VIEW_ONLY) delete view[field];
  // A model with routes is written with them alone (its provider fields mirror the first).
  if (Array.isArray(view.routes)) {
    delete view.provider;
    delete view.upstream_model;
  }
  return view;
}

/**
 * @param {string} id
 * @param {Record<string, unknown>} record
 */
async function putModel(id, record) {
  await admin(`/admin/models/${encodeURIComponent(id)}`, { method: "PUT", body: record });
  await loadModels();
}

/** @param {string | null} id */
async function editModel(id) {
  byId("model-form-legend", HTMLElement).textContent = id ? `Edit model ${id}` : "Add a model";
  modelId.value = id ?? "";
  modelId.readOnly = id !== null;
  /** @type {Record<string, unknown>} */
  const record = id ? await modelRecord(id) : { ...NEW_MODEL };
  delete record.id;
  modelJson.value = JSON.stringify(record, null, 2);
  (id ? modelJson : modelId).focus();
}

byId("model-form", HTMLFormElement).addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    const record = JSON.parse(modelJson.value);
    await putModel(modelId.value.trim(), record);
    modelStatus.textContent = `Saved model ${modelId.value}.`;
  } catch (e) {
    modelStatus.textContent = e instanceof SyntaxError
      ? `Not valid JSON: ${e.message}`
      : messageOf(e);
  }
});
byId("model-new", HTMLButtonElement).addEventListener("click", () => editModel(null));

/** @param {Record<string, unknown>} m */
function capabilities(m) {
  return [
    m.chat_completions && "chat",
    m.function_calling && "tools",
    m.image_input && "image input",
    m.moderation && "moderation",
    m.image_generation && "image generation",
  ].filter(Boolean).join(", ");
}

/** @type {Record<string, unknown>[]} */
let modelViews = [];

async function loadModels() {
  modelViews = (await admin("/admin/models")).data;
  const rows = modelViews.map((m) => {
    const id = String(m.id);
    const edit = h("button", {
      type: "button",
      class: "secondary small",
      "aria-label": `Edit ${id}`,
    }, "Edit");
    edit.addEventListener(
      "click",
      () => editModel(id).catch((e) => (modelStatus.textContent = messageOf(e))),
    );
    const toggle = h(
      "button",
      {
        type: "button",
        class: "secondary small",
        "aria-label": `${m.enabled ? "Disable" : "Enable"} ${id}`,
      },
      m.enabled ? "Disable" : "Enable",
    );
    toggle.addEventListener("click", async () => {
      try {
        // PATCH changes only `enabled`; whatever else the record holds stays.
        const enabled = !m.enabled;
        await admin(`/admin/models/${encodeURIComponent(id)}`, {
          method: "PATCH",
          body: { enabled },
        });
        await loadModels();
        modelStatus.textContent = `${enabled ? "Enabled" : "Disabled"} model ${id}.`;
      } catch (e) {
        modelStatus.textContent = messageOf(e);
      }
    });
    const row = tr(
      h("code", {}, id),
      String(m.provider),
      String(m.access),
      capabilities(m),
      m.served ? "served" : !m.enabled ? "disabled" : "provider not configured",
      h("span", { class: "actions" }, edit, toggle),
    );
    row.dataset.model = id;
    return row;
  });
  show(
    byId("models-table", HTMLElement),
    table("Models", ["Id", "Provider", "Access", "Capabilities", "State", ""], rows),
  );
  renderHealthProviders();
}

// The request log: a live tail (the API's `follow` stream where it has one, else polling).

const logRows = byId("log-rows", HTMLElement);
const logMode = byId("log-mode", HTMLElement);
const logLive = byId("log-live", HTMLInputElement);
const logAdmin = byId("log-admin", HTMLInputElement);
/** Ids of the records shown, so a poll that overlaps adds none twice. */
let shown = new Set();
/** Stops the running tail. */
/** @type {AbortController | null} */
let tail = null;
const MAX_ROWS = 300;

function logQuery() {
  const params = new URLSearchParams();
  const status = byId("log-status-filter", HTMLInputElement).value.trim();
  const model = byId("log-model-filter", HTMLInputElement).value.trim();
  const key = byId("log-key-filter", HTMLInputElement).value.trim();
  if (status) params.set("status", status);
  if (model) params.set("model", model);
  if (key) params.set("key_id", key);
  return params;
}

/** @param {LogRecord[]} records newest first */
function addRecords(records) {
  const fresh = records.filter((r) => !shown.has(r.request_id));
  for (const record of fresh.reverse()) {
    shown.add(record.request_id);
    if (!logAdmin.checked && !record.path.startsWith("/v1/")) continue;
    const tokens = record.prompt_tokens === null
      ? ""
      : `${record.prompt_tokens} + ${record.completion_tokens ?? 0}`;
    const row = tr(
      when(record.ts),
      `${record.method} ${record.path}`,
      h("span", { class: record.status >= 400 ? "status bad" : "status" }, String(record.status)),
      record.model ?? "",
      record.key_id ?? "anonymous",
      tokens,
      String(record.ms),
    );
    row.dataset.requestId = record.request_id;
    if (record.error) row.title = record.error;
    logRows.prepend(row);
  }
  while (logRows.children.length > MAX_ROWS) logRows.lastElementChild?.remove();
}

function stopTail() {
  tail?.abort();
  tail = null;
}

function restartTail() {
  stopTail();
  shown = new Set();
  show(logRows);
  const controller = new AbortController();
  tail = controller;
  runTail(controller.signal).catch((e) => {
    if (!controller.signal.aborted) logMode.textContent = `The log tail stopped: ${messageOf(e)}`;
  });
}

/** @param {AbortSignal} signal */
async function runTail(signal) {
  const query = logQuery();
  const first = await admin(`/admin/logs?${query}&limit=100`, { signal });
  addRecords(first.data);
  if (!logLive.checked) {
    logMode.textContent = "Showing the latest records.";
    return;
  }
  if (await followStream(query, signal)) return;
  logMode.textContent = "Live: polling every 2 seconds.";
  let newest = first.data[0]?.ts ?? null;
  while (!signal.aborted) {
    await new Promise((resolve) => setTimeout(resolve, 2000));
    if (signal.aborted) return;
    const params = new URLSearchParams(query);
    params.set("limit", "200");
    if (newest) params.set("since", new Date(Date.parse(newest) - LOG_OVERLAP_MS).toISOString());
    const page = await admin(`/admin/logs?${params}`, { signal });
    addRecords(page.data);
    if (page.data[0] && (newest === null || page.data[0].ts > newest)) newest = page.data[0].ts;
  }
}

/**
 * Follows the log as a server-sent event stream when the API offers one (`follow=1`); `false`
 * when it does not (it refuses the parameter or answers plain JSON).
 * @param {URLSearchParams} query
 * @param {AbortSignal} signal
 */
async function followStream(query, signal) {
  const params = new URLSearchParams(query);
  params.set("follow", "1");
  let response;
  try {
    response = await fetch(`/admin/logs?${params}`, {
      headers: { authorization: `Bearer ${token()}`, accept: "text/event-stream" },
      signal,
    });
  } catch {
    return false;
  }
  if (!response.ok || !response.headers.get("content-type")?.startsWith("text/event-stream")) {
    await response.body?.cancel();
    return false;
  }
  logMode.textContent = "Live: following the log.";
  for await (const data of sseData(response)) {
    const record = JSON.parse(data);
    if (record && typeof record.request_id === "string") addRecords([record]);
  }
  return true;
}

byId("log-filters", HTMLFormElement).addEventListener("change", restartTail);
byId("log-filters", HTMLFormElement).addEventListener("submit", (event) => {
  event.preventDefault();
  restartTail();
});

// Usage.

const usageDay = byId("usage-day", HTMLInputElement);

/**
 * Sums `rows`' `field` by `group`.
 * @param {Record<string, any>[]} rows
 * @param {(row: Record<string, any>) => string} group
 * @param {string} field
 */
function totals(rows, group, field) {
  /** @type {Map<string, number>} */
  const sums = new Map();
  for (const row of rows) sums.set(group(row), (sums.get(group(row)) ?? 0) + (row[field] ?? 0));
  return [...sums].sort((a, b) => b[1] - a[1]).map(([label, value]) => ({ label, value }));
}

/**
 * A titled chart.
 * @param {string} title
 * @param {{ label: string, value: number }[]} bars
 */
function figure(title, bars) {
  return h(
    "figure",
    {},
    h("figcaption", {}, title),
    bars.length === 0 ? h("p", { class: "hint" }, "Nothing yet.") : barChart(title, bars),
  );
}

async function loadUsage() {
  const day = usageDay.value;
  const usage = await admin(`/admin/usage${day ? `?day=${day}` : ""}`);
  if (!day) usageDay.value = usage.day;
  /** @param {Record<string, any>} r */
  const keyLabel = (r) => r.key_name ?? r.key_id ?? "anonymous";
  /** @param {Record<string, any>} r */
  const modelLabel = (r) => r.model ?? "(no model)";
  const days = [];
  for (let back = 6; back >= 0; back--) {
    days.push(new Date(Date.parse(usage.day) - back * 86_400_000).toISOString().slice(0, 10));
  }
  const perDay = await Promise.all(
    days.map(async (d) => ({
      label: d,
      value: d === usage.day
        ? usage.totals.requests
        : (await admin(`/admin/usage?day=${d}`)).totals.requests,
    })),
  );
  show(
    byId("usage-charts", HTMLElement),
    figure(`Requests per day, the 7 days to ${usage.day}`, perDay),
    figure(`Requests per key on ${usage.day}`, totals(usage.data, keyLabel, "requests")),
    figure(`Requests per model on ${usage.day}`, totals(usage.data, modelLabel, "requests")),
    figure(`Tokens per model on ${usage.day}`, totals(usage.data, modelLabel, "total_tokens")),
    figure(`Errors per key on ${usage.day}`, totals(usage.data, keyLabel, "errors")),
  );
  showChecks(usage.day, usage.models ?? []);
}

/**
 * A count, or a dash for none (so that a column of counts reads at a glance).
 * @param {number} n
 */
function count(n) {
  return n === 0 ? "\u2013" : n.toLocaleString("en-US");
}

/**
 * What the response cache and the guardrails did on `day`, per model (`GET /admin/usage`'s
 * `models`): a table and a chart of the cache's hit ratio, a table and a chart of the guardrails'
 * verdicts with what they found by type.
 * @param {string} day
 * @param {Record<string, any>[]} models
 */
function showChecks(day, models) {
  /** @param {Record<string, any>} m */
  const label = (m) => m.model ?? "(no model)";
  const cached = models.filter((m) => m.cache !== null);
  show(
    byId("usage-cache", HTMLElement),
    cached.length === 0
      ? h("p", { class: "hint" }, `No call went through a response cache on ${day}.`)
      : h(
        "div",
        { class: "charts" },
        table(
          `Response cache per model on ${day}`,
          ["Model", "Hits", "Misses", "Bypass", "Hit ratio"],
          cached.map((m) =>
            tr(
              label(m),
              count(m.cache.hits),
              count(m.cache.misses),
              count(m.cache.bypass),
              m.cache.hit_ratio === null ? "\u2013" : `${Math.round(m.cache.hit_ratio * 100)}%`,
            )
          ),
        ),
        h(
          "figure",
          {},
          h("figcaption", {}, `Cache hit ratio per model on ${day}`),
          barChart(
            `Cache hit ratio per model on ${day}`,
            cached.filter((m) => m.cache.hit_ratio !== null).map((m) => ({
              label: label(m),
              value: Math.round(m.cache.hit_ratio * 100),
            })),
            { unit: "%", max: 100 },
          ),
        ),
      ),
  );
  const rows = models.flatMap((m) =>
    m.guardrails.map((/** @type {Record<string, any>} */ g) => ({ model: label(m), ...g }))
  );
  /** @type {Map<string, number>} */
  const blocks = new Map();
  /** @type {Map<string, number>} */
  const found = new Map();
  for (const g of rows) {
    blocks.set(g.model, (blocks.get(g.model) ?? 0) + g.blocked);
    for (const [type, n] of Object.entries(g.found)) found.set(type, (found.get(type) ?? 0) + n);
  }
  show(
    byId("usage-guardrails", HTMLElement),
    rows.length === 0 ? h("p", { class: "hint" }, `No guardrail ran on ${day}.`) : h(
      "div",
      {},
      table(
        `Guardrail verdicts per model on ${day}`,
        [
          "Model",
          "Guardrail",
          "Stage",
          "Passed",
          "Redacted",
          "Blocked",
          "Logged",
          "Errors",
          "Found",
        ],
        rows.map((g) =>
          tr(
            g.model,
            g.name,
            g.stage,
            count(g.passed),
            count(g.redacted),
            count(g.blocked),
            count(g.logged),
            count(g.errors),
            Object.entries(g.found).map(([type, n]) => `${type} ${n}`).join(", ") || "\u2013",
          )
        ),
      ),
      h(
        "div",
        { class: "charts" },
        figure(
          `Guardrail blocks per model on ${day}`,
          [...blocks].map(([model, value]) => ({ label: model, value })),
        ),
        figure(
          `What the guardrails found, by type, on ${day}`,
          [...found].sort((a, b) => b[1] - a[1]).map(([type, value]) => ({ label: type, value })),
        ),
      ),
    ),
  );
}

usageDay.addEventListener("change", () => loadUsage().catch(() => {}));

// Batches: every key's, newest first, with their progress.

const batchesBody = byId("batches-body", HTMLElement);

/**
 * @typedef {{ id: string, owner: string | null, endpoint: string, status: string,
 *   created_at: number, request_counts: { total: number, completed: number, failed: number } }}
 *   BatchView
 */

async function loadBatches() {
  try {
    const list = await admin("/admin/batches?limit=100");
    /** @type {BatchView[]} */
    const batches = list.data;
    if (batches.length === 0) {
      show(batchesBody, h("p", { class: "hint" }, "No batches yet."));
      return;
    }
    show(
      batchesBody,
      table(
        "Batches",
        ["Batch", "Key", "Endpoint", "Status", "Lines done", "Created (UTC)"],
        batches.map((b) => {
          const { total, completed, failed } = b.request_counts;
          const done = completed + failed;
          const row = tr(
            b.id,
            b.owner ?? "",
            b.endpoint,
            b.status,
            h(
              "span",
              { class: "progress" },
              scoreBar(total === 0 ? 0 : done / total),
              h("span", { class: "num" }, `${done} of ${total}, ${failed} failed`),
            ),
            when(new Date(b.created_at * 1000).toISOString()),
          );
          row.dataset.batch = b.id;
          return row;
        }),
      ),
    );
  } catch (e) {
    show(batchesBody, h("p", { class: "error", role: "alert" }, messageOf(e)));
  }
}

byId("batches-refresh", HTMLButtonElement).addEventListener(
  "click",
  () => loadBatches().catch(() => {}),
);

// Health.

/** @type {HTMLElement} */
const healthService = h("p", {});
/** @type {HTMLElement} */
const healthProviders = h("div", {});

async function loadHealth() {
  show(byId("health-body", HTMLElement), healthService, healthProviders);
  try {
    const health = await callJson("/healthz");
    healthService.textContent =
      `Service: ${health.status}; log records kept out of KV: ${health.log_records_not_stored}.`;
  } catch (e) {
    healthService.textContent = `Service: ${messageOf(e)}`;
  }
  renderHealthProviders();
}

function renderHealthProviders() {
  /** @type {Map<string, boolean>} */
  const providers = new Map();
  for (const m of modelViews) providers.set(String(m.provider), Boolean(m.available));
  show(
    healthProviders,
    table(
      "Providers",
      ["Provider", "State"],
      [...providers].map(([id, ok]) => tr(id, ok ? "configured" : "not configured (no API key)")),
    ),
  );
}

// Start: is the admin API on at all (its paths answer 404 when off)? Then sign in if a token
// is stored.

async function start() {
  try {
    await call("/admin/keys");
  } catch (e) {
    if (e instanceof ApiFailure && e.status === 404) return adminOff();
  }
  if (token()) await signIn();
}

start();
