// Function lengths in lines, measured on Deno's own TypeScript parser (the lint plugin API, which
// `deno test` exposes as `Deno.lint.runPlugin`), so strings, template literals and comments never
// confuse the count the way a brace counter would be.

/** One function of a module: its name as the code spells it, where it starts, and its length. */
export interface FunctionLength {
  /** `name`, `Class.method`, or `<anonymous>` for a callback without a name. */
  name: string;
  /** The first line (1-based). */
  line: number;
  /** Lines from its first to its last, both included. */
  lines: number;
}

type FunctionNode =
  | Deno.lint.FunctionDeclaration
  | Deno.lint.FunctionExpression
  | Deno.lint.ArrowFunctionExpression;

/** The name a function goes by: its own, the variable, property or method that holds it. */
function nameOf(node: FunctionNode): string {
  if ((node.type === "FunctionDeclaration" || node.type === "FunctionExpression") && node.id) {
    return node.id.name;
  }
  const parent: Deno.lint.Node = node.parent;
  if (parent.type === "VariableDeclarator" && parent.id.type === "Identifier") return parent.id.name;
  if (
    (parent.type === "Property" || parent.type === "MethodDefinition" ||
      parent.type === "PropertyDefinition") &&
    (parent.key.type === "Identifier" || parent.key.type === "PrivateIdentifier")
  ) {
    const owner = parent.parent.type === "ClassBody" && parent.parent.parent.id
      ? `${parent.parent.parent.id.name}.`
      : "";
    const key = parent.key.type === "PrivateIdentifier" ? `#${parent.key.name}` : parent.key.name;
    return `${owner}${key}`;
  }
  return "<anonymous>";
}

/** Every function of `source` (declarations, expressions, arrows, methods), longest first. */
export function functionLengths(path: string, source: string): FunctionLength[] {
  const starts: number[] = [0];
  for (let i = source.indexOf("\n"); i !== -1; i = source.indexOf("\n", i + 1)) starts.push(i + 1);
  const lineAt = (offset: number): number => {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (starts[mid]! <= offset) low = mid;
      else high = mid - 1;
    }
    return low + 1;
  };
  const found: FunctionLength[] = [];
  const record = (node: FunctionNode): void => {
    const [start, end] = node.range;
    const line = lineAt(start);
    found.push({ name: nameOf(node), line, lines: lineAt(end) - line + 1 });
  };
  const plugin: Deno.lint.Plugin = {
    name: "function-lengths",
    rules: {
      measure: {
        create: () => ({
          FunctionDeclaration: record,
          FunctionExpression: record,
          ArrowFunctionExpression: record,
        }),
      },
    },
  };
  Deno.lint.runPlugin(plugin, path, source);
  return found.sort((a, b) => b.lines - a.lines || a.line - b.line);
}
