/**
 * The run pages' script, loaded by the browser as an ES module from the app's own server. It
 * polls the page's JSON API and re-renders with the same pure functions the server used for the
 * first paint (so text is escaped the same way), stops once the run is over, streams the running
 * command's output (server-sent events) into the page as text, and sends Approve / Reject with
 * the page's CSRF token. Written against the few DOM members it uses, so the
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
  scrollTop?: number;
  scrollHeight?: number;
  dataset: Record<string, string | undefined>;
  querySelector(selector: string): Element | null;
  querySelectorAll(selector: string): ArrayLike<Element>;
  closest(selector: string): Element | null;
  addEventListener(type: string, listener: (event: { target: unknown }) => void): void;
}

interface Browser {
  document: { body: Element; getElementById(id: string): Element | null };
  location: { reload(): void };
  EventSource?: new (url: string) => EventStream;
}

interface EventStream {
  addEventListener(type: string, listener: (event: { data?: string }) => void): void;
  close(): void;
}

/** Lines of live output the page keeps. */
const LIVE_LINES = 500;

const POLL_MS = 1500;
const browser = globalThis as unknown as Browser;
const body = browser.document.body;
const main = browser.document.getElementById("page");
const data = body.dataset;
const api = data.api ?? "";
const paths: PagePaths = { run: data.runPath ?? "", index: data.indexPath ?? "" };
let last = "";
const live = { lines: [] as string[], note: "Waiting for output…" };

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
  showLive();
}

/** Puts the live output kept so far into the page (a re-render starts the block empty). */
function showLive(): void {
  const pre = main?.querySelector("pre.live") ?? null;
  const note = main?.querySelector(".live-state") ?? null;
  if (note !== null) note.textContent = live.note;
  if (pre === null) return;
  pre.textContent = live.lines.join("\n");
  pre.scrollTop = pre.scrollHeight ?? 0;
}

/** Follows the run's live output until the run is over. */
function follow(): void {
  const Stream = browser.EventSource;
  if (data.page !== "run" || Stream === undefined) return;
  const stream = new Stream(`${api}/log`);
  stream.addEventListener("message", (event) => {
    const { devbox, line } = JSON.parse(event.data ?? "{}") as { devbox?: string; line?: string };
    live.lines.push(`[${devbox ?? "?"}] ${line ?? ""}`);
    live.lines.splice(0, Math.max(0, live.lines.length - LIVE_LINES));
    live.note = "Output of the running command, as it comes:";
    showLive();
  });
  const stop = (note: string) => () => {
    stream.close();
    live.note = note;
    showLive();
  };
  stream.addEventListener("end", stop("The run is over."));
  stream.addEventListener(
    "unavailable",
    stop("This host's DevBoxes are not local: no live output."),
  );
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

if (body.dataset.final !== "true") {
  void poll();
  follow();
}
