import type { Node } from "mvdan-sh";

type Syntax = (typeof import("mvdan-sh"))["syntax"];
let loaded: Syntax | undefined;

/**
 * mvdan-sh, loaded on the first command line parsed: evaluating its GopherJS
 * build took 27–35 ms of every start, before the first model request, in runs
 * whose first shell call (if any) comes a model answer later.
 */
function shellSyntax(): Syntax {
  loaded ??= (require("mvdan-sh") as typeof import("mvdan-sh")).syntax;
  return loaded;
}

/** One word of a command: its value when it is a plain literal, else (an expansion) undefined. */
export interface ShellWord {
  /** The word as written in the source. */
  source: string;
  /** The value after quote removal, when the word has no expansion in it. */
  literal: string | undefined;
}

/** A simple command as written: `NAME=v cmd args` (assignments kept apart). */
export interface RawCommand {
  assignments: string[];
  words: ShellWord[];
  source: string;
  /** `export`/`local`/`declare`… (bash parses them apart from plain commands). */
  declaration?: boolean;
}

/** An output redirection: the path it writes (undefined when the path is an expansion), or a descriptor. */
export interface RawRedirect {
  op: string;
  target: ShellWord;
}

export type RawParse =
  | { ok: true; commands: RawCommand[]; redirects: RawRedirect[] }
  | { ok: false; error: string };

const OPERATOR = /^(?:&>>|&>|>>|>\||>&|<<<|<<-|<<|<>|<&|>|<)/;

/**
 * Parses a command line as bash does (mvdan-sh) and lists every simple command
 * in it — across `;`, `&&`, `||`, `|`, `&`, newlines, subshells, `$( )`,
 * backticks, process substitution, functions and compound commands — and every
 * redirection. A line that does not parse is reported, never guessed at.
 */
export function parseShell(line: string): RawParse {
  let file: Node;
  try {
    file = shellSyntax().NewParser().Parse(line, "");
  } catch (error) {
    const message = typeof (error as { Error?: unknown })?.Error === "function" ? (error as { Error(): string }).Error() : String(error);
    return { ok: false, error: message };
  }
  const bytes = Buffer.from(line, "utf8");
  // mvdan-sh's offsets count UTF-8 bytes.
  const text = (node: Node) => bytes.subarray(node.Pos().Offset(), node.End().Offset()).toString("utf8");
  const commands: RawCommand[] = [];
  const redirects: RawRedirect[] = [];
  const syntax = shellSyntax();
  syntax.Walk(file, (node) => {
    if (!node) return true;
    const type = syntax.NodeType(node);
    if (type === "CallExpr") {
      const assignments = (node.Assigns as Node[]).map(text);
      const words = (node.Args as Node[]).map((word) => toWord(word, text));
      if (words.length > 0 || assignments.length > 0) commands.push({ assignments, words, source: text(node) });
    } else if (type === "DeclClause") {
      const variant = node.Variant ? text(node.Variant) : "declare";
      const args = (node.Args as Node[]).map((assign) => ({ source: text(assign), literal: undefined }));
      commands.push({ assignments: [], words: [{ source: variant, literal: variant }, ...args], source: text(node), declaration: true });
    } else if (type === "Redirect") {
      const at = node.OpPos.Offset();
      const op = OPERATOR.exec(bytes.subarray(at, at + 3).toString("latin1"))?.[0] ?? "?";
      if (node.Word) redirects.push({ op, target: toWord(node.Word, text) });
    }
    return true;
  });
  return { ok: true, commands, redirects };
}

function toWord(word: Node, text: (node: Node) => string): ShellWord {
  return { source: text(word), literal: literalOf(word) };
}

/**
 * The value of a word with only literal parts (quotes removed, escapes
 * applied), else undefined. Unquoted glob patterns (`tou?h`, `*.env`,
 * `a[bc]`) and brace expansions (`{-c,x}`, `{1..3}`) are expansions too: the
 * shell turns them into other words, so their text is not what runs.
 */
function literalOf(word: Node): string | undefined {
  let value = "";
  // The word with every quoted or escaped character blanked: where the shell could still expand.
  let bare = "";
  const syntax = shellSyntax();
  for (const part of word.Parts as Node[]) {
    const type = syntax.NodeType(part);
    if (type === "Lit") {
      const raw = part.Value as string;
      value += unescapeBare(raw);
      bare += raw.replace(/\\./gs, "__");
    } else if (type === "SglQuoted") {
      const text = part.Dollar ? unescapeAnsiC(part.Value as string) : (part.Value as string);
      if (text === undefined) return undefined;
      value += text;
      bare += "_".repeat(text.length);
    } else if (type === "DblQuoted" && !part.Dollar) {
      for (const inner of part.Parts as Node[]) {
        if (syntax.NodeType(inner) !== "Lit") return undefined;
        value += unescapeDouble(inner.Value as string);
      }
      bare += "_";
    } else return undefined;
  }
  if (/[*?]|\[[^\]]+\]|\{[^{}]*(?:,|\.\.)[^{}]*\}/.test(bare)) return undefined;
  return value;
}

/** `$'…'` (ANSI-C quoting): the common escapes; undefined for one this does not decode. */
function unescapeAnsiC(raw: string): string | undefined {
  const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"', a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", v: "\v", "?": "?" };
  let failed = false;
  const text = raw.replace(/\\(x[0-9A-Fa-f]{1,2}|[0-7]{1,3}|.)/gs, (_match, escape: string) => {
    if (escape.startsWith("x")) return String.fromCharCode(Number.parseInt(escape.slice(1), 16));
    if (/^[0-7]/.test(escape)) return String.fromCharCode(Number.parseInt(escape, 8));
    const known = simple[escape];
    if (known === undefined) failed = true;
    return known ?? "";
  });
  return failed ? undefined : text;
}

/** Outside quotes a backslash keeps the next character; backslash-newline is removed. */
function unescapeBare(raw: string): string {
  return raw.replace(/\\\n/g, "").replace(/\\(.)/gs, "$1");
}

/** Inside double quotes a backslash only escapes `$`, `` ` ``, `"`, `\` and a newline. */
function unescapeDouble(raw: string): string {
  return raw.replace(/\\\n/g, "").replace(/\\([$`"\\])/g, "$1");
}
