import { cleanIssueText } from "../../agents/clean-text.js";
import type { RemovedText } from "../../engine/model.js";

/** A run's brief and what cleaning took out of the issue text. */
export interface Brief {
  text: string;
  removed: RemovedText;
  changed: boolean;
}

/**
 * The brief of a run: the issue's title and body with HTML comments and invisible Unicode
 * removed (the usual carriers of hidden prompt injections), as one untrusted text.
 */
export function buildBrief(title: string, body: string | null | undefined): Brief {
  const cleanTitle = cleanIssueText(title);
  const cleanBody = cleanIssueText(body ?? "");
  const t = cleanTitle.text.trim();
  const b = cleanBody.text.trim();
  const removed = { ...cleanTitle.removed };
  for (const key of Object.keys(removed) as (keyof RemovedText)[])
    removed[key] += cleanBody.removed[key];
  return {
    text: b === "" ? `${t}\n` : `${t}\n\n${b}\n`,
    removed,
    changed: cleanTitle.changed || cleanBody.changed,
  };
}
