import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { basename, relative as relativePath, sep } from "node:path";
import { isErrno } from "../storage/atomic-file.ts";
import { walkFiles } from "./file-walk.ts";
import { requiredLiteral } from "./required-literal.ts";

export const GREP_OUTPUT_MODES = ["content", "files_with_matches", "count"] as const;
export type GrepOutputMode = (typeof GREP_OUTPUT_MODES)[number];

/** Bytes looked at for a NUL, as git and GNU grep do to call a file binary. */
const BINARY_PROBE_BYTES = 8192;
/** Files larger than this are skipped (a log or a dump would hold the search up); the result says how many. */
export const MAX_GREP_FILE_BYTES = 32 * 1024 * 1024;
/** A matched line longer than this (minified code) is cut. */
export const MAX_LINE_CHARS = 400;

export interface GrepSearchOptions {
  /** A JavaScript regular expression, without slashes or flags. */
  pattern: string;
  caseInsensitive?: boolean;
  /** Real path of the workspace; output paths are relative to it. */
  workspace: string;
  /** Real path of the file or directory to search (inside the workspace, not protected). */
  start: string;
  /** Only files matching this glob: a pattern without "/" matches the file name, one with "/" the path below `start`. */
  glob?: string;
  mode: GrepOutputMode;
  /** Lines shown before and after each matching line (content mode). */
  context?: number;
  /** Output entries (lines in content mode, files otherwise) after which the search stops. */
  limit: number;
  protectedRoots: readonly string[];
  signal: AbortSignal;
  /** Larger files are skipped and listed in `skippedLarge`; default MAX_GREP_FILE_BYTES. */
  maxFileBytes?: number;
  /**
   * Opens a listed file for reading, or undefined to skip it; by default by its
   * path. The grep tool opens beneath the workspace descriptor, so a directory
   * swapped for a symlink after the listing is not read through.
   */
  openFile?: (absolute: string) => number | undefined;
  /** Maps a path relative to `workspace` to the one output (an `--add-dir` directory's are shown relative to the real workspace). */
  show?: (path: string) => string;
}

export interface GrepSearchResult {
  /** Output lines: `path:line:text` (context lines `path-line-text`, `--` between groups), `path`, or `path:count`. */
  entries: string[];
  /** True when the search stopped at `limit` with more to show. */
  truncated: boolean;
  filesSearched: number;
  filesMatched: number;
  /** Files skipped for being larger than `maxFileBytes`. */
  skippedLarge: string[];
}

/** Thrown for a pattern JavaScript cannot compile; the message says how to fix it. */
export class InvalidPatternError extends Error {}

function compile(pattern: string, flags: string): RegExp {
  try {
    return new RegExp(pattern, flags);
  } catch (error) {
    throw new InvalidPatternError(
      `pattern ${JSON.stringify(pattern)} is not a valid JavaScript regular expression (${(error as Error).message}); escape special characters such as ( [ { . * + ? with a backslash`,
    );
  }
}

/** How a file is tested before its lines are: cheap checks that can only say "cannot match". */
interface Matcher {
  /** Per line. */
  line: RegExp;
  /** The needle every match contains, searched in the raw bytes. */
  needle?: Buffer;
  /** Whole text with `m`, so ^ and $ still mean line ends; absent when that could miss a line match. */
  whole?: RegExp;
}

function matcherFor(pattern: string, caseInsensitive: boolean): Matcher {
  const flags = caseInsensitive ? "i" : "";
  const line = compile(pattern, flags);
  const literal = requiredLiteral(pattern);
  // A case-insensitive pattern only gets a byte needle when case cannot matter for it.
  const usable = literal !== undefined && (!caseInsensitive || literal.toLowerCase() === literal.toUpperCase());
  // Lookarounds can see past a line end in the whole text; those files go straight to the line test.
  const lookaround = /\(\?<?[=!]/.test(pattern);
  return {
    line,
    ...(usable ? { needle: Buffer.from(literal) } : {}),
    ...(lookaround ? {} : { whole: compile(pattern, `${flags}m`) }),
  };
}

function globFilter(glob: string | undefined, start: string): ((absolute: string) => boolean) | undefined {
  if (glob === undefined) return undefined;
  const matcher = new Bun.Glob(glob);
  if (!glob.includes("/")) return (absolute) => matcher.match(basename(absolute));
  return (absolute) => matcher.match(relativePath(start, absolute).split(sep).join("/"));
}

function cutLine(text: string): string {
  return text.length <= MAX_LINE_CHARS ? text : `${text.slice(0, MAX_LINE_CHARS)}… [line cut at ${MAX_LINE_CHARS} characters]`;
}

/** The 0-based indexes of the lines matching `regex`, at most `max` of them. */
function matchingLines(lines: string[], regex: RegExp, max: number): number[] {
  const found: number[] = [];
  for (let i = 0; i < lines.length && found.length < max; i++) if (regex.test(lines[i]!)) found.push(i);
  return found;
}

/** The content-mode output of one file: matches with their context, `--` between groups that do not touch. */
function contentEntries(path: string, lines: string[], hits: number[], context: number): string[] {
  const out: string[] = [];
  const hitSet = new Set(hits);
  let shownUpTo = -1;
  for (const hit of hits) {
    const from = Math.max(hit - context, shownUpTo + 1);
    if (context > 0 && out.length > 0 && from > shownUpTo + 1) out.push("--");
    const to = Math.min(hit + context, lines.length - 1);
    for (let i = from; i <= to; i++) out.push(`${path}${hitSet.has(i) ? ":" : "-"}${i + 1}${hitSet.has(i) ? ":" : "-"}${cutLine(lines[i]!)}`);
    shownUpTo = Math.max(shownUpTo, to);
  }
  return out;
}

/** Read buffer one search reuses for every file that fits, so most files cost no allocation. */
const SCRATCH_BYTES = 256 * 1024;

type FileBytes = { bytes: Buffer } | { tooLarge: true } | { binary: true } | undefined;

/** A NUL byte in the first 8 KiB is how git and GNU grep tell binary from text. */
function looksBinary(bytes: Buffer): boolean {
  return bytes.subarray(0, BINARY_PROBE_BYTES).includes(0);
}

function readFully(fd: number, into: Buffer): number {
  let filled = 0;
  while (filled < into.length) {
    const read = readSync(fd, into, filled, into.length - filled, null);
    if (read === 0) break;
    filled += read;
  }
  return filled;
}

/**
 * The file's bytes: a view of `scratch` (valid until the next read) when it
 * fits, else a buffer of its own; undefined when it is gone or unreadable
 * since the walk listed it (skipped, as `grep -s` would).
 */
function readFile(absolute: string, scratch: Buffer, maxBytes: number, openFile: GrepSearchOptions["openFile"]): FileBytes {
  let fd: number | undefined;
  try {
    fd = openFile ? openFile(absolute) : openSync(absolute, "r");
    if (fd === undefined) return undefined;
  } catch (error) {
    if (isErrno(error, "ENOENT") || isErrno(error, "EACCES") || isErrno(error, "EISDIR") || isErrno(error, "ELOOP")) return undefined;
    throw error;
  }
  try {
    const filled = readFully(fd, scratch);
    // A large binary (an executable, an archive) is skipped as binary, not reported as too large.
    if (looksBinary(scratch.subarray(0, filled))) return { binary: true };
    if (filled > maxBytes) return { tooLarge: true };
    if (filled < scratch.length) return { bytes: scratch.subarray(0, filled) };
    const size = fstatSync(fd).size;
    if (size > maxBytes) return { tooLarge: true };
    const whole = Buffer.allocUnsafe(Math.max(size, scratch.length));
    scratch.copy(whole);
    const rest = readFully(fd, whole.subarray(scratch.length));
    return { bytes: whole.subarray(0, scratch.length + rest) };
  } finally {
    closeSync(fd);
  }
}

/** The file's lines without their ends; a CRLF file's lines lose the "\r" too, so `foo$` matches them. */
function splitLines(text: string): string[] {
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1] === "") lines.pop();
  if (!text.includes("\r")) return lines;
  return lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
}

/**
 * Searches the files under `start` (or `start` itself, a file) for lines
 * matching `pattern`. Each file costs one read; a file is split into lines
 * only when its bytes contain the pattern's required literal and its whole
 * text matches, so the per-line work is spent on files that match.
 */
export async function grepSearch(options: GrepSearchOptions): Promise<GrepSearchResult> {
  const matcher = matcherFor(options.pattern, options.caseInsensitive ?? false);
  const context = options.context ?? 0;
  const result: GrepSearchResult = { entries: [], truncated: false, filesSearched: 0, filesMatched: 0, skippedLarge: [] };
  const single = statSync(options.start).isFile();
  const accept = single ? undefined : globFilter(options.glob, options.start);
  const files = single
    ? oneFile(options)
    : walkFiles({
        workspace: options.workspace,
        start: options.start,
        respectIgnore: true,
        includeHidden: true,
        protectedRoots: options.protectedRoots,
        signal: options.signal,
      });
  const scratch = Buffer.allocUnsafe(SCRATCH_BYTES);
  const maxFileBytes = options.maxFileBytes ?? MAX_GREP_FILE_BYTES;
  for await (const file of files) {
    if (accept && !accept(file.absolute)) continue;
    const read = readFile(file.absolute, scratch, maxFileBytes, options.openFile);
    if (read === undefined) continue;
    const path = options.show ? options.show(file.path) : file.path;
    if ("tooLarge" in read) {
      result.skippedLarge.push(path);
      continue;
    }
    result.filesSearched++;
    if ("binary" in read) continue;
    const bytes = read.bytes;
    if (matcher.needle && bytes.indexOf(matcher.needle) === -1) continue;
    const text = bytes.toString("utf8");
    if (matcher.whole && !matcher.whole.test(text)) continue;
    const lines = splitLines(text);
    const room = options.limit - result.entries.length;
    // One more hit than there is room for tells the caller the output was cut.
    const wanted = options.mode === "files_with_matches" ? 1 : options.mode === "count" ? Infinity : room + 1;
    const hits = matchingLines(lines, matcher.line, wanted);
    if (hits.length === 0) continue;
    if (room <= 0) {
      result.truncated = true;
      break;
    }
    result.filesMatched++;
    if (options.mode === "files_with_matches") result.entries.push(path);
    else if (options.mode === "count") result.entries.push(`${path}:${hits.length}`);
    else {
      const entries = contentEntries(path, lines, hits, context);
      const separated = context > 0 && result.entries.length > 0 ? ["--", ...entries] : entries;
      if (separated.length > room) {
        result.entries.push(...separated.slice(0, room));
        result.truncated = true;
        break;
      }
      result.entries.push(...separated);
    }
  }
  return result;
}

async function* oneFile(options: GrepSearchOptions) {
  yield { absolute: options.start, path: relativePath(options.workspace, options.start).split(sep).join("/") };
}
