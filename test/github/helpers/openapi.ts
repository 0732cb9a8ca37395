import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { Ajv, type ValidateFunction } from "ajv";

interface Operation {
  requestBody?: { content?: Record<string, unknown> };
}
interface Spec {
  paths: Record<string, Record<string, Operation>>;
}

const require = createRequire(import.meta.url);
let spec: Spec | undefined;
let ajv: Ajv | undefined;
const compiled = new Map<string, ValidateFunction | null>();
const templates: { method: string; template: string; pattern: RegExp }[] = [];

function load(): { spec: Spec; ajv: Ajv } {
  if (spec === undefined || ajv === undefined) {
    const path = require.resolve("@octokit/openapi/generated/api.github.com.json");
    spec = JSON.parse(readFileSync(path, "utf8")) as Spec;
    ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema(spec, "github");
    for (const [template, methods] of Object.entries(spec.paths)) {
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
      for (const method of Object.keys(methods)) templates.push({ method, template, pattern });
    }
    // Literal segments must win over parameters (e.g. /pulls/{n}/files vs /pulls/{n}/{x}).
    templates.sort(
      (a, b) =>
        b.template.replace(/\{[^}]+\}/g, "").length - a.template.replace(/\{[^}]+\}/g, "").length,
    );
  }
  return { spec, ajv };
}

function pointer(template: string, method: string): string {
  const escaped = template.replace(/~/g, "~0").replace(/\//g, "~1");
  return `github#/paths/${escaped}/${method}/requestBody/content/application~1json/schema`;
}

/**
 * Checks a request the app made against GitHub's OpenAPI description: the route must exist for
 * the method, and a JSON body must match the operation's request body schema. Returns the
 * problems (empty when the request is well-formed).
 */
export function checkRequest(method: string, path: string, body: unknown): string[] {
  const { spec: loaded, ajv: validator } = load();
  const lower = method.toLowerCase();
  const found = templates.find((t) => t.method === lower && t.pattern.test(path));
  if (found === undefined) return [`${method} ${path} is not an operation of GitHub's REST API`];
  const operation = loaded.paths[found.template]?.[lower];
  const hasBody = operation?.requestBody?.content?.["application/json"] !== undefined;
  if (!hasBody) return [];
  const key = `${lower} ${found.template}`;
  let validate = compiled.get(key);
  if (validate === undefined) {
    try {
      validate = validator.compile({ $ref: pointer(found.template, lower) });
    } catch {
      // A few schemas use OpenAPI 3.0 forms Ajv rejects (`nullable` without `type`): for
      // those, only the required top-level fields are checked.
      validate = null;
    }
    compiled.set(key, validate);
  }
  if (validate === null) return missingRequired(operation, body, `${method} ${found.template}`);
  if (validate(body ?? {})) return [];
  return (validate.errors ?? []).map(
    (error) =>
      `${method} ${found.template}: body${error.instancePath} ${error.message ?? "is invalid"}`,
  );
}

function missingRequired(operation: Operation | undefined, body: unknown, what: string): string[] {
  const schema = operation?.requestBody?.content?.["application/json"] as
    { schema?: { required?: string[] } } | undefined;
  const given = typeof body === "object" && body !== null ? Object.keys(body) : [];
  return (schema?.schema?.required ?? [])
    .filter((name) => !given.includes(name))
    .map((name) => `${what}: body must have required property '${name}'`);
}
