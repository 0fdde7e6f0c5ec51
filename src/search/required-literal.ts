/** Characters that stand for themselves after a backslash. */
const ESCAPED_LITERALS = new Set([..."\\^$.|?*+()[]{}/-=!<>:,'\"#%&~`@; "]);
/** Escapes whose meaning we do not take apart (hex, unicode, control, back-references, properties). */
const OPAQUE_ESCAPE = /\\[xucpPk0-9]/;

/**
 * The longest run of characters every match of the regular expression
 * `source` must contain, or undefined when none is known. A file without it
 * in its bytes cannot match, so the search skips decoding and scanning it.
 *
 * Conservative on purpose: only top-level characters count (not inside a
 * group or a class), a top-level `|` gives up, a character made optional by
 * `?`, `*` or `{…}` is dropped, and escapes it does not know end the run.
 */
export function requiredLiteral(source: string): string | undefined {
  if (OPAQUE_ESCAPE.test(source)) return undefined;
  let best = "";
  let run = "";
  let depth = 0;
  let inClass = false;
  const flush = () => {
    if (run.length > best.length) best = run;
    run = "";
  };
  for (let i = 0; i < source.length; i++) {
    const char = source[i]!;
    if (inClass) {
      if (char === "\\") i++;
      else if (char === "]") inClass = false;
      continue;
    }
    if (char === "\\") {
      const next = source[i + 1];
      i++;
      if (depth === 0 && next !== undefined && ESCAPED_LITERALS.has(next)) run += next;
      else flush();
      continue;
    }
    switch (char) {
      case "(":
        flush();
        depth++;
        break;
      case ")":
        flush();
        depth = Math.max(0, depth - 1);
        break;
      case "[":
        flush();
        inClass = true;
        break;
      case "|":
        if (depth === 0) return undefined;
        break;
      case "?":
      case "*":
        run = run.slice(0, -1);
        flush();
        break;
      case "{": {
        const close = source.indexOf("}", i);
        if (close !== -1 && /^\{\d+(,\d*)?\}$/.test(source.slice(i, close + 1))) {
          run = run.slice(0, -1);
          flush();
          i = close;
        } else if (depth === 0) {
          run += char;
        }
        break;
      }
      case "+":
      case ".":
      case "^":
      case "$":
        flush();
        break;
      default:
        if (depth === 0) run += char;
    }
  }
  flush();
  return best.length > 0 ? best : undefined;
}
