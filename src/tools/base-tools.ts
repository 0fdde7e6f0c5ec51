import type { FileLedger } from "../file-journal/file-ledger.ts";
import type { OwnershipCheck } from "./checked-write.ts";
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
  /** The session's file versions and journal (docs/files.md); without one, writes are not checked or journaled. */
  ledger?: FileLedger;
  /** Asks before a write to a path a teammate owns. */
  ownership?: OwnershipCheck;
}

/** The tools every agent has, in the order the model is told about them. */
export function baseTools(options: BaseToolOptions = {}): Tool[] {
  const { ledger } = options;
  const guards = { ...(ledger ? { ledger } : {}), ...(options.ownership ? { ownership: options.ownership } : {}) };
  return [
    shellTool(ledger ? { ...options.shell, ledger } : options.shell),
    readFileTool({ ...options.readFile, ...(ledger ? { ledger } : {}) }),
    writeFileTool(undefined, guards),
    editFileTool(undefined, guards),
    globTool(options.glob),
    grepTool(options.grep),
  ];
}
