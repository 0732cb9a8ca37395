import type { ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { DevBoxLogTail, type DevBoxLogLine } from "../devbox/local/log-tail.js";

/** How often the stream looks for new output and whether the run is over. */
const POLL_MS = 400;
/** Lines of a command already running sent when a page connects: the rest is on its way. */
const BACKLOG = 200;
/** A longer line is cut: one runaway line does not fill the page. */
const MAX_LINE = 4000;

/** What the stream needs besides the response. */
export interface LiveLogSource {
  /** Where the run's local DevBoxes keep their logs; undefined when they are not local. */
  stateDir: string | undefined;
  runId: string;
  /** Whether the run is over (or waits on people): the stream ends. */
  settled(): Promise<boolean>;
}

/**
 * The running command's output as server-sent events (`text/event-stream`): each new line of
 * the run's DevBox logs (masked by the DevBox agent as it writes them) is a `message` whose data
 * is `{"devbox", "line"}` JSON; `end` when the run is over; `unavailable` when its DevBoxes are
 * not local (ECS output goes to CloudWatch). The stream stops when the page goes away.
 */
export async function streamLiveLog(res: ServerResponse, source: LiveLogSource): Promise<void> {
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  });
  if (source.stateDir === undefined) {
    res.end(event("unavailable", { message: "This host's DevBoxes are not local." }));
    return;
  }
  let open = true;
  res.on("close", () => (open = false));
  const tail = new DevBoxLogTail(source.stateDir, source.runId);
  for (let first = true; open; first = false) {
    const lines = await tail.read();
    send(res, first ? lines.slice(-BACKLOG) : lines);
    if (await source.settled()) {
      send(res, tail.flush());
      res.end(event("end", {}));
      return;
    }
    await sleep(POLL_MS);
  }
}

function send(res: ServerResponse, lines: readonly DevBoxLogLine[]): void {
  if (lines.length === 0) return;
  res.write(
    lines
      .map(({ devbox, line }) => event("message", { devbox, line: line.slice(0, MAX_LINE) }))
      .join(""),
  );
}

function event(name: string, data: object): string {
  return `${name === "message" ? "" : `event: ${name}\n`}data: ${JSON.stringify(data)}\n\n`;
}
