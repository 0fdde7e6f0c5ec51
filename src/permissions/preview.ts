import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { structuredPatch } from "diff";
import { visibleControls } from "../security/terminal-text.ts";
import type { PermissionRequest } from "./policy.ts";

/** Colours for a terminal; all empty when colour is off (NO_COLOR, or not a terminal). */
export interface Palette {
  added: string;
  removed: string;
  hunk: string;
  dim: string;
  bold: string;
  reset: string;
}

export const NO_PALETTE: Palette = { added: "", removed: "", hunk: "", dim: "", bold: "", reset: "" };
export const ANSI_PALETTE: Palette = {
  added: "\x1b[32m",
  removed: "\x1b[31m",
  hunk: "\x1b[36m",
  dim: "\x1b[2m",
  bold: "\x1b[1m",
  reset: "\x1b[0m",
};

/** Colour unless NO_COLOR is set (any value, https://no-color.org) or the stream is no terminal. */
export function paletteFor(stream: { isTTY?: boolean }, env: Record<string, string | undefined> = process.env): Palette {
  return stream.isTTY === true && (env.NO_COLOR ?? "") === "" ? ANSI_PALETTE : NO_PALETTE;
}

/** How many lines of a diff a question shows; the rest is counted, not printed. */
export const SHOWN_DIFF_LINES = 40;
const SHOWN_TEXT_CHARS = 500;
const CONTEXT_LINES = 3;

/**
 * What a call will do, in the lines a person needs to decide: for
 * `write_file`/`edit_file` a unified diff against the file as it is now
 * (clipped, with a count of the hidden lines); for `shell` the command and the
 * directory it runs in; for an MCP tool (`mcp__server__tool`) the server, the
 * tool and the arguments; else the subject. Never throws: a file that cannot
 * be read is diffed as empty, and the diff says so.
 */
export function previewCall(request: PermissionRequest, palette: Palette = NO_PALETTE): string[] {
  const { tool, subject, input, workspace } = request;
  const args = (input ?? {}) as Record<string, unknown>;
  if ((tool === "write_file" || tool === "edit_file") && workspace !== undefined && typeof args.path === "string") {
    return fileDiff(tool, args, workspace, palette);
  }
  if (tool === "shell" && workspace !== undefined) {
    const background = args.run_in_background === true ? " (in the background)" : "";
    return [`command: ${clip(subject)}${background}`, `in: ${workspace}`];
  }
  const mcp = /^mcp__(.+?)__(.+)$/.exec(tool);
  if (mcp) return [`server: ${mcp[1]}`, `tool: ${mcp[2]}`, `arguments: ${clip(JSON.stringify(input ?? {}, null, 2))}`];
  return subject === "" ? [] : [clip(subject)];
}

function fileDiff(tool: string, args: Record<string, unknown>, workspace: string, palette: Palette): string[] {
  const path = args.path as string;
  let before = "";
  let note: string | undefined;
  try {
    before = readFileSync(resolve(workspace, path), "utf8");
  } catch (error) {
    note = (error as NodeJS.ErrnoException).code === "ENOENT" ? "(a new file)" : `(cannot read the file now: ${(error as Error).message})`;
  }
  let after: string;
  if (tool === "write_file") after = typeof args.content === "string" ? args.content : "";
  else {
    const from = typeof args.old_string === "string" ? args.old_string : "";
    const to = typeof args.new_string === "string" ? args.new_string : "";
    if (from !== "" && before.includes(from)) {
      // As the tool will do it: the first (only) occurrence, or every one with replace_all.
      after = args.replace_all === true ? before.split(from).join(to) : before.replace(from, () => to);
    } else {
      // The edit will fail on this file; show what it asked to change.
      note = "(old_string is not in the file now; the edit asks to replace:)";
      before = from;
      after = to;
    }
  }
  const patch = structuredPatch(path, path, before, after, "", "", { context: CONTEXT_LINES });
  // The path and the content are the model's: shown, not obeyed, inside the question's own colours.
  const lines: string[] = [`${palette.bold}${tool === "write_file" ? "write" : "edit"} ${visibleControls(path)}${palette.reset}${note ? ` ${note}` : ""}`];
  const body: string[] = [];
  for (const hunk of patch.hunks) {
    body.push(`${palette.hunk}@@ -${range(hunk.oldStart, hunk.oldLines)} +${range(hunk.newStart, hunk.newLines)} @@${palette.reset}`);
    for (const line of hunk.lines) {
      if (line.startsWith("\\")) continue; // "\ No newline at end of file"
      const colour = line.startsWith("+") ? palette.added : line.startsWith("-") ? palette.removed : "";
      const shown = visibleControls(line);
      body.push(colour === "" ? shown : `${colour}${shown}${palette.reset}`);
    }
  }
  if (body.length === 0) body.push("(no change to the file's content)");
  const hidden = body.length - SHOWN_DIFF_LINES;
  if (hidden > 0) {
    lines.push(...body.slice(0, SHOWN_DIFF_LINES), `${palette.dim}… ${hidden} more diff line${hidden === 1 ? "" : "s"} not shown${palette.reset}`);
  } else lines.push(...body);
  return lines;
}

/** A hunk's range as `diff -u` writes it: an empty side names the line before it (`-0,0` for a new file). */
function range(start: number, count: number): string {
  return `${count === 0 ? Math.max(0, start - 1) : start},${count}`;
}

function clip(text: string): string {
  const shown = visibleControls(text);
  return shown.length > SHOWN_TEXT_CHARS ? `${shown.slice(0, SHOWN_TEXT_CHARS)}…` : shown;
}
