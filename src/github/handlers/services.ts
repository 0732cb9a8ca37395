import type { WarmDemand } from "../../devbox/warm-demand.js";
import type { Answers } from "./answers.js";
import type { GitHub } from "../client/github.js";
import type { Installations } from "../client/installations.js";
import type { Schedules } from "./schedules.js";
import type { RunStarter } from "./starter.js";

/** What event handlers may use, passed explicitly. */
export interface AppServices {
  starter: RunStarter;
  answers: Answers;
  schedules: Schedules;
  installations: Installations;
  /** Says that a repository's (`owner/name`) default branch moved: its warm DevBoxes renew. */
  defaultBranchMoved?: (repo: string) => void;
  /** Where the warm DevBoxes each default branch's workflows ask for are declared. */
  warmDemand?: WarmDemand;
}

/** The context one event handler runs in. */
export interface HandlerContext {
  gh: GitHub;
  deliveryId: string;
  services: AppServices;
}

/** The part of every repository event payload the handlers read. */
export interface RepositoryPayload {
  repository: { name: string; owner: { login: string }; default_branch: string };
  sender: { login: string; type: string };
}
