import { expect, test } from "bun:test";
import { Screen } from "../../src/cli/terminal/screen.ts";
import { oneLineVisible, terminalSafe, visibleControls } from "../../src/security/terminal-text.ts";
import { seededRandom } from "../support/seeded-random.ts";

test("every control character is shown: C0 in caret notation, DEL, C1 and bidi overrides by code point", () => {
  expect(visibleControls("a\x1b]52;c;eA==\x07b")).toBe("a^[]52;c;eA==^Gb");
  expect(visibleControls("\x1b[2J\x1b[H\x1bP1$r\x1b\\")).toBe("^[[2J^[[H^[P1$r^[\\");
  expect(visibleControls("\x00\x08\x7f")).toBe("^@^H^?");
  expect(visibleControls("\x9b31m\x9d0;t\x9c")).toBe("<U+009B>31m<U+009D>0;t<U+009C>");
  expect(visibleControls("\u202eabc\u2066d\u2069")).toBe("<U+202E>abc<U+2066>d<U+2069>");
  // A lone carriage return would let a line be printed over; a CRLF is a line break.
  expect(visibleControls("shown\rhidden\r\nnext")).toBe("shown^Mhidden\nnext");
});

test("tabs, newlines and ordinary text (wide and combining characters too) pass unchanged", () => {
  const text = "col\tcol\nnext line — ünïcødé 漢字 👍🏽 e\u0301";
  expect(visibleControls(text)).toBe(text);
  expect(terminalSafe(text)).toBe(text);
});

test("the last gate lets the renderer's own SGR, OSC 8 and redraws through, nothing else", () => {
  const own = "\x1b[1m\x1b[4mPlan\x1b[0m \x1b]8;;https://example.com/a\x1b\\link\x1b]8;;\x1b\\ \x1b[3A\r\x1b[J";
  expect(terminalSafe(own)).toBe(own);
  expect(terminalSafe("\x1b[2m\x1b]0;title\x07x\x1b[0m")).toBe("\x1b[2m^[]0;title^Gx\x1b[0m");
  // An OSC 8 whose URL smuggles a control, and an SGR cut short, are not links or colours.
  expect(terminalSafe("\x1b]8;;http://a\x1b[2Jb\x1b\\x")).toBe("^[]8;;http://a^[[2Jb^[\\x");
  expect(terminalSafe("\x1b[31")).toBe("^[[31");
  expect(terminalSafe("ab\x08 \x08c\x08d")).toBe("ab\x08 \x08c^Hd");
});

test("made visible twice is made visible once; no output holds a control the gate would not pass", () => {
  const random = seededRandom(43);
  const alphabet = ["\x1b", "[", "]", "8", ";", "m", "A", "J", "\x07", "\\", "\r", "\n", "\t", "\x08", " ", "\x9b", "\u202e", "a", "0", "2"];
  for (let i = 0; i < 2000; i += 1) {
    const text = Array.from({ length: 1 + Math.floor(random() * 30) }, () => alphabet[Math.floor(random() * alphabet.length)]).join("");
    const visible = visibleControls(text);
    expect(visibleControls(visible)).toBe(visible);
    expect(terminalSafe(visible)).toBe(visible);
    expect(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/.test(visible)).toBe(false);
    const gated = terminalSafe(text);
    expect(terminalSafe(gated)).toBe(gated);
  }
});

test("one row: line breaks as ⏎, other controls shown", () => {
  expect(oneLineVisible("first\r\nsecond\n\x1b[2J")).toBe("first⏎second⏎^[[2J");
});

test("the screen's last gate: a writer that forgot gets its text shown on the terminal, passed as it is elsewhere", () => {
  const out: { text: string; channel: string }[] = [];
  const screen = new Screen((text, channel) => out.push({ text, channel }), { columns: () => 80, channels: ["err"] });
  screen.message("\x1b]52;c;eA==\x07 on the terminal", "err");
  screen.message("\x1b]52;c;eA==\x07 piped", "out");
  expect(out).toEqual([
    { text: "^[]52;c;eA==^G on the terminal\n", channel: "err" },
    { text: "\x1b]52;c;eA==\x07 piped\n", channel: "out" },
  ]);
});
