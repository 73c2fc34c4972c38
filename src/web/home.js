// @ts-check
/// <reference lib="dom" />
/** The catalogue page: a copy button on each code snippet. */
import { copyButton } from "./dom.js";

for (const snippet of document.querySelectorAll(".snippet")) {
  const code = snippet.querySelector("code");
  const heading = snippet.querySelector("h3");
  if (!code || !heading) continue;
  heading.after(
    copyButton(() => code.textContent ?? "", `Copy the ${heading.textContent} snippet`),
  );
}
const base = document.querySelector(".base-url");
if (base) base.after(" ", copyButton(() => base.textContent ?? "", "Copy the base URL"));
