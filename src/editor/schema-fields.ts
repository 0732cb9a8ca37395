/** How the side panel edits one field. */
export type Control = "text" | "textarea" | "select" | "boolean" | "number" | "yaml";

/** One field the side panel shows, with the schema's description and choices. */
export interface FieldSpec {
  key: string;
  control: Control;
  description: string;
  required: boolean;
  options?: string[];
}

/** The parts of a JSON Schema the panel reads. */
interface SchemaNode {
  type?: string;
  enum?: unknown[];
  description?: string;
  properties?: Record<string, SchemaNode>;
  required?: string[];
  items?: SchemaNode;
  additionalProperties?: SchemaNode;
  allOf?: { if?: { properties?: { kind?: { const?: string } } }; then?: SchemaNode }[];
}

/** Long text is edited in a text area. */
const PROSE = new Set(["prompt", "goal", "brief", "run", "question", "message"]);

/**
 * The fields of a workflow's parts as the generated JSON Schema describes them: a node of one
 * kind (from the schema's `if kind … then` branches), an edge, or the workflow's top level.
 */
export class SchemaFields {
  readonly #root: SchemaNode;

  constructor(schema: unknown) {
    this.#root = schema as SchemaNode;
  }

  /** The fields of a node of `kind` (not `kind` itself), required ones first. */
  node(kind: string): FieldSpec[] {
    const branches = this.#root.properties?.nodes?.additionalProperties?.allOf ?? [];
    const then = branches.find((branch) => branch.if?.properties?.kind?.const === kind)?.then;
    return fieldsOf(then, ["kind"]);
  }

  /** The fields of an edge. */
  edge(): FieldSpec[] {
    return fieldsOf(this.#root.properties?.edges?.items, ["from", "to"]);
  }

  /** The workflow's own fields (not its nodes and edges). */
  workflow(): FieldSpec[] {
    return fieldsOf(this.#root, ["version", "nodes", "edges"]);
  }

  /** The node kinds' descriptions, for the kind picker. */
  kindDescription(): string {
    const kind = this.#root.properties?.nodes?.additionalProperties?.properties?.kind;
    return kind?.description ?? "";
  }
}

function fieldsOf(schema: SchemaNode | undefined, skip: string[]): FieldSpec[] {
  const required = new Set(schema?.required ?? []);
  const fields = Object.entries(schema?.properties ?? {})
    .filter(([key]) => !skip.includes(key))
    .map(([key, property]): FieldSpec => {
      const options = property.enum?.map(String);
      return {
        key,
        control: controlOf(key, property),
        description: property.description ?? "",
        required: required.has(key),
        ...(options === undefined ? {} : { options }),
      };
    });
  return [...fields.filter((f) => f.required), ...fields.filter((f) => !f.required)];
}

function controlOf(key: string, property: SchemaNode): Control {
  if (property.enum !== undefined) return "select";
  if (property.type === "boolean") return "boolean";
  if (property.type === "integer" || property.type === "number") return "number";
  if (property.type === "string") return PROSE.has(key) ? "textarea" : "text";
  return "yaml";
}
