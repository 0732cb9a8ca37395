import { z } from "zod";
import { SETTING_GROUPS } from "./schema.js";
import type { Reader, Setting } from "./setting.js";

const READER_NAMES: Record<Reader, string> = { app: "app", cli: "CLI", agent: "DevBox agent" };

const HEADER = `# Configuration

<!-- Generated from src/settings/ by \`npm run docs:config\`; a test fails when it is stale. -->

The app, the \`clustercode\` CLI and the DevBox agent read these environment variables once, at
start: a value that does not decode stops the process before it does anything, with a message
naming the variable and what it expects. An empty variable counts as unset. "Read by" says
which process reads it.
`;

/** docs/configuration.md: every setting by concern, as the schema describes it. */
export function renderConfigurationDocs(): string {
  const sections = SETTING_GROUPS.map(([, group]) =>
    [`## ${group.title}`, "", group.about, "", table(Object.values(group.settings))].join("\n"),
  );
  return `${[HEADER, ...sections].join("\n")}`;
}

function table(settings: readonly Setting[]): string {
  const rows = settings.map((setting) => [
    `\`${setting.name}\``,
    setting.secret === true ? `${setting.expects} (secret)` : setting.expects,
    defaultOf(setting),
    setting.readers.map((reader) => READER_NAMES[reader]).join(", "),
    setting.description,
  ]);
  return alignedTable(["Variable", "Value", "Default", "Read by", "Meaning"], rows);
}

function defaultOf(setting: Setting): string {
  if (setting.default !== undefined) return setting.default;
  if (!(setting.schema instanceof z.ZodDefault)) return "unset";
  const value: unknown = setting.schema.def.defaultValue;
  if (Array.isArray(value)) return value.length === 0 ? "none" : `\`${value.join(",")}\``;
  return `\`${String(value)}\``;
}

/** A Markdown table padded as Prettier pads it, so that `prettier --check` leaves it be. */
function alignedTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const cells = [header, ...rows].map((row) => row.map((cell) => cell.replaceAll("|", "\\|")));
  const widths = header.map((_, column) =>
    Math.max(3, ...cells.map((row) => [...(row[column] ?? "")].length)),
  );
  const line = (row: readonly string[]) =>
    `| ${row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(" | ")} |`;
  const [head = [], ...body] = cells;
  const rule = `| ${widths.map((width) => "-".repeat(width)).join(" | ")} |`;
  return [line(head), rule, ...body.map(line), ""].join("\n");
}
