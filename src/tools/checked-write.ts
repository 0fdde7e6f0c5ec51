import { normalize, relative, resolve } from "node:path";
import { AgentError } from "../core/errors.ts";
import type { ToolContext } from "../core/tool.ts";
import { type FileLedger, contentHash } from "../file-journal/file-ledger.ts";
import { FileChangedMeanwhileError, type FileWrite, type WorkspaceFiles } from "../workspace-files/workspace-files.ts";

/**
 * Asks whether `agent` may write `path` (relative to the workspace) when
 * another teammate owns it; throws OwnedPathError when the Lead's side says no.
 */
export type OwnershipCheck = (request: { agent: string; path: string; tool: string; input: unknown; signal: AbortSignal }) => Promise<void>;

/** What write_file and edit_file are given in a shared workspace. */
export interface WriteGuards {
  ledger?: FileLedger;
  ownership?: OwnershipCheck;
}

/**
 * How write_file and edit_file change a file when the session keeps a ledger:
 * refused unless the agent has seen the current content (a new file excepted),
 * journaled before the write, and remembered as the agent's version after.
 * `make` turns the current bytes (undefined: no file) into the new ones.
 */
export async function checkedWrite(
  files: WorkspaceFiles,
  ledger: FileLedger,
  context: ToolContext,
  tool: string,
  path: string,
  mustExist: boolean,
  make: (display: string, current: Buffer | undefined) => Uint8Array,
  ownership?: { check: OwnershipCheck; input: unknown },
): Promise<FileWrite> {
  // Asked before the file is opened: the answer may take a person's time.
  if (ownership) {
    const rel = normalize(relative(context.workspace, resolve(context.workspace, path)));
    await ownership.check({ agent: context.identity, path: rel, tool, input: ownership.input, signal: context.signal });
  }
  const meta = { agent: context.identity, kind: "tool" as const, turn: context.idempotencyKey, tool, ...(context.callId ? { call: context.callId } : {}) };
  for (let attempt = 0; ; attempt += 1) {
    let after: Uint8Array | undefined;
    let afterHash: string | undefined;
    try {
      const result = await files.replace(context, path, mustExist, async (display, current) => {
        const beforeHash = await ledger.assertCurrent(context.identity, tool, display, current);
        after = make(display, current);
        afterHash = contentHash(after);
        // Durable before the file is replaced; the write syncs its temp file meanwhile.
        const ready = ledger.journal(meta, display, current, after, { ...(beforeHash ? { before: beforeHash } : {}), after: afterHash });
        return { data: after, ready };
      });
      await ledger.saw(context.identity, result.display, after!, result.stat, afterHash);
      return result;
    } catch (error) {
      // Replaced under us while journaling: once more, which now sees the change and says whose it was.
      if (error instanceof FileChangedMeanwhileError && attempt === 0) continue;
      throw error;
    }
  }
}

/** A write to a path another teammate owns, which the Lead's side did not allow. */
export class OwnedPathError extends AgentError {
  readonly code = "OWNED_PATH";
  readonly category = "usage" as const;
  constructor(tool: string, path: string, owner: string, pattern: string, reason: string | undefined) {
    super(
      `${tool} refused: ${path} is owned by ${owner} (owns ${pattern}) and the Lead's side did not allow this write` +
        `${reason ? ` (${reason})` : ""}; send_message ${owner} the change you need instead`,
    );
  }
}
