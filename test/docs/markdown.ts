import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

// Just enough Markdown for the documentation tests: headings and links outside
// code fences, sections, and GitHub's heading anchors.

export const REPO_ROOT = join(import.meta.dir, "..", "..");
export const DOCS_DIR = join(REPO_ROOT, "docs");

export interface Heading {
  level: number;
  text: string;
  /** Index of the heading line. */
  line: number;
}

export interface Doc {
  /** Relative to the repository root: `README.md`, `docs/commands.md`. */
  path: string;
  text: string;
  lines: string[];
  headings: Heading[];
}

export function readDoc(path: string): Doc {
  const text = readFileSync(join(REPO_ROOT, path), "utf8");
  const lines = text.split("\n");
  const headings: Heading[] = [];
  outsideFences(lines, (line, index) => {
    const match = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (match) headings.push({ level: match[1]!.length, text: match[2]!, line: index });
  });
  return { path, text, lines, headings };
}

/** README.md and every docs/*.md. */
export function allDocs(): Doc[] {
  const docs = readdirSync(DOCS_DIR)
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => readDoc(`docs/${name}`));
  return [readDoc("README.md"), ...docs];
}

function outsideFences(lines: readonly string[], visit: (line: string, index: number) => void): void {
  let fence: string | undefined;
  lines.forEach((line, index) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker !== undefined) {
      if (fence === undefined) fence = marker;
      else if (marker.startsWith(fence)) fence = undefined;
      return;
    }
    if (fence === undefined) visit(line, index);
  });
}

/** The heading's text and everything under it up to the next heading of the same or a higher level. */
export function sectionText(doc: Doc, heading: Heading): string {
  const next = doc.headings.find((h) => h.line > heading.line && h.level <= heading.level);
  return doc.lines.slice(heading.line, next?.line ?? doc.lines.length).join("\n");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(headingText: string): string {
  return headingText
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** Every anchor a document defines, with GitHub's `-1`, `-2` suffixes for repeats. */
export function anchorsOf(doc: Doc): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const heading of doc.headings) {
    const base = anchorOf(heading.text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

export interface Link {
  target: string;
  line: number;
}

/** Inline links `[text](target)` outside code fences and code spans. */
export function linksOf(doc: Doc): Link[] {
  const links: Link[] = [];
  outsideFences(doc.lines, (line, index) => {
    const prose = line.replace(/`[^`]*`/g, "");
    for (const match of prose.matchAll(/\]\(([^)\s]+)\)/g)) links.push({ target: match[1]!, line: index });
  });
  return links;
}
