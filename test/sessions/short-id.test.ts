import { expect, test } from "bun:test";
import { idMatches, shortIds } from "../../src/sessions/short-id.ts";

// Ids as UUIDv7 makes them within one minute: the time part alike, the tails random.
const A = "019ad2f1-0c3e-7a11-8f00-12345678abcd";
const B = "019ad2f1-0d55-7b22-9f11-ffffffffabcd";
const C = "019ad2f1-0e70-7c33-af22-0000deadbeef";

test("the last 8 digits, longer only as far as another id shares them", () => {
  expect(shortIds([A, C])).toEqual(new Map([[A, "5678abcd"], [C, "deadbeef"]]));
  // A and B share their last 4 digits only: 8 still tell them apart.
  expect(shortIds([A, B]).get(A)).toBe("5678abcd");
  const twin = "019ad2f1-0f00-7d44-bf33-02345678abcd";
  expect(shortIds([A, twin])).toEqual(new Map([[A, "12345678abcd"], [twin, "02345678abcd"]]));
  // The whole last group shared: the full id.
  const clash = "019ad2f2-0000-7000-8000-12345678abcd";
  expect(shortIds([A, clash]).get(A)).toBe(A);
});

test("a ref names an id as a prefix, or as a tail of 8 to 12 hex digits", () => {
  expect(idMatches(A, "019ad2f1")).toBe(true);
  expect(idMatches(A, "5678abcd")).toBe(true);
  expect(idMatches(A, "12345678abcd")).toBe(true);
  // A tail shorter than 8, or with the dash, is no short id.
  expect(idMatches(A, "abcd")).toBe(false);
  expect(idMatches(A, "8f00-12345678abcd")).toBe(false);
  expect(idMatches(A, "ffffffff")).toBe(false);
});
