import { editFileTool } from "./edit-file.ts";
import { type GlobToolOptions, globTool } from "./glob.ts";
import { type GrepToolOptions, grepTool } from "./grep.ts";
import { type ReadFileToolOptions, readFileTool } from "./read-file.ts";
import { type ShellToolOptions, shellTool } from "./shell.ts";
import type { Tool } from "../core/tool.ts";
import { writeFileTool } from "./write-file.ts";

/** Options of the base tools; `shell` has the shape of config.json's `shell`, so `{ shell: config.shell }` works. */
export interface BaseToolOptions {
  shell?: ShellToolOptions;
  readFile?: ReadFileToolOptions;
  glob?: GlobToolOptions;
  grep?: GrepToolOptions;
}

/** The tools every agent has, in the order the model is told about them. */
export function baseTools(options: BaseToolOptions = {}): Tool[] {
  return [shellTool(options.shell), readFileTool(options.readFile), writeFileTool(), editFileTool(), globTool(options.glob), grepTool(options.grep)];
}
