import { dirname, isAbsolute, relative, resolve, sep } from "node:path";
import type { ToolContext } from "../core/tool.ts";
import { dirsDownTo, readInstructionsIn } from "./project-instructions.ts";
import { instructionsBlock } from "./prompt-context.ts";

/**
 * The AGENTS.md (else CLAUDE.md) of directories below where the user started,
 * given to an agent the first time it reads a file under them: added after
 * that `read_file` result, once per agent and directory in a process. The
 * directories of the system prompt's chain are never given again.
 */
export class NestedInstructions {
  readonly #given: ReadonlySet<string>;
  /** Per agent, the directories already looked at (found or not). */
  readonly #seen = new Map<string, Set<string>>();

  /** `startDir`: where the user is; the root down to it is in every system prompt already. */
  constructor(startDir: string) {
    this.#given = new Set(dirsDownTo(startDir));
  }

  /** The text to add after a tool's result, or undefined. */
  after(tool: string, input: unknown, context: ToolContext): string | undefined {
    if (tool !== "read_file") return undefined;
    const path = (input as { path?: unknown }).path;
    if (typeof path !== "string") return undefined;
    const dir = relative(context.workspace, dirname(resolve(context.workspace, path)));
    if (dir === ".." || dir.startsWith(`..${sep}`) || isAbsolute(dir)) return undefined;
    let seen = this.#seen.get(context.identity);
    if (seen === undefined) this.#seen.set(context.identity, (seen = new Set()));
    const blocks: string[] = [];
    for (const candidate of dirsDownTo(dir.split(sep).join("/"))) {
      if (this.#given.has(candidate) || seen.has(candidate)) continue;
      seen.add(candidate);
      const found = readInstructionsIn(context.workspace, candidate);
      if (found) blocks.push(instructionsBlock(found));
    }
    if (blocks.length === 0) return undefined;
    return `[Instructions for the directory of this file, loaded as you first read a file there: follow them for files under it]\n${blocks.join("\n")}`;
  }
}
