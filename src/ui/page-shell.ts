import { esc } from "./view/html.js";

/** What a page needs besides its content: its title and what its script reads. */
export interface ShellOptions {
  title: string;
  /** `index`, `run` or `visit`: which pure renderer the script re-renders with. */
  page: "index" | "run" | "visit";
  /** The JSON API the page polls. */
  api: string;
  runPath?: string;
  indexPath: string;
  visit?: number;
  /** The token state-changing requests must carry; never a secret itself. */
  csrf?: string;
  /** A finished run's page does not poll. */
  final: boolean;
  /** Who is signed in, when anyone. */
  viewer?: string;
  /** Where the sign-out form posts (with the CSRF token), when the host has sessions. */
  signOutPath?: string;
}

/** Security headers of every page: nothing loads from anywhere but this server. */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
};

/**
 * A complete HTML page around server-rendered `content` (the same markup the script renders
 * later, so the page is readable before and without the script). The script's inputs travel in
 * escaped `data-` attributes.
 */
export function renderShell(content: string, options: ShellOptions): string {
  const attributes: [string, string | undefined][] = [
    ["page", options.page],
    ["api", options.api],
    ["run-path", options.runPath],
    ["index-path", options.indexPath],
    ["visit", options.visit === undefined ? undefined : String(options.visit)],
    ["csrf", options.csrf],
    ["final", String(options.final)],
  ];
  const data = attributes
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => ` data-${name}="${esc(value)}"`)
    .join("");
  const viewer =
    options.viewer === undefined ? "" : `<p class="viewer">Answering as ${esc(options.viewer)}</p>`;
  const signOut =
    options.signOutPath === undefined || options.csrf === undefined
      ? ""
      : `<form class="sign-out" method="post" action="${esc(options.signOutPath)}"><input type="hidden" name="csrf" value="${esc(options.csrf)}"><button type="submit">Sign out</button></form>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(options.title)}</title><link rel="stylesheet" href="/ui-assets/run-pages.css">
<script type="module" src="/ui-assets/client/run-page.js"></script></head>
<body${data}><main id="page">${content}</main><footer>${viewer}${signOut}</footer></body></html>
`;
}

/** A short page with a heading and a message (sign-in needed, no access, not found). */
export function renderMessagePage(
  title: string,
  message: string,
  link?: { href: string; text: string },
): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title><link rel="stylesheet" href="/ui-assets/run-pages.css"></head>
<body><main><h1>${esc(title)}</h1><p class="message">${esc(message)}</p>${link === undefined ? "" : `<p><a href="${esc(link.href)}">${esc(link.text)}</a></p>`}</main></body></html>
`;
}
