import { afterEach, expect, test } from "bun:test";
import { REDACTED, clearSecrets, registerSecret } from "../../src/security/redact.ts";
import { StreamRedactor } from "../../src/security/stream-redact.ts";

afterEach(() => clearSecrets());

/** Every piece pushed, then the end: what a reader joining the deltas sees, and each piece shown. */
function through(pieces: string[]): { joined: string; shown: string[] } {
  const stream = new StreamRedactor();
  const shown = [...pieces.map((piece) => stream.push(piece)), stream.end()];
  return { joined: shown.join(""), shown };
}

test("a key cut across pieces, at every cut, is masked in the joined stream", () => {
  const key = "sk-live-0123456789abcdef";
  registerSecret(key);
  const text = `before ${key} after`;
  for (let a = 1; a < text.length - 1; a += 1) {
    for (const b of [a + 1, a + 5, text.length - 1]) {
      if (b <= a || b >= text.length) continue;
      const { joined } = through([text.slice(0, a), text.slice(a, b), text.slice(b)]);
      expect(joined).toBe(`before ${REDACTED} after`);
    }
  }
});

test("only an end that could start a secret is held back, until what follows shows it is not one", () => {
  expect(through(["abc", "def"]).shown).toEqual(["abc", "def", ""]);
  registerSecret("0123456789");
  expect(through(["a".repeat(20), "b"]).shown).toEqual(["a".repeat(20), "b", ""]);
  expect(through(["x 0123", "45x", "y 012345678"]).shown).toEqual(["x ", "012345x", "y ", "012345678"]);
});
