/**
 * The one filter between text nobody here wrote — a model's answer, a tool's
 * output or arguments, a file name, a mailbox message, a history — and a
 * terminal. A terminal obeys what it is sent: OSC 52 writes the clipboard,
 * OSC 0 sets the window title, CSI sequences move the cursor or clear the
 * screen, DCS talks to the terminal itself, a lone carriage return lets a line
 * be printed over. Such text is shown, never obeyed.
 */

/** C0 controls but tab and newline, DEL, the C1 range, and the bidirectional overrides that reorder a line on screen. */
const CONTROLS = /\r\n|[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * How one control character reads on screen: caret notation for C0 and DEL
 * (ESC as `^[`, BEL as `^G`, a lone CR as `^M`), the code point for the rest
 * (C1 CSI as `<U+009B>`). A CRLF is a line break, as in the text it ended.
 */
function shown(control: string): string {
  if (control === "\r\n") return "\n";
  const code = control.charCodeAt(0);
  if (code < 0x20) return `^${String.fromCharCode(code + 0x40)}`;
  if (code === 0x7f) return "^?";
  return `<U+${code.toString(16).toUpperCase().padStart(4, "0")}>`;
}

/** Whether `text` holds a character a terminal would obey (or a CRLF): only such text needs a filter, or the question whether the output is a terminal. */
export function hasControls(text: string): boolean {
  CONTROLS.lastIndex = 0;
  const found = CONTROLS.test(text);
  CONTROLS.lastIndex = 0;
  return found;
}

/** `text` with every control character made visible; tabs and line breaks kept. */
export function visibleControls(text: string): string {
  return text.replace(CONTROLS, shown);
}

/**
 * What the renderer itself sends and the last gate lets through: SGR (colour and
 * style), OSC 8 hyperlinks ended by ST or BEL, the redraw of the screen's own
 * bottom lines (cursor up, erase below, back to the row's start) and a question's
 * erase of the character before the cursor (backspace, space, backspace).
 */
const OWN_SEQUENCES = /\x1b\[[0-9;:]*m|\x1b\]8;[^\x00-\x1f\x7f-\x9f]*;[^\x00-\x1f\x7f-\x9f]*(?:\x1b\\|\x07)|\x1b\[[0-9]*A|\x1b\[0?J|\r\n?|\x08 \x08/g;

/**
 * The last gate before bytes reach a terminal: the renderer's own sequences
 * (see OWN_SEQUENCES) pass, every other control character is made visible.
 * Text from outside is made visible where it comes in (visibleControls), so
 * even an SGR of a model's never reaches this gate whole; the gate is what
 * holds when a writer forgets.
 */
export function terminalSafe(text: string): string {
  let out = "";
  let from = 0;
  for (const own of text.matchAll(OWN_SEQUENCES)) {
    out += visibleControls(text.slice(from, own.index)) + own[0];
    from = own.index + own[0].length;
  }
  return from === 0 ? visibleControls(text) : out + visibleControls(text.slice(from));
}

/** Text kept to one line on a terminal (a session's first prompt in a table): line breaks as ⏎, other controls visible. */
export function oneLineVisible(text: string): string {
  return visibleControls(text.replace(/\r?\n/g, "⏎"));
}
