// @ts-check
/// <reference lib="dom" />
/** Small DOM helpers shared by the pages. */

/**
 * The element with `id`, checked to be a `type`.
 * @template {HTMLElement} T
 * @param {string} id
 * @param {{ new (): T }} type
 * @returns {T}
 */
export function byId(id, type) {
  const element = document.getElementById(id);
  if (!(element instanceof type)) throw new Error(`#${id} is missing or not a ${type.name}`);
  return element;
}

/**
 * A new element with attributes (`class`, `aria-*`, ...; `false`/`null` leave one out) and
 * children (strings become text).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, string | number | boolean | null | undefined>} [attributes]
 * @param {(Node | string | null | undefined | false)[]} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    element.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child);
  }
  return element;
}

/**
 * A "Copy" button that copies `text()` to the clipboard and says so.
 * @param {() => string} text
 * @param {string} [label] the button's accessible name
 * @returns {HTMLButtonElement}
 */
export function copyButton(text, label = "Copy") {
  const button = h(
    "button",
    { type: "button", class: "secondary copy", "aria-label": label },
    "Copy",
  );
  button.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text());
      button.textContent = "Copied";
    } catch {
      button.textContent = "Select and copy";
    }
    setTimeout(() => (button.textContent = "Copy"), 2000);
  });
  return button;
}

/**
 * Replaces an element's children.
 * @param {Element} element
 * @param {(Node | string)[]} children
 */
export function show(element, ...children) {
  element.replaceChildren(...children);
}

/**
 * The message of a thrown value.
 * @param {unknown} e
 * @returns {string}
 */
export function messageOf(e) {
  return e instanceof Error ? e.message : String(e);
}
