import { describe, expect, test } from "bun:test";
import { requiredLiteral } from "../../src/search/required-literal.ts";

describe("requiredLiteral", () => {
  test("takes the longest top-level run every match contains", () => {
    expect(requiredLiteral("class FileMailboxStore")).toBe("class FileMailboxStore");
    expect(requiredLiteral("class\\s+\\w+Store")).toBe("class");
    expect(requiredLiteral("foo\\.bar\\(")).toBe("foo.bar(");
    expect(requiredLiteral("[A-Z]{3}[0-9]{4}\\)")).toBe(")");
    expect(requiredLiteral("ab+cde")).toBe("cde");
    expect(requiredLiteral("^export (async )?function handler")).toBe("function handler");
    expect(requiredLiteral("colou?r_name")).toBe("r_name");
    expect(requiredLiteral("items{2,}x")).toBe("item");
  });

  test("gives up where a literal is not certain", () => {
    expect(requiredLiteral("foo|bar")).toBeUndefined();
    expect(requiredLiteral("\\x41BCD")).toBeUndefined();
    expect(requiredLiteral("(a)\\1")).toBeUndefined();
    expect(requiredLiteral("\\w+")).toBeUndefined();
    expect(requiredLiteral("(foo|bar)")).toBeUndefined();
    expect(requiredLiteral("a*")).toBeUndefined();
  });

  test("never misses a match: every string a pattern matches contains its literal", () => {
    const patterns = [
      "colou?r", "ab*c", "x{0,2}yz", "(?:foo)?bar", "[abc]def", "de\\.f", "a.b", "^start", "end$", "q+r",
      "(a|b)cd", "x\\s?y", "\\bword\\b", "a\\/b", "n{2}o", "p(?=q)", "(?<=r)s", "[\\]]t", "u\\-v", "w{x",
    ];
    const samples = [
      "color", "colour", "ac", "abbbc", "yz", "xxyz", "bar", "foobar", "adef", "de.f", "axb", "start here", "the end",
      "qqqr", "acd", "bcd", "xy", "x y", "a word!", "a/b", "nno", "pq", "rs", "]t", "u-v", "w{x",
    ];
    for (const pattern of patterns) {
      const literal = requiredLiteral(pattern);
      if (literal === undefined) continue;
      for (const sample of samples) {
        if (new RegExp(pattern).test(sample)) expect({ pattern, sample, contains: sample.includes(literal) }).toEqual({ pattern, sample, contains: true });
      }
    }
  });
});
