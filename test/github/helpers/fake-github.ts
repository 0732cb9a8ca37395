import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import nock from "nock";
import { checkRequest } from "./openapi.js";

/** One request the app made to GitHub. */
export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  body: Record<string, unknown>;
  /** The Authorization header, when the request had one. */
  authorization?: string;
  /** The status the fake answered with. */
  status?: number;
  /** Whether the fake did the write (an outage may answer an error after doing it). */
  applied?: boolean;
}

/** An answer: status, JSON body and extra headers. */
export type Reply = [number, unknown] | [number, unknown, Record<string, string>];

/**
 * An error answer instead of the route's: 502 (an outage) unless given; with `wrote`, GitHub
 * did the write before failing to answer.
 */
export interface Outage {
  status?: number;
  wrote?: boolean;
  /** Headers of the error answer (a secondary rate limit's `retry-after`). */
  headers?: Record<string, string>;
  message?: string;
}

/** A check run as the fake keeps it: what the app sent, plus id and URL. */
export interface CheckRun extends Record<string, unknown> {
  id: number;
  html_url: string;
}

function str(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}
type Route = [string, RegExp, (match: string[], request: RecordedRequest) => Reply];

/** GitHub's API; a GitHub Enterprise Server's is `<protocol>://<host>/api/v3`. */
const API = "https://api.github.com";
/** The app's slug (`GET /app`): its bot user is `<slug>[bot]`. */
const APP_SLUG = "clustercode";
/** The login of the app's bot user, the author of everything the app posts. */
export const BOT_LOGIN = `${APP_SLUG}[bot]`;
const BOT = { login: BOT_LOGIN, type: "Bot" };

/** Blob SHA of a text, as git computes it. */
export function blobSha(text: string): string {
  const bytes = Buffer.from(text, "utf8");
  return createHash("sha1").update(`blob ${bytes.length}\0`).update(bytes).digest("hex");
}

/**
 * GitHub's REST API as nock interceptors over a little in-memory state. Every request is
 * recorded and checked against GitHub's OpenAPI description; a request no route knows, or a
 * malformed body, lands in `problems` (and gets a 501), so a test fails on it.
 */
export class FakeGitHub {
  /** @param api Where the API is served: github.com's by default, or a GHE server's base URL. */
  constructor(readonly api: string = API) {}

  readonly requests: RecordedRequest[] = [];
  readonly problems: string[] = [];
  /** Files by ref (branch name or SHA), then path. */
  readonly files = new Map<string, Map<string, string>>();
  readonly permissions = new Map<string, string>();
  /** User access tokens (from the OAuth web flow) by the login they belong to: `GET /user`. */
  readonly userTokens = new Map<string, string>();
  readonly teams = new Map<string, Set<string>>();
  readonly comments: {
    id: number;
    issue: number;
    body: string;
    html_url: string;
    user: { login: string; type: string };
  }[] = [];
  readonly checkRuns: CheckRun[] = [];
  readonly pulls: {
    number: number;
    head: string;
    base: string;
    draft: boolean;
    html_url: string;
    body?: string;
    state?: "open" | "closed";
    /** GitHub's answer to whether it merges cleanly (null while computing). */
    mergeable?: boolean | null;
  }[] = [];
  /** The bare repository standing in for the remote: git refs and compares read it. */
  remote: string | undefined;
  /** Line comments of a review, by review id (`GET .../reviews/{id}/comments`). */
  readonly reviewComments = new Map<number, Record<string, unknown>[]>();
  /** Check runs of a check suite (another app's), by suite id. */
  readonly suiteRuns = new Map<number, Record<string, unknown>[]>();
  /** Annotations of a check run, by check run id. */
  readonly annotations = new Map<number, Record<string, unknown>[]>();
  /** GitHub Actions job logs, by job id. */
  readonly jobLogs = new Map<number, string>();
  readonly pullFiles = new Map<number, { filename: string; status: string }[]>();
  /** The app's webhook deliveries, newest first. */
  readonly deliveries: Record<string, unknown>[] = [];
  readonly issues: {
    number: number;
    title: string;
    body: string;
    user: { login: string; type: string };
  }[] = [];
  /**
   * Requests (method and path) to answer once with an error: 502 (an outage) unless given;
   * with `wrote`, GitHub did the write before failing to answer.
   */
  readonly outages: (Outage & { method: string; path: RegExp })[] = [];
  /** Asked about every request after the outages: an outage to answer it with, or none. */
  faultOf: ((method: string, path: string) => Outage | undefined) | undefined;
  #nextId = 1000;
  readonly #routes: Route[] = [
    [
      "POST",
      /^\/app\/installations\/(\d+)\/access_tokens$/,
      () => [
        201,
        {
          token: "ghs_faketoken",
          expires_at: new Date(Date.now() + 3_600_000).toISOString(),
          permissions: {},
          repository_selection: "all",
        },
      ],
    ],
    ["GET", /^\/repos\/[^/]+\/[^/]+\/installation$/, () => [200, { id: 1 }]],
    ["GET", /^\/app$/, () => [200, { id: 1, slug: APP_SLUG, name: "ClusterCode" }]],
    ["GET", /^\/app\/installations$/, () => [200, [{ id: 1, account: { login: "Codertocat" } }]]],
    [
      "GET",
      /^\/installation\/repositories$/,
      () => [
        200,
        {
          total_count: 1,
          repositories: [{ id: 1, name: "Hello-World", full_name: "Codertocat/Hello-World" }],
        },
      ],
    ],
    [
      "GET",
      /^\/repos\/([^/]+)\/([^/]+)$/,
      ([owner, name]) => [
        200,
        { id: 1, name, full_name: `${owner}/${name}`, default_branch: "main" },
      ],
    ],
    [
      "GET",
      /^\/repos\/[^/]+\/[^/]+\/collaborators\/([^/]+)\/permission$/,
      ([user = ""]) => {
        const permission = this.permissions.get(user);
        return permission === undefined
          ? [404, { message: "Not Found" }]
          : [200, { permission, role_name: permission, user: { login: user } }];
      },
    ],
    [
      "GET",
      /^\/orgs\/([^/]+)\/teams\/([^/]+)\/memberships\/([^/]+)$/,
      ([org, team, user = ""]) =>
        this.teams.get(`${org}/${team}`)?.has(user)
          ? [200, { state: "active", role: "member", url: "" }]
          : [404, { message: "Not Found" }],
    ],
    [
      "GET",
      /^\/repos\/([^/]+)\/([^/]+)\/contents\/(.+)$/,
      ([, , path = ""], request) => this.#contents(path, request.query.get("ref") ?? "main"),
    ],
    ["DELETE", /^\/repos\/[^/]+\/[^/]+\/issues\/\d+\/labels\/.+$/, () => [200, []]],
    [
      "GET",
      /^\/repos\/[^/]+\/[^/]+\/issues\/(\d+)\/comments$/,
      ([issue]) => [200, this.comments.filter((c) => c.issue === Number(issue))],
    ],
    [
      "POST",
      /^\/repos\/[^/]+\/[^/]+\/issues\/(\d+)\/comments$/,
      ([issue], request) => {
        const id = this.#nextId++;
        const comment = {
          id,
          issue: Number(issue),
          body: str(request.body.body),
          html_url: `https://github.com/c/${id}`,
          user: BOT,
        };
        this.comments.push(comment);
        return [201, comment];
      },
    ],
    [
      "PATCH",
      /^\/repos\/[^/]+\/[^/]+\/issues\/comments\/(\d+)$/,
      ([id], request) => {
        const comment = this.comments.find((c) => c.id === Number(id));
        if (comment === undefined) return [404, { message: "Not Found" }];
        comment.body = str(request.body.body);
        return [200, comment];
      },
    ],
    [
      "POST",
      /^\/repos\/[^/]+\/[^/]+\/issues$/,
      (_, request) => {
        const issue = {
          number: this.#nextId++,
          title: str(request.body.title),
          body: str(request.body.body),
          user: BOT,
        };
        this.issues.push(issue);
        return [201, issue];
      },
    ],
    [
      "GET",
      /^\/repos\/[^/]+\/[^/]+\/issues$/,
      () => [200, this.issues.map((issue) => ({ ...issue, state: "open" })).reverse()],
    ],
    [
      "GET",
      /^\/repos\/([^/]+)\/[^/]+\/pulls$/,
      ([owner], request) => [
        200,
        this.pulls
          .filter((p) => `${owner}:${p.head}` === request.query.get("head"))
          .map((p) => this.#pull(p)),
      ],
    ],
    [
      "POST",
      /^\/repos\/[^/]+\/[^/]+\/pulls$/,
      (_, request) => {
        const pull = {
          number: this.#nextId++,
          head: String(request.body.head),
          base: String(request.body.base),
          draft: request.body.draft === true,
          html_url: "",
          body: str(request.body.body),
        };
        pull.html_url = `https://github.com/pull/${pull.number}`;
        this.pulls.push(pull);
        return [201, this.#pull(pull)];
      },
    ],
    [
      "GET",
      /^\/repos\/[^/]+\/[^/]+\/pulls\/(\d+)\/files$/,
      ([n]) => [
        200,
        (this.pullFiles.get(Number(n)) ?? []).map((f) => ({
          ...f,
          sha: "0",
          additions: 1,
          deletions: 0,
          changes: 1,
          blob_url: "",
          raw_url: "",
          contents_url: "",
        })),
      ],
    ],
    [
      "GET",
      /^\/repos\/[^/]+\/[^/]+\/pulls\/(\d+)$/,
      ([n]) => {
        const pull = this.pulls.find((p) => p.number === Number(n));
        return pull === undefined ? [404, { message: "Not Found" }] : [200, this.#pull(pull)];
      },
    ],
    [
      "GET",
      /^\/repos\/[^/]+\/[^/]+\/git\/ref\/(.+)$/,
      ([ref = ""]) => {
        const sha = this.#revParse(`refs/${ref}`);
        if (sha === undefined) return [404, { message: "Not Found" }];
        const url = `https://api.github.com/repos/o/r/git/refs/${ref}`;
        return [
          200,
          { ref: `refs/${ref}`, node_id: "REF_1", url, object: { sha, type: "commit", url } },
        ];
      },
    ],
    [
      "PATCH",
      /^\/repos\/[^/]+\/[^/]+\/git\/refs\/(.+)$/,
      ([ref = ""], request) => {
        const name = `refs/${ref}`;
        if (this.#revParse(name) === undefined)
          return [422, { message: "Reference does not exist" }];
        this.#git("update-ref", name, str(request.body.sha));
        return [200, { ref: name, object: { sha: str(request.body.sha), type: "commit" } }];
      },
    ],
    [
      "POST",
      /^\/repos\/[^/]+\/[^/]+\/git\/refs$/,
      (_, request) => {
        const name = str(request.body.ref);
        if (this.#revParse(name) !== undefined)
          return [422, { message: "Reference already exists" }];
        this.#git("update-ref", name, str(request.body.sha));
        return [201, { ref: name, object: { sha: str(request.body.sha), type: "commit" } }];
      },
    ],
    [
      "GET",
      /^\/repos\/[^/]+\/[^/]+\/compare\/(.+)\.\.\.(.+)$/,
      ([base = "", head = ""]) => {
        const numstat = this.#git("diff", "--numstat", `${base}...${head}`);
        const files = numstat
          .split("\n")
          .filter((line) => line !== "")
          .map((line) => {
            const [additions = "0", deletions = "0", filename = ""] = line.split("\t");
            return { filename, additions: Number(additions), deletions: Number(deletions) };
          });
        return [200, { status: "ahead", files, commits: [] }];
      },
    ],
    [
      "PATCH",
      /^\/repos\/[^/]+\/[^/]+\/pulls\/(\d+)$/,
      ([n], request) => {
        const pull = this.pulls.find((p) => p.number === Number(n));
        if (pull === undefined) return [404, { message: "Not Found" }];
        if (typeof request.body.body === "string") pull.body = request.body.body;
        return [200, this.#pull(pull)];
      },
    ],
    [
      "GET",
      /^\/repos\/[^/]+\/[^/]+\/pulls\/\d+\/reviews\/(\d+)\/comments$/,
      ([id]) => [200, this.reviewComments.get(Number(id)) ?? []],
    ],
    [
      "GET",
      /^\/repos\/[^/]+\/[^/]+\/check-suites\/(\d+)\/check-runs$/,
      ([id]) => {
        const runs = this.suiteRuns.get(Number(id)) ?? [];
        return [200, { total_count: runs.length, check_runs: runs }];
      },
    ],
    [
      "GET",
      /^\/repos\/[^/]+\/[^/]+\/check-runs\/(\d+)\/annotations$/,
      ([id]) => [200, this.annotations.get(Number(id)) ?? []],
    ],
    [
      "GET",
      /^\/repos\/[^/]+\/[^/]+\/actions\/jobs\/(\d+)\/logs$/,
      ([id]) => {
        const log = this.jobLogs.get(Number(id));
        return log === undefined
          ? [404, { message: "Not Found" }]
          : [200, log, { "content-type": "text/plain" }];
      },
    ],
    [
      "POST",
      /^\/graphql$/,
      (_, request) => {
        // Only the mutation the app sends: a pull request (by node id) leaves draft.
        const id = (request.body.variables as { id?: unknown } | undefined)?.id;
        const pull = this.pulls.find((p) => `PR_${p.number}` === id);
        if (
          !str(request.body.query).includes("markPullRequestReadyForReview") ||
          pull === undefined
        )
          return [200, { errors: [{ message: "not faked" }] }];
        pull.draft = false;
        return [
          200,
          { data: { markPullRequestReadyForReview: { pullRequest: { isDraft: false } } } },
        ];
      },
    ],
    ["POST", /^\/repos\/[^/]+\/[^/]+\/pulls\/\d+\/requested_reviewers$/, () => [201, {}]],
    [
      "GET",
      /^\/repos\/[^/]+\/[^/]+\/commits\/([^/]+)\/check-runs$/,
      ([sha], request) => {
        // In pages of per_page (default 30, at most 100), linked as GitHub links them.
        const runs = this.checkRuns.filter((run) => run.head_sha === sha);
        const perPage = Math.min(Number(request.query.get("per_page") ?? 30), 100);
        const page = Number(request.query.get("page") ?? 1);
        const body = {
          total_count: runs.length,
          check_runs: runs.slice((page - 1) * perPage, page * perPage),
        };
        if (page * perPage >= runs.length) return [200, body];
        const next = `${this.api}${request.path}?per_page=${perPage}&page=${page + 1}`;
        return [200, body, { link: `<${next}>; rel="next"` }];
      },
    ],
    [
      "POST",
      /^\/repos\/[^/]+\/[^/]+\/check-runs$/,
      (_, request) => {
        const id = this.#nextId++;
        const run: CheckRun = { ...request.body, id, html_url: `https://github.com/checks/${id}` };
        this.checkRuns.push(run);
        return [201, run];
      },
    ],
    [
      "PATCH",
      /^\/repos\/[^/]+\/[^/]+\/check-runs\/(\d+)$/,
      ([id], request) => {
        const run = this.checkRuns.find((r) => r.id === Number(id));
        if (run === undefined) return [404, { message: "Not Found" }];
        Object.assign(run, request.body);
        return [200, run];
      },
    ],
    [
      "GET",
      /^\/app\/hook\/deliveries$/,
      (_, request) => {
        // Newest first, in pages linked by a cursor, as GitHub lists them.
        const perPage = Number(request.query.get("per_page") ?? 30);
        const start = Number(request.query.get("cursor") ?? 0);
        const page = this.deliveries.slice(start, start + perPage);
        const next = start + perPage;
        return next < this.deliveries.length
          ? [
              200,
              page,
              {
                link: `<${this.api}/app/hook/deliveries?per_page=${perPage}&cursor=${next}>; rel="next"`,
              },
            ]
          : [200, page];
      },
    ],
    ["POST", /^\/app\/hook\/deliveries\/\d+\/attempts$/, () => [202, {}]],
    [
      "GET",
      /^\/user$/,
      (_match, request) => {
        const token = request.authorization?.replace(/^(token|bearer) /i, "") ?? "";
        const login = this.userTokens.get(token);
        return login === undefined
          ? [401, { message: "Bad credentials" }]
          : [200, { login, id: 7, type: "User" }];
      },
    ],
  ];

  /** Intercepts the API (api.github.com by default); everything else but 127.0.0.1 is refused. */
  install(): void {
    nock.disableNetConnect();
    nock.enableNetConnect("127.0.0.1");
    const dispatch = (method: string, uri: string, body: unknown, authorization: unknown) =>
      this.answer(method, uri, body, typeof authorization === "string" ? authorization : undefined);
    // A function, not an arrow: nock hands the intercepted request (its headers) as `this`.
    const handle = (method: string) =>
      function (this: nock.ReplyFnContext, uri: string, body: unknown) {
        return dispatch(method, uri, body, this.req.headers.authorization);
      };
    const base = new URL(this.api);
    const scope = nock(base.origin).persist();
    // A GHE API lives under /api/v3 on a host that also serves git: only the API is intercepted.
    const api = base.pathname.replace(/\/$/, "");
    // GHE serves GraphQL beside the REST API: /api/graphql next to /api/v3.
    const graphql = api.replace(/\/v3$/, "/graphql");
    const filter = (path: string) => api === "" || path.startsWith(`${api}/`) || path === graphql;
    scope.get(filter).reply(handle("GET"));
    scope.post(filter).reply(handle("POST"));
    scope.patch(filter).reply(handle("PATCH"));
    scope.delete(filter).reply(handle("DELETE"));
    scope.put(filter).reply(handle("PUT"));
  }

  /** Removes the interceptors. */
  uninstall(): void {
    nock.cleanAll();
    nock.enableNetConnect();
  }

  /** Requests matching a method and a path pattern. */
  calls(method: string, path: RegExp): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && path.test(r.path));
  }

  /** Puts a file on a ref. */
  setFile(ref: string, path: string, text: string): void {
    const files = this.files.get(ref) ?? new Map<string, string>();
    files.set(path, text);
    this.files.set(ref, files);
  }

  /**
   * Records and answers one request to the API (`uri` is its path and query); nock's
   * interceptors call it, and so does a loopback server the app reaches over HTTP.
   */
  answer(method: string, uri: string, body: unknown, authorization?: string): Reply {
    const base = new URL(this.api);
    const url = new URL(uri, base.origin);
    const api = base.pathname.replace(/\/$/, "");
    url.pathname =
      url.pathname === api.replace(/\/v3$/, "/graphql")
        ? "/graphql"
        : url.pathname.slice(api.length);
    const parsed: unknown = typeof body === "string" && body !== "" ? JSON.parse(body) : body;
    const record =
      typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {};
    const request: RecordedRequest = {
      method,
      path: decodeURIComponent(url.pathname),
      query: url.searchParams,
      body: record,
      ...(authorization === undefined ? {} : { authorization }),
    };
    this.requests.push(request);
    // GraphQL is one endpoint outside the REST description: its route checks the mutation.
    if (url.pathname !== "/graphql")
      this.problems.push(...checkRequest(method, url.pathname, parsed === "" ? undefined : parsed));
    const outage = this.outages.findIndex((o) => o.method === method && o.path.test(request.path));
    const fault =
      outage >= 0 ? this.outages.splice(outage, 1)[0] : this.faultOf?.(method, request.path);
    if (fault !== undefined) {
      const { status = 502, wrote = false, headers, message } = fault;
      if (wrote) this.#route(method, request);
      request.status = status;
      request.applied = wrote;
      const body = { message: message ?? (status === 502 ? "Server Error" : "Gone") };
      return headers === undefined ? [status, body] : [status, body, headers];
    }
    const reply = this.#route(method, request);
    request.status = reply[0];
    request.applied = reply[0] < 300;
    return reply;
  }

  #route(method: string, request: RecordedRequest): Reply {
    for (const [routeMethod, pattern, reply] of this.#routes) {
      const match = routeMethod === method ? pattern.exec(request.path) : null;
      if (match === null) continue;
      try {
        return reply(match.slice(1), request);
      } catch (error) {
        this.problems.push(`fake route ${method} ${request.path} failed: ${String(error)}`);
        return [500, { message: "fake failed" }];
      }
    }
    this.problems.push(`no fake route for ${method} ${request.path}`);
    return [501, { message: "not faked" }];
  }

  #contents(path: string, ref: string): Reply {
    const files = this.files.get(ref) ?? new Map<string, string>();
    const text = files.get(path);
    if (text !== undefined) {
      return [
        200,
        {
          type: "file",
          path,
          name: path.split("/").pop(),
          sha: blobSha(text),
          size: text.length,
          encoding: "base64",
          content: Buffer.from(text).toString("base64"),
        },
      ];
    }
    const children = [...files.keys()].filter((file) => file.startsWith(`${path}/`));
    if (children.length === 0) return [404, { message: "Not Found" }];
    return [
      200,
      children.map((child) => ({
        type: "file",
        path: child,
        name: child.split("/").pop(),
        sha: blobSha(files.get(child) ?? ""),
      })),
    ];
  }

  #pull(pull: FakeGitHub["pulls"][number]) {
    return {
      number: pull.number,
      node_id: `PR_${pull.number}`,
      html_url: pull.html_url,
      draft: pull.draft,
      state: pull.state ?? "open",
      body: pull.body ?? null,
      mergeable: pull.mergeable === undefined ? true : pull.mergeable,
      mergeable_state: pull.mergeable === false ? "dirty" : "clean",
      head: { ref: pull.head, sha: this.#revParse(`refs/heads/${pull.head}`) ?? "0" },
      base: { ref: pull.base },
    };
  }

  /** The commit a ref of the remote points at, if the remote has it. */
  #revParse(ref: string): string | undefined {
    if (this.remote === undefined) return undefined;
    try {
      return this.#git("rev-parse", "--verify", "--quiet", ref).trim();
    } catch {
      return undefined;
    }
  }

  #git(...args: string[]): string {
    if (this.remote === undefined) throw new Error("the fake has no remote repository");
    return execFileSync("git", args, { cwd: this.remote, encoding: "utf8", stdio: "pipe" });
  }
}
