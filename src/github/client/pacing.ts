import Bottleneck from "bottleneck";
import type { ProbotOctokit } from "probot";
import { LruMap } from "../../memory/lru-map.js";

/** How many installations keep their limiters; the least recently used beyond are forgotten. */
const MAX_INSTALLATIONS = 1000;

/** How many times a request GitHub answered with a secondary rate limit is sent again. */
const SECONDARY_RETRIES = 2;

/** The gaps GitHub asks integrators to keep between one installation's requests, in ms. */
export interface PaceOptions {
  /** Between two writes (POST, PATCH, PUT, DELETE); default 1,000 (plugin-throttling's). */
  writeGapMs?: number;
  /** Between two writes that notify people (comments, issues, reviews); default 3,000. */
  notificationGapMs?: number;
  /** Between two searches; default 2,000. */
  searchGapMs?: number;
  /** How many installations keep their limiters; default 1,000. */
  maxInstallations?: number;
}

/**
 * What @octokit/plugin-throttling schedules on: it asks each group for the limiter of its
 * throttle id, and an installation's limiters answer for that installation alone.
 */
interface LimiterGroup {
  key(id?: string): Bottleneck;
}

/** One installation's limiters, in the shape the throttling plugin takes them. */
export interface InstallationLimiters {
  global: LimiterGroup;
  write: LimiterGroup;
  search: LimiterGroup;
  notifications: LimiterGroup;
}

/**
 * Paces GitHub requests per installation: each installation gets its own write, notification,
 * search and concurrency limiters, so one busy installation's writes (a restart resyncing its
 * runs) never queue another's. The plugin's own groups are module-level and shared by every
 * Octokit in the process; these belong to the app that made them. Memory stays bounded: the
 * least recently used installations beyond `maxInstallations` are forgotten (an idle limiter
 * holds no timers).
 */
export class InstallationPacing {
  readonly #limiters: LruMap<string, InstallationLimiters>;

  constructor(private readonly options: PaceOptions = {}) {
    this.#limiters = new LruMap(options.maxInstallations ?? MAX_INSTALLATIONS);
  }

  /** The limiters of installation `id` (the throttle id Probot gives its installation clients). */
  limitersOf(id: string): InstallationLimiters {
    const known = this.#limiters.get(id);
    if (known !== undefined) return known;
    const { writeGapMs = 1000, notificationGapMs = 3000, searchGapMs = 2000 } = this.options;
    const limiters = {
      global: single(new Bottleneck({ maxConcurrent: 10 })),
      write: single(new Bottleneck({ maxConcurrent: 1, minTime: writeGapMs })),
      search: single(new Bottleneck({ maxConcurrent: 1, minTime: searchGapMs })),
      notifications: single(new Bottleneck({ maxConcurrent: 1, minTime: notificationGapMs })),
    };
    this.#limiters.set(id, limiters);
    return limiters;
  }

  /** How many installations have limiters now. */
  get size(): number {
    return this.#limiters.size;
  }
}

function single(limiter: Bottleneck): LimiterGroup {
  return { key: () => limiter };
}

/** The throttle options of a Probot Octokit this module reads and sets. */
interface ThrottleOptions {
  enabled?: boolean;
  id?: string;
  onSecondaryRateLimit?: SecondaryLimitHandler;
}

type SecondaryLimitHandler = (
  retryAfter: number,
  options: { method: string; url: string; request: { retryCount: number } },
  octokit: { log: { warn(message: string): void } },
  retryCount: number,
) => boolean;

/**
 * `Octokit` (Probot's, or one derived from it) whose installation clients are paced by
 * `pacing`, per installation, and send a request GitHub refused with a secondary rate limit
 * again after its `retry-after` (twice at most; Probot's default only logs). Clients with
 * throttling off (the tests') are left as they are. Give it to Probot as its `Octokit`.
 */
export function pacedOctokit(
  Octokit: typeof ProbotOctokit,
  pacing: InstallationPacing,
): typeof ProbotOctokit {
  return Octokit.defaults((options: { throttle?: ThrottleOptions }) => {
    const throttle = options.throttle;
    if (throttle === undefined || throttle.enabled === false) return options;
    const retrySecondary: SecondaryLimitHandler = (retryAfter, request, octokit, retryCount) => {
      octokit.log.warn(
        `secondary rate limit on ${request.method} ${request.url}, attempt ${retryCount + 1}; ${retryCount < SECONDARY_RETRIES ? `retrying in ${retryAfter} s` : "giving up"}`,
      );
      return retryCount < SECONDARY_RETRIES;
    };
    return {
      ...options,
      throttle: {
        ...throttle,
        onSecondaryRateLimit: retrySecondary,
        // The app's own (JWT) client has no installation id: it is paced apart from all of them.
        ...pacing.limitersOf(throttle.id ?? "app"),
      },
    };
  });
}
