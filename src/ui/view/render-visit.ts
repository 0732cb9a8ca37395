import { duration, esc, usd } from "./html.js";
import { renderRunHeader, type PagePaths } from "./render-run.js";
import type {
  GateView,
  LoopView,
  PrototypeView,
  RunView,
  TokensView,
  VisitView,
} from "./run-view.js";

/**
 * A visit's own page: a loop opens to its iterations (goal, gates with exit codes and output
 * tails, feedback handed on, cost and tokens), a prototype to its variants side by side (branch,
 * gates, cost, result) and the judge's verdict with its reasoning. Other visits show their
 * evidence on the run page. A pure function of the view; all text escaped.
 */
export function renderVisitPage(view: RunView, visitIndex: number, paths: PagePaths): string {
  const visit = view.visits[visitIndex];
  if (visit === undefined) {
    return `${renderRunHeader(view, paths)}<section><h2>No visit ${visitIndex + 1}</h2><p>This run has ${view.visits.length} visit(s).</p></section>`;
  }
  const body =
    visit.loop !== undefined
      ? renderLoop(visit, visit.loop)
      : visit.prototype !== undefined
        ? renderPrototype(visit, visit.prototype)
        : `<p>This ${esc(visit.kind)} node's evidence is on the <a href="${esc(paths.run)}#visit-${visit.index}">run page</a>.</p>`;
  return `${renderRunHeader(view, paths)}<section class="visit-page kind-${esc(visit.kind)}"><h2>${esc(visit.title)} <span class="kind">${esc(visit.kind)}</span> · attempt ${visit.attempt} · <span class="outcome">${esc(visit.outcome ?? "in progress")}</span></h2>${visit.reason === undefined ? "" : `<p class="reason">${esc(visit.reason)}</p>`}${body}</section>`;
}

function renderLoop(visit: VisitView, loop: LoopView): string {
  const iterations = loop.iterations
    .map((iteration) => {
      const agent =
        iteration.agent === undefined
          ? ""
          : `<p class="agent">agent ${esc(iteration.agent.engine ?? "")} ${esc(iteration.agent.model ?? "")} · exit code ${iteration.agent.exitCode}</p>${iteration.agent.output === undefined ? "" : `<pre class="output">${esc(iteration.agent.output)}</pre>`}`;
      const feedback =
        iteration.feedback.length === 0
          ? iteration.finished
            ? '<p class="feedback">every gate passed</p>'
            : ""
          : `<div class="feedback"><h4>Feedback handed to iteration ${iteration.iteration + 1}</h4>${iteration.feedback.map((item) => `<p>${esc(item.gate)}</p><pre class="output">${esc(item.output)}</pre>`).join("")}</div>`;
      return `<article class="iteration" data-iteration="${iteration.iteration}"><h3>Iteration ${iteration.iteration}${iteration.finished ? "" : " (in progress)"} · ${esc(usd(iteration.costUsd))}${tokens(iteration.tokens)}</h3>${agent}${renderGates(iteration.gates)}${feedback}</article>`;
    })
    .join("");
  return `<p class="goal"><strong>Goal:</strong> ${esc(loop.goal)}</p><p>Gates: ${loop.gateNames.map((name) => `<code>${esc(name)}</code>`).join(", ")} · iterations ${loop.iterations.length}${loop.maxIterations === undefined ? "" : ` of at most ${loop.maxIterations}`} · cost ${esc(usd(visit.costUsd))}</p>${iterations === "" ? "<p>No iteration has started yet.</p>" : iterations}`;
}

function renderPrototype(visit: VisitView, prototype: PrototypeView): string {
  const columns = prototype.variants
    .map(
      (variant) =>
        `<article class="variant result-${esc(variant.result)}" data-variant="${variant.variant}"><h3>Variant ${variant.variant}${variant.variant === prototype.winner ? " · winner" : ""}</h3><dl><dt>engine</dt><dd>${esc(variant.engine ?? "")}</dd><dt>model</dt><dd>${esc(variant.model ?? "")}</dd><dt>branch</dt><dd><code>${esc(variant.branch ?? "not yet claimed")}</code></dd><dt>result</dt><dd class="result">${esc(variant.result)}</dd><dt>cost</dt><dd>${esc(usd(variant.costUsd))}${tokens(variant.tokens)}</dd><dt>time</dt><dd>${esc(duration(variant.durationMs))}</dd></dl>${renderGates(variant.gates)}${variant.failure === undefined ? "" : `<p class="reason">${esc(variant.failure)}</p>`}</article>`,
    )
    .join("");
  const judge =
    prototype.judge === undefined
      ? ""
      : `<section class="judge"><h3>Judge${prototype.judge.model === undefined ? "" : ` · ${esc(prototype.judge.model)}`}</h3><p>verdict: <strong>${esc(prototype.judge.verdict ?? prototype.judge.error ?? "")}</strong></p>${prototype.judge.reasoning === undefined ? "" : `<blockquote class="reasoning">${esc(prototype.judge.reasoning)}</blockquote>`}</section>`;
  const why =
    prototype.why === undefined
      ? ""
      : `<p class="why">Winner: variant ${prototype.winner ?? "?"} — ${esc(prototype.why)}</p>`;
  return `<p class="goal"><strong>Brief:</strong> ${esc(prototype.brief)}</p><p>select: <code>${esc(prototype.select)}</code> · cost ${esc(usd(visit.costUsd))}</p><div class="variants">${columns}</div>${judge}${why}`;
}

function renderGates(gates: readonly GateView[]): string {
  if (gates.length === 0) return "";
  return `<table class="gates"><thead><tr><th>gate</th><th>exit code</th></tr></thead><tbody>${gates
    .map(
      (gate) =>
        `<tr class="${gate.exitCode === 0 ? "pass" : "fail"}"><td>${esc(gate.name)}</td><td>${gate.exitCode}</td></tr>${gate.output === undefined || gate.output === "" ? "" : `<tr><td colspan="2"><pre class="output">${esc(gate.output)}</pre></td></tr>`}`,
    )
    .join("")}</tbody></table>`;
}

function tokens(usage: TokensView | undefined): string {
  if (usage === undefined) return "";
  return ` · ${usage.input} in / ${usage.output} out tokens${usage.cachedInput === undefined ? "" : ` (${usage.cachedInput} cached)`}`;
}
