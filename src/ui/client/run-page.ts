/**
 * The run pages' script, loaded by the browser as an ES module from the app's own server. It
 * polls the page's JSON API and re-renders with the same pure functions the server used for the
 * first paint (so text is escaped the same way), stops once the run is over, and sends Approve
 * / Reject with the page's CSRF token. Written against the few DOM members it uses, so the
 * project's compiler needs no DOM library.
 */
import { renderIndexPage } from "../view/render-index.js";
import { renderRunPage, type PagePaths } from "../view/render-run.js";
import { renderVisitPage } from "../view/render-visit.js";
import type { RunListView, RunView } from "../view/run-view.js";

interface Element {
  innerHTML: string;
  textContent: string | null;
  id: string;
  open?: boolean;
  value?: string;
  disabled?: boolean;
  dataset: Record<string, string | undefined>;
  querySelector(selector: string): Element | null;
  querySelectorAll(selector: string): ArrayLike<Element>;
  closest(selector: string): Element | null;
  addEventListener(type: string, listener: (event: { target: unknown }) => void): void;
}

interface Browser {
  document: { body: Element; getElementById(id: string): Element | null };
  location: { reload(): void };
}

const POLL_MS = 1500;
const browser = globalThis as unknown as Browser;
const body = browser.document.body;
const main = browser.document.getElementById("page");
const data = body.dataset;
const api = data.api ?? "";
const paths: PagePaths = { run: data.runPath ?? "", index: data.indexPath ?? "" };
let last = "";

function render(json: string): void {
  if (main === null || json === last) return;
  last = json;
  // Keep what the person has open or typed across a re-render.
  const open = new Set<string>();
  for (const details of Array.from(main.querySelectorAll("details"))) {
    if (details.open === true) open.add(details.id);
  }
  const note = main.querySelector("input.note")?.value ?? "";
  if (data.page === "index") {
    main.innerHTML = renderIndexPage(JSON.parse(json) as RunListView);
    return;
  }
  const view = JSON.parse(json) as RunView;
  main.innerHTML =
    data.page === "visit"
      ? renderVisitPage(view, Number(data.visit), paths)
      : renderRunPage(view, paths);
  for (const details of Array.from(main.querySelectorAll("details"))) {
    if (open.has(details.id)) details.open = true;
  }
  const input = main.querySelector("input.note");
  if (input !== null) input.value = note;
  body.dataset.final = String(view.final);
}

async function poll(): Promise<void> {
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    try {
      const response = await fetch(api, { headers: { accept: "application/json" } });
      if (response.status === 401) {
        browser.location.reload();
        return;
      }
      if (response.ok) render(await response.text());
    } catch {
      // The server is restarting or the network blinked: try again next round.
    }
    if (body.dataset.final === "true") return;
  }
}

async function answer(button: Element): Promise<void> {
  const panel = button.closest(".approval");
  const result = panel?.querySelector(".answer-result") ?? null;
  const note = panel?.querySelector("input.note")?.value ?? "";
  for (const other of Array.from(panel?.querySelectorAll("button.answer") ?? []))
    other.disabled = true;
  const response = await fetch(`${api}/answer`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-clustercode-csrf": data.csrf ?? "" },
    body: JSON.stringify({
      decision: button.dataset.decision,
      visit: Number(panel?.dataset.visit),
      ...(note === "" ? {} : { note }),
    }),
  });
  const reply = (await response.json().catch(() => ({}))) as { message?: string };
  if (result !== null) {
    result.textContent = reply.message ?? `HTTP ${response.status}`;
    result.dataset.ok = String(response.ok);
  }
  if (!response.ok) {
    for (const other of Array.from(panel?.querySelectorAll("button.answer") ?? []))
      other.disabled = false;
  }
}

main?.addEventListener("click", (event) => {
  const target = event.target as Element | null;
  const button = target?.closest?.("button.answer") ?? null;
  if (button !== null) void answer(button);
});

if (body.dataset.final !== "true") void poll();
