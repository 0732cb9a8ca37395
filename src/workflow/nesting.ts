import { Parser, type CST } from "yaml";

/** Deepest nesting of collections (mappings and sequences) a workflow file may have. */
export const MAX_NESTING = 64;

/**
 * The offset of the first collection nested deeper than `limit`, read from yaml's syntax tree
 * before the document is composed: composing recurses once per level, so ten thousand `[`
 * overflow the stack. The tree is walked with an explicit stack, in bounded memory.
 */
export function tooDeepAt(text: string, limit = MAX_NESTING): number | undefined {
  const pending: [CST.Token, number][] = [];
  for (const token of new Parser().parse(text)) pending.push([token, 0]);
  let found: number | undefined;
  while (pending.length > 0) {
    const [token, outer] = pending.pop() as [CST.Token, number];
    const depth = isCollection(token) ? outer + 1 : outer;
    if (depth > limit) {
      found = Math.min(found ?? token.offset, token.offset);
      continue;
    }
    for (const child of childrenOf(token)) pending.push([child, depth]);
  }
  return found;
}

function isCollection(token: CST.Token): boolean {
  return (
    token.type === "block-map" || token.type === "block-seq" || token.type === "flow-collection"
  );
}

function childrenOf(token: CST.Token): CST.Token[] {
  const children: (CST.Token | null | undefined)[] = [];
  if (token.type === "document") children.push(token.value);
  if (isCollection(token) && "items" in token) {
    for (const item of token.items as CST.CollectionItem[]) children.push(item.key, item.value);
  }
  return children.filter((child): child is CST.Token => child !== null && child !== undefined);
}
