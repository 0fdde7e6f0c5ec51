import type { ToolContext } from "../core/tool.ts";
import { type FileLedger, contentHash } from "../file-journal/file-ledger.ts";
import { FileChangedMeanwhileError, type FileWrite, type WorkspaceFiles } from "../workspace-files/workspace-files.ts";

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
): Promise<FileWrite> {
  const meta = { agent: context.identity, kind: "tool" as const, turn: context.idempotencyKey, tool, ...(context.callId ? { call: context.callId } : {}) };
  for (let attempt = 0; ; attempt += 1) {
    let after: Uint8Array | undefined;
    let afterHash: string | undefined;
    try {
      const result = await files.replace(context, path, mustExist, async (display, current) => {
        const beforeHash = await ledger.assertCurrent(context.identity, tool, display, current);
        after = make(display, current);
        afterHash = contentHash(after);
        await ledger.journal(meta, display, current, after, { ...(beforeHash ? { before: beforeHash } : {}), after: afterHash });
        return after;
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
